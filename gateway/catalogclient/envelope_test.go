package catalogclient

import (
	"errors"
	"net/http"
	"reflect"
	"testing"
)

func TestDecode(t *testing.T) {
	var out struct {
		Name string `json:"name"`
	}
	if err := Decode(200, []byte(`{"success":true,"result":{"name":"a"}}`), &out); err != nil || out.Name != "a" {
		t.Fatalf("success: %v %+v", err, out)
	}
	err := Decode(409, []byte(`{"success":false,"error":{"__type":"Validation Error","name":["That URL is already in use."],"resources":[{"url":["Missing value"]}]}}`), nil)
	var ce *Error
	if !errors.As(err, &ce) || ce.Status != 409 || ce.Type != "Validation Error" ||
		!reflect.DeepEqual(ce.Fields["name"], []string{"That URL is already in use."}) || ce.Fields["resources"][0] != `{"url":["Missing value"]}` {
		t.Fatalf("validation error: %#v", err)
	}
	if err.Error() != `Validation Error: name: That URL is already in use.; resources: {"url":["Missing value"]}` {
		t.Errorf("Error() = %q", err.Error())
	}
	err = Decode(404, []byte(`{"success":false,"error":{"__type":"Not Found Error","message":"Not found"}}`), nil)
	if !errors.As(err, &ce) || ce.Status != 404 || err.Error() != "Not found" {
		t.Fatalf("not found: %#v", err)
	}
	for _, body := range []string{``, `<html>`, `{"success":true,"result":"x"}`} {
		err := Decode(200, []byte(body), &out)
		if !errors.As(err, &ce) || ce.Status != http.StatusBadGateway {
			t.Errorf("Decode(%q) = %v, want a 502 *Error", body, err)
		}
	}
	if err := Decode(200, []byte(`{"success":false}`), nil); !errors.As(err, &ce) || ce.Status != http.StatusBadGateway {
		t.Errorf("success false with 200: %v", err)
	}
}

// FuzzDecode reads any answer without panicking: a nil error only with
// success true and status 200, else an *Error.
func FuzzDecode(f *testing.F) {
	f.Add(200, []byte(`{"success":true,"result":{"a":1}}`))
	f.Add(409, []byte(`{"success":false,"error":{"__type":"Validation Error","name":[1,{"x":null}],"m":"s"}}`))
	f.Add(503, []byte(`{"success":false,"error":{"message":7}}`))
	f.Add(200, []byte(`[]`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		var out any
		err := Decode(status, body, &out)
		if err == nil {
			if status != http.StatusOK {
				t.Fatalf("status %d decoded as a success", status)
			}
			return
		}
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("not an *Error: %v", err)
		}
		_ = ce.Error()
	})
}
