package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// tusThroughBalancer uploads a file in four PATCHes through the balancer
// with a client that keeps cookies, as a browser does: the balancer's
// affinity cookie sends every request of the upload, and the attaching
// resource_create, to the gateway holding the upload.
func tusThroughBalancer(t *testing.T, c *cluster, pkg string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: time.Minute}
	do := func(method, path string, h http.Header, body []byte) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, c.lb.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = h
		req.Header.Set("Authorization", c.admin)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s through the balancer: %v", method, path, err)
		}
		resp.Body.Close()
		return resp
	}
	data := testBytes(4<<16, 7)
	resp := do(http.MethodPost, "/uploads/", http.Header{"Tus-Resumable": {"1.0.0"},
		"Upload-Length": {strconv.Itoa(len(data))}, "Upload-Metadata": {tusMeta("package_id", pkg, "filename", "balanced.bin")}}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create through the balancer: %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatalf("Location %q: %v", resp.Header.Get("Location"), err)
	}
	for off := 0; off < len(data); off += 1 << 16 {
		resp := do(http.MethodPatch, loc.Path, http.Header{"Tus-Resumable": {"1.0.0"}, "Upload-Offset": {strconv.Itoa(off)},
			"Content-Type": {"application/offset+octet-stream"}}, data[off:off+1<<16])
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("PATCH at %d through the balancer: %d (the upload's requests must reach the gateway holding it)", off, resp.StatusCode)
		}
	}
	body := []byte(`{"package_id":"` + pkg + `","upload_id":"` + loc.Path + `"}`)
	req, _ := http.NewRequest(http.MethodPost, c.lb.URL+"/api/3/action/resource_create", bytes.NewReader(body))
	req.Header.Set("Authorization", c.admin)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		res.Body.Close()
		t.Fatalf("attach through the balancer: %d", res.StatusCode)
	}
	var out struct {
		Result map[string]any `json:"result"`
	}
	decodeJSON(t, res, &out)
	sum := sha256.Sum256(data)
	if out.Result["hash"] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("attached %v, want sha256:%x", out.Result["hash"], sum)
	}
}
