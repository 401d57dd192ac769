package ckan

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestParseDataFollowsCKANRules(t *testing.T) {
	cases := []struct {
		name string
		req  Request
		sef  bool
		want string
	}{
		{"curl -d JSON as form field name", Request{Method: "POST", ContentType: "application/x-www-form-urlencoded", Body: []byte(`{"id":"x"}`)}, false, `{"id":"x"}`},
		{"form fields", Request{Method: "POST", ContentType: "application/x-www-form-urlencoded", Body: []byte(`a=1&b=2&b=3`)}, false, `{"a":"1","b":["2","3"]}`},
		{"query on GET", Request{Method: "GET", Query: "id=x&rows=5"}, true, `{"id":"x","rows":"5"}`},
		{"query wins over JSON body for side-effect-free", Request{Method: "POST", ContentType: "application/json", Query: "id=q", Body: []byte(`{"id":"b"}`)}, true, `{"id":"q"}`},
		{"JSON body", Request{Method: "POST", ContentType: "application/json", Body: []byte(`{"n":5}`)}, false, `{"n":5}`},
		{"empty", Request{Method: "POST", ContentType: "application/json"}, false, `{}`},
	}
	for _, c := range cases {
		got, err := ParseData(c.req, c.sef)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		b, _ := json.Marshal(got)
		if string(b) != c.want {
			t.Errorf("%s: got %s want %s", c.name, b, c.want)
		}
	}
}

func TestBadBodiesGiveCKANBareStrings(t *testing.T) {
	_, err := ParseData(Request{Method: "POST", ContentType: "application/json", Body: []byte(`[1, 2]`)}, false)
	r := Failure("http://x", "package_show", err)
	if r.Status != 400 || string(r.Body) != `"Bad request - JSON Error: Request data JSON decoded to [1, 2] but it needs to be a dictionary."` {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	_, err = ParseData(Request{Method: "POST", ContentType: "application/json", Body: []byte(`{bad`)}, false)
	r = Failure("http://x", "package_show", err)
	if r.Status != 400 || string(r.Body) != `"Bad request - JSON Error: Error decoding JSON data. Error: <BadRequest '400: Bad Request'> JSON data extracted from the request: {}"` {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	_, err = ParseData(Request{Method: "POST", ContentType: "text/plain", Body: []byte(`{}`)}, false)
	if r := Failure("", "x", err); r.Status != 415 {
		t.Fatalf("no JSON content type: got %d", r.Status)
	}
}

func TestServeEnvelopeAndErrors(t *testing.T) {
	r := Serve(Request{Action: "package_create", Method: "GET", SiteURL: "http://h"}, false, nil)
	if r.Status != 400 || string(r.Body) != `"Bad request - JSON Error: Invalid request. Please use POST method for your request"` {
		t.Fatalf("GET of POST action: %d %s", r.Status, r.Body)
	}
	r = Serve(Request{Action: "package_show", Method: "GET", Query: "id=x", SiteURL: "http://h/"}, true, func(map[string]any, bool) (any, error) {
		return map[string]any{"name": "é"}, nil
	})
	want := `{"help": "http://h/api/3/action/help_show?name=package_show", "success": true, "result": {"name": "\u00e9"}}`
	if r.Status != 200 || string(r.Body) != want || r.ContentType != ContentTypeJSON {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	r = Serve(Request{Action: "package_show", Method: "GET", Query: "id=x", SiteURL: "http://h"}, true, func(map[string]any, bool) (any, error) {
		return nil, NotFound("")
	})
	want = `{"help": "http://h/api/3/action/help_show?name=package_show", "error": {"__type": "Not Found Error", "message": "Not found"}, "success": false}`
	if r.Status != 404 || string(r.Body) != want {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	r = Serve(Request{Action: "package_create", Method: "POST", SiteURL: "http://h"}, false, func(map[string]any, bool) (any, error) {
		return nil, FieldError("name", "That URL is already in use.")
	})
	want = `{"help": "http://h/api/3/action/help_show?name=package_create", "error": {"__type": "Validation Error", "name": ["That URL is already in use."]}, "success": false}`
	if r.Status != 409 || string(r.Body) != want {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	r = Serve(Request{Action: "x", Method: "POST"}, false, func(map[string]any, bool) (any, error) { return nil, errors.New("boom") })
	if r.Status != 500 || !json.Valid(r.Body) {
		t.Fatalf("internal: %d %s", r.Status, r.Body)
	}
}

func TestJSONPAndCallbackRunsAnonymous(t *testing.T) {
	var anon bool
	r := Serve(Request{Action: "status_show", Method: "GET", Query: "callback=cb"}, true, func(d map[string]any, a bool) (any, error) {
		anon = a
		if _, ok := d["callback"]; ok {
			t.Error("callback left in data dict")
		}
		return 1, nil
	})
	if !anon || r.ContentType != ContentTypeJSONP || string(r.Body[:3]) != "cb(" || string(r.Body[len(r.Body)-2:]) != ");" {
		t.Fatalf("got anon=%v %s %s", anon, r.ContentType, r.Body)
	}
}

func TestCoercion(t *testing.T) {
	if v, ok := AsBool("Yes"); !v || !ok {
		t.Error("asbool Yes")
	}
	if _, ok := AsBool("maybe"); ok {
		t.Error("asbool maybe accepted")
	}
	if SchemaBool("on") {
		t.Error("boolean_validator: on is not true")
	}
	if _, err := Natural(map[string]any{"limit": "x"}, "limit", 0); err == nil || err.Fields["limit"].([]string)[0] != "Invalid integer" {
		t.Errorf("limit=x: %v", err)
	}
	if _, err := Natural(map[string]any{"limit": "-1"}, "limit", 0); err == nil || err.Fields["limit"].([]string)[0] != "Must be a natural number" {
		t.Errorf("limit=-1: %v", err)
	}
	if n, err := Natural(map[string]any{"limit": json.Number("5")}, "limit", 0); err != nil || n != 5 {
		t.Errorf("limit=5: %v %v", n, err)
	}
}

func TestJSONPCallbackOnlyIdentifierCharacters(t *testing.T) {
	for _, cb := range []string{"cb", "jQuery1_2.x$", "a.b.c", "$", "_9"} {
		r := Serve(Request{Action: "status_show", Method: "GET", Query: "callback=" + url.QueryEscape(cb)}, true,
			func(map[string]any, bool) (any, error) { return 1, nil })
		if r.Status != 200 || r.ContentType != ContentTypeJSONP || !strings.HasPrefix(string(r.Body), cb+"(") {
			t.Errorf("callback %q: %d %s %s", cb, r.Status, r.ContentType, r.Body)
		}
	}
	for _, cb := range []string{"alert(1);cb", "<script>", "a b", "cb//", "a-b", "x\n", "é", "a(", "cb;"} {
		ran := false
		r := Serve(Request{Action: "status_show", Method: "GET", Query: "callback=" + url.QueryEscape(cb)}, true,
			func(map[string]any, bool) (any, error) { ran = true; return 1, nil })
		if r.Status != 400 || r.ContentType != ContentTypeJSON || !strings.Contains(string(r.Body), "Invalid callback") || ran {
			t.Errorf("callback %q: %d %s %s (action ran: %v)", cb, r.Status, r.ContentType, r.Body, ran)
		}
		if strings.Contains(string(r.Body), cb) {
			t.Errorf("callback %q echoed: %s", cb, r.Body)
		}
	}
}
