package contract

import (
	"reflect"
	"testing"
	"time"
)

func TestMessagesRoundTrip(t *testing.T) {
	req := &Request{Action: "package_show", Method: "GET", ContentType: "application/json", Query: "id=x", Body: []byte(`{"a":1}`),
		SiteURL: "http://h", Caller: Identity{UserID: "u1", Name: "joe", Sysadmin: true}, Deadline: time.Unix(0, 1234567890), Arrived: 987654321}
	b, _ := req.MarshalBinary()
	var got Request
	if err := got.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(&got, req) {
		t.Fatalf("request: %v %+v", err, got)
	}
	resp := &Response{Status: 409, ContentType: "application/json;charset=utf-8", Body: []byte(`{}`), ErrorType: "Validation Error"}
	b, _ = resp.MarshalBinary()
	var gotResp Response
	if err := gotResp.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(&gotResp, resp) {
		t.Fatalf("response: %v %+v", err, gotResp)
	}
	up := &Request{Action: "resource_create", Method: "POST", Upload: &Upload{FileID: "f1", Filename: "a.csv", Mimetype: "text/csv", Size: 1 << 33, SHA256: "ab"}}
	b, _ = up.MarshalBinary()
	var gotUp Request
	if err := gotUp.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(&gotUp, up) {
		t.Fatalf("request with upload: %v %+v", err, gotUp)
	}
	m := &Manifest{Name: "catalog", Version: "1", Actions: []ActionSpec{{Name: "package_show", GET: true, Description: "d"}, {Name: "resource_file", GET: true, Internal: true}}}
	b, _ = m.MarshalBinary()
	var gotM Manifest
	if err := gotM.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(&gotM, m) {
		t.Fatalf("manifest: %v %+v", err, gotM)
	}
	if err := got.UnmarshalBinary(b[:3]); err == nil {
		t.Fatal("truncated message accepted")
	}
}

// TestRequestWithoutArrivedDecodes: a request from a gateway that does not
// send Arrived (an older version, during a hot reload of the plugin)
// decodes with Arrived 0, the value that asks for a check of its own.
func TestRequestWithoutArrivedDecodes(t *testing.T) {
	req := &Request{Action: "package_show", Method: "GET", Query: "id=x", Arrived: 42}
	b, _ := req.MarshalBinary()
	var withoutField []byte
	{
		// the same message as an older encoder wrote it: without the last field
		old := *req
		old.Arrived = 0
		full, _ := old.MarshalBinary()
		withoutField = full[:len(full)-1] // Arrived 0 is one varint byte
	}
	var got Request
	if err := got.UnmarshalBinary(withoutField); err != nil || got.Arrived != 0 || got.Action != "package_show" || got.Query != "id=x" {
		t.Fatalf("older request: %v %+v", err, got)
	}
	got = Request{Arrived: 7}
	if err := got.UnmarshalBinary(b); err != nil || got.Arrived != 42 {
		t.Fatalf("request: %v %+v", err, got)
	}
}

// TestMonotonicNeverGoesBack: the machine's monotonic clock is known on
// Linux and does not go back.
func TestMonotonicNeverGoesBack(t *testing.T) {
	a := Monotonic()
	if a == 0 {
		t.Skip("no machine-wide monotonic clock on this system")
	}
	for range 1000 {
		b := Monotonic()
		if b < a {
			t.Fatalf("monotonic clock went back: %d after %d", b, a)
		}
		a = b
	}
}
