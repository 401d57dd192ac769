package filehttp

import (
	"encoding/json"
	"net/url"
	"testing"
)

func TestUploadIDOf(t *testing.T) {
	id, rest, ok := UploadIDOf("application/json", []byte(`{"package_id":"p","upload_id":"abc","name":"n"}`))
	var m map[string]any
	if !ok || id != "abc" || json.Unmarshal(rest, &m) != nil || m["upload_id"] != nil || m["name"] != "n" {
		t.Fatalf("json: %q %s %v", id, rest, ok)
	}
	id, rest, ok = UploadIDOf("application/x-www-form-urlencoded", []byte("id=r&upload_id=xyz"))
	if f, _ := url.ParseQuery(string(rest)); !ok || id != "xyz" || f.Has("upload_id") || f.Get("id") != "r" {
		t.Fatalf("form: %q %s %v", id, rest, ok)
	}
	for ct, body := range map[string]string{"application/json": `{"name":"upload_id"}`, "text/csv": "upload_id=1", "": "[1]"} {
		if _, _, ok := UploadIDOf(ct, []byte(body)); ok {
			t.Errorf("%s %s: found an upload_id", ct, body)
		}
	}
	if id, _, ok := UploadIDOf("application/json", []byte(`{"upload_id":7}`)); !ok || id == "7" {
		t.Errorf("a number upload_id: %q %v", id, ok)
	}
}

func FuzzUploadIDOf(f *testing.F) {
	f.Add("application/json", `{"upload_id":"abc","package_id":"p"}`)
	f.Add("application/x-www-form-urlencoded", "upload_id=a&upload_id=b")
	f.Add("application/json", `{"upload_id":{"x":1}}`)
	f.Fuzz(func(t *testing.T, ct, body string) {
		_, rest, ok := UploadIDOf(ct, []byte(body))
		if !ok {
			return
		}
		if _, again, ok2 := UploadIDOf(ct, rest); ok2 {
			t.Fatalf("upload_id left in %q", again)
		}
	})
}
