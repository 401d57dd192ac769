package ckan

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecodeRequest runs CKAN's request decoding (ParseData, within Serve:
// method, content type, query string, form or JSON body, JSONP callback)
// on any request: no panic; a failure is a CKAN error of status 400, 409
// or 415 whose reply is JSON (415: CKAN's HTML page); a success is a data
// dict that encodes back to JSON, in a 200 reply.
func FuzzDecodeRequest(f *testing.F) {
	type seed struct {
		method, contentType, query string
		body                       string
		get                        bool
	}
	const mp = "multipart/form-data; boundary=XyZ"
	seeds := []seed{
		{"POST", "application/json", "", `{"id": "herg", "rows": 10, "fq": "tags:herg"}`, false},
		{"GET", "", "q=herg&rows=5&facet.field=%5B%22tags%22%5D&facet.field=x", "", true},
		{"GET", "", "callback=cb.x$1&id=a", "", true},
		{"GET", "", "callback=alert(1)&id=a", "", true},
		{"GET", "", "q=%zz&id=%", "", true},
		{"POST", "application/x-www-form-urlencoded", "", `{"id": "x", "n": 1}=`, false},
		{"POST", "application/x-www-form-urlencoded", "", "a=1&a=2&b=%ff%fe", false},
		{"POST", "application/x-www-form-urlencoded", "", "%", false},
		{"POST", mp, "", "--XyZ\r\nContent-Disposition: form-data; name=\"id\"\r\n\r\nherg\r\n--XyZ--\r\n", false},
		{"POST", mp, "", "--XyZ\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a.csv\"\r\n\r\na,b\r\n--XyZ--\r\n", false},
		{"POST", mp, "", "--XyZ\r\nno end", false},
		{"POST", "multipart/form-data", "", "--\r\n", false},
		{"POST", "text/plain", "", `{"id": "x"}`, false},
		{"POST", "application/vnd.api+json; charset=utf-8", "", `{"id": "x"}`, false},
		{"POST", "application/json", "", `[1, "a", {"b": null}, true, 1.5e300]`, false},
		{"POST", "application/json", "", `{"a": 1} {"b": 2}`, false},
		{"POST", "application/json", "", `{"n": 1e999999, "s": "\ud800"}`, false},
		{"POST", "application/json", "", "\xff\xfe{\"a\":1}", false},
		{"POST", "application/json", "", "   ", false},
		{"POST", "application/json; boundary=\"", "", `{}`, false},
		{"POST", "application/json", "", strings.Repeat("[", 20000) + strings.Repeat("]", 20000), false},
		{"POST", "application/json", "", strings.Repeat(`{"a":`, 9000) + "1" + strings.Repeat("}", 9000), false},
		{"POST", "application/json", "", strings.Repeat("[", 9000) + strings.Repeat("]", 9000), false},
		{"POST", "application/json", "", `{"fq": "` + strings.Repeat("-", 1<<20) + `x"}`, false},
		{"PUT", "application/json", "", `{"id": "x"}`, false},
		{"GET", "application/json", "", `{"id": "x"}`, true},
	}
	for _, s := range seeds {
		f.Add(s.method, s.contentType, s.query, []byte(s.body), s.get)
	}
	f.Fuzz(func(t *testing.T, method, contentType, query string, body []byte, get bool) {
		r := Request{Action: "package_search", Method: method, ContentType: contentType, Query: query, Body: body, SiteURL: "http://site.test"}
		data, err := ParseData(r, get)
		switch {
		case err != nil:
			if err.Status != 400 && err.Status != 409 && err.Status != 415 {
				t.Fatalf("status %d: %v", err.Status, err)
			}
			if err.Message == "" && err.Fields == nil {
				t.Fatalf("an error without a message: %#v", err)
			}
		case data == nil:
			t.Fatal("no data and no error")
		default:
			if _, merr := Marshal(data); merr != nil {
				t.Fatalf("decoded data does not encode: %v", merr)
			}
		}
		resp := Serve(r, get, func(data map[string]any, _ bool) (any, error) { return data, nil })
		switch {
		case resp.Status == 415:
			if !strings.Contains(string(resp.Body), "415 Unsupported Media Type") {
				t.Fatalf("415 body %q", resp.Body)
			}
		case resp.ContentType == ContentTypeJSONP:
			if resp.Status != 200 {
				t.Fatalf("JSONP with status %d", resp.Status)
			}
		case !json.Valid(resp.Body):
			t.Fatalf("reply %d is not JSON: %.200q", resp.Status, resp.Body)
		case resp.Status != 200 && resp.Status != 400 && resp.Status != 409:
			t.Fatalf("reply status %d: %.200s", resp.Status, resp.Body)
		}
	})
}
