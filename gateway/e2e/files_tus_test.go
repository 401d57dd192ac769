package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// tusMeta is an Upload-Metadata header of pairs.
func tusMeta(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, kv[i]+" "+base64.StdEncoding.EncodeToString([]byte(kv[i+1])))
	}
	return strings.Join(parts, ",")
}

// tusDo sends a tus request with Tus-Resumable and the token.
func tusDo(t testing.TB, g *harness.Gateway, method, path, token string, h http.Header, body []byte) (*http.Response, []byte) {
	t.Helper()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Tus-Resumable", "1.0.0")
	if token != "" {
		h.Set("Authorization", token)
	}
	if body != nil && h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/offset+octet-stream")
	}
	resp, out, err := g.Do(context.Background(), method, path, h, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp, out
}

// tusCreate creates an upload of size bytes for dataset pkg, sending first
// with the creation; it returns the upload's path.
func tusCreate(t testing.TB, g *harness.Gateway, token, pkg string, size int, first []byte) string {
	t.Helper()
	h := http.Header{"Upload-Length": {strconv.Itoa(size)}, "Upload-Metadata": {tusMeta("package_id", pkg, "filename", "Big Data.CSV")}}
	resp, out := tusDo(t, g, http.MethodPost, "/uploads/", token, h, first)
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, out)
	}
	if resp.Header.Get("Upload-Expires") == "" {
		t.Fatalf("create: no Upload-Expires: %v", resp.Header)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.Path, "/uploads/") {
		t.Fatalf("create: Location %q", resp.Header.Get("Location"))
	}
	if want := strconv.Itoa(len(first)); first != nil && resp.Header.Get("Upload-Offset") != want {
		t.Fatalf("create-with-upload: offset %q, want %s", resp.Header.Get("Upload-Offset"), want)
	}
	return loc.Path
}

// tusOffset HEADs an upload and returns its status and offset.
func tusOffset(t testing.TB, g *harness.Gateway, path, token string) (int, int64) {
	t.Helper()
	resp, _ := tusDo(t, g, http.MethodHead, path, token, nil, nil)
	off, _ := strconv.ParseInt(resp.Header.Get("Upload-Offset"), 10, 64)
	return resp.StatusCode, off
}

// tusPatch sends data at offset, with an Upload-Checksum when sum is set.
func tusPatch(t testing.TB, g *harness.Gateway, path, token string, offset int, data []byte, sum string) (int, string) {
	t.Helper()
	h := http.Header{"Upload-Offset": {strconv.Itoa(offset)}}
	if sum != "" {
		h.Set("Upload-Checksum", sum)
	}
	resp, out := tusDo(t, g, http.MethodPatch, path, token, h, data)
	return resp.StatusCode, string(out)
}

func sha256Header(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256 " + base64.StdEncoding.EncodeToString(s[:])
}

// The tus endpoint: discovery, who may create and use an upload,
// creation-with-upload, checksum (460 stores nothing), termination, and
// attaching a finished upload to resource_create (JSON) and
// resource_update (form) by upload_id, refused for unknown, malformed,
// unfinished and other users' uploads.
func TestTusUploadAttach(t *testing.T) {
	f := newFileFixture(t)
	g := f.g
	resp, _ := tusDo(t, g, http.MethodOptions, "/uploads/", "", nil, nil)
	if ext := resp.Header.Get("Tus-Extension"); resp.StatusCode >= 300 || !strings.Contains(ext, "creation-with-upload") ||
		!strings.Contains(ext, "termination") || !strings.Contains(ext, "checksum") || !strings.Contains(ext, "expiration") ||
		!strings.Contains(resp.Header.Get("Tus-Checksum-Algorithm"), "sha256") || resp.Header.Get("Tus-Max-Size") == "" {
		t.Fatalf("OPTIONS: %d %v", resp.StatusCode, resp.Header)
	}
	data := testBytes(3<<20+123, 41)
	meta := http.Header{"Upload-Length": {strconv.Itoa(len(data))}, "Upload-Metadata": {tusMeta("package_id", f.public)}}
	for _, c := range []struct {
		name, token string
		h           http.Header
		want        int
	}{
		{"anonymous", "", meta, 401},
		{"member (reads only)", f.member, meta, 403},
		{"outsider", f.outsider, meta, 403},
		{"no package_id", f.editor, http.Header{"Upload-Length": {"10"}}, 400},
		{"unknown dataset", f.editor, http.Header{"Upload-Length": {"10"}, "Upload-Metadata": {tusMeta("package_id", "no-such")}}, 404},
		{"deferred length", f.editor, http.Header{"Upload-Defer-Length": {"1"}, "Upload-Metadata": {tusMeta("package_id", f.public)}}, 501},
		{"over the limit", f.editor, http.Header{"Upload-Length": {strconv.Itoa(60 << 30)}, "Upload-Metadata": {tusMeta("package_id", f.public)}}, 413},
	} {
		h := http.Header{}
		for k, v := range c.h {
			h[k] = v
		}
		if resp, out := tusDo(t, g, http.MethodPost, "/uploads/", c.token, h, nil); resp.StatusCode != c.want {
			t.Errorf("create as %s: %d %s, want %d", c.name, resp.StatusCode, out, c.want)
		}
	}
	if resp, _, _ := g.Do(context.Background(), http.MethodPost, "/uploads/", http.Header{"Authorization": {f.editor}, "Upload-Length": {"1"}}, nil); resp == nil || resp.StatusCode != 412 {
		t.Errorf("create without Tus-Resumable: %v", resp)
	}

	path := tusCreate(t, g, f.editor, f.public, len(data), data[:1<<20])
	id := strings.TrimPrefix(path, "/uploads/")
	for _, m := range []string{http.MethodHead, http.MethodPatch, http.MethodDelete} {
		var body []byte
		h := http.Header{"Upload-Offset": {strconv.Itoa(1 << 20)}}
		if m == http.MethodPatch {
			body = data[1<<20 : 2<<20]
		}
		if resp, _ := tusDo(t, g, m, path, f.outsider, h, body); resp.StatusCode != 404 {
			t.Errorf("%s of the editor's upload by the outsider: %d, want 404", m, resp.StatusCode)
		}
	}
	if code, out := tusPatch(t, g, path, f.editor, 1<<20, data[1<<20:], sha256Header(data[:10])); code != 460 {
		t.Fatalf("PATCH with a wrong checksum: %d %s", code, out)
	}
	if code, off := tusOffset(t, g, path, f.editor); code != 200 || off != 1<<20 {
		t.Fatalf("after a checksum mismatch: %d offset %d, want 200 %d", code, off, 1<<20)
	}
	if code, out := tusPatch(t, g, path, f.editor, 1<<20, data[1<<20:2<<20], "sha256 !!"); code != 400 {
		t.Fatalf("PATCH with a malformed checksum: %d %s", code, out)
	}
	if code, out := tusPatch(t, g, path, f.editor, 1<<20, data[1<<20:2<<20], sha256Header(data[1<<20:2<<20])); code != 204 {
		t.Fatalf("PATCH with its checksum: %d %s", code, out)
	}
	// Unfinished: not attachable.
	attach := func(token string, body map[string]any) (int, map[string]any) {
		return ckan(t, g, "resource_create", token, body)
	}
	if code, out := attach(f.editor, map[string]any{"package_id": f.public, "upload_id": id}); code != 409 || !strings.Contains(fmt.Sprint(out), "not finished") {
		t.Fatalf("attach unfinished: %d %v", code, out)
	}
	if code, out := tusPatch(t, g, path, f.editor, 2<<20, data[2<<20:], ""); code != 204 {
		t.Fatalf("last PATCH: %d %s", code, out)
	}
	for _, c := range []struct {
		name, token, ref string
		want             int
	}{
		{"unknown", f.editor, strings.Repeat("ab", 16), 409},
		{"malformed", f.editor, "../../etc/passwd", 409},
		{"another user's", f.outsider, id, 403},
	} {
		code, out := attach(c.token, map[string]any{"package_id": f.public, "upload_id": c.ref})
		if code != c.want || out["success"] != false {
			t.Errorf("attach %s upload: %d %v, want %d", c.name, code, out, c.want)
		}
	}
	code, out := attach(f.editor, map[string]any{"package_id": f.public, "name": "big", "upload_id": g.URL + path})
	if code != 200 {
		t.Fatalf("attach: %d %v", code, out)
	}
	res := out["result"].(map[string]any)
	if res["hash"] != "sha256:"+sha(data) || res["size"] != float64(len(data)) || res["url_type"] != "upload" || !strings.HasSuffix(res["url"].(string), "/big-data.csv") || res["upload_id"] != nil {
		t.Fatalf("attached resource: %v", res)
	}
	if got := downloadIs(t, g, f.editor, res["id"].(string)); string(got) != string(data) {
		t.Fatal("download differs from the upload")
	}
	if code, _ := tusOffset(t, g, path, f.editor); code != 404 {
		t.Fatalf("attached upload still served: %d", code)
	}
	if code, out := attach(f.editor, map[string]any{"package_id": f.public, "upload_id": id}); code != 409 {
		t.Fatalf("attach twice: %d %v", code, out)
	}
	// resource_update, form-encoded, with a declared sha256.
	next := testBytes(200000, 42)
	p2 := tusCreate(t, g, f.editor, f.public, len(next), next)
	form := url.Values{"id": {res["id"].(string)}, "upload_id": {strings.TrimPrefix(p2, "/uploads/")}}
	resp, body, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/resource_update",
		http.Header{"Authorization": {f.editor}, "Content-Type": {"application/x-www-form-urlencoded"}}, []byte(form.Encode()))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resource_update with upload_id: %v %s", err, body)
	}
	if got := downloadIs(t, g, f.editor, res["id"].(string)); string(got) != string(next) {
		t.Fatal("download after resource_update differs")
	}
	// Termination.
	p3 := tusCreate(t, g, f.editor, f.public, 100, nil)
	if resp, _ := tusDo(t, g, http.MethodDelete, p3, f.editor, nil, nil); resp.StatusCode != 204 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if code, _ := tusOffset(t, g, p3, f.editor); code != 404 {
		t.Fatalf("HEAD after DELETE: %d", code)
	}
	// The multipart upload field still works.
	if code, out := uploadAction(t, g, f.editor, "resource_create", map[string]string{"package_id": f.public}, "m.csv", next); code != 200 {
		t.Fatalf("multipart upload: %d %v", code, out)
	}
}

// The per-user limits (unfinished uploads, their declared bytes) and the
// expiration of unfinished uploads by the cleaner.
func TestTusLimitsAndExpiry(t *testing.T) {
	f := newFileFixture(t, harness.WithEnv("TOXGATE_FILES_TUS_MAX_UNFINISHED_PER_USER=2", "TOXGATE_FILES_TUS_MAX_PENDING_BYTES_PER_USER=3000",
		"TOXGATE_FILES_TUS_EXPIRY=8s", "TOXGATE_FILES_TUS_CLEAN_INTERVAL=200ms"))
	g := f.g
	create := func(size int) int {
		h := http.Header{"Upload-Length": {strconv.Itoa(size)}, "Upload-Metadata": {tusMeta("package_id", f.public)}}
		resp, _ := tusDo(t, g, http.MethodPost, "/uploads/", f.editor, h, nil)
		return resp.StatusCode
	}
	if code := create(3001); code != 413 {
		t.Fatalf("over the pending bytes: %d", code)
	}
	if a, b, c := create(1000), create(1000), create(10); a != 201 || b != 201 || c != 429 {
		t.Fatalf("two then a third unfinished upload: %d %d %d", a, b, c)
	}
	// The admin is another user: not counted with the editor.
	h := http.Header{"Upload-Length": {"10"}, "Upload-Metadata": {tusMeta("package_id", f.public)}}
	if resp, out := tusDo(t, g, http.MethodPost, "/uploads/", f.admin, h, nil); resp.StatusCode != 201 {
		t.Fatalf("another user's upload: %d %s", resp.StatusCode, out)
	}
	dir := filepath.Join(g.DataDir, "uploads")
	infos, _ := filepath.Glob(filepath.Join(dir, "*.info"))
	if len(infos) != 3 {
		t.Fatalf("%d upload records, want 3", len(infos))
	}
	waitFor(t, 90*time.Second, "the cleaner to remove the expired uploads", func() bool {
		infos, _ := filepath.Glob(filepath.Join(dir, "*.info"))
		return len(infos) == 0
	})
	if code := create(10); code != 201 {
		t.Fatalf("after expiry the user may upload again: %d", code)
	}
}

// Under kill -9 of the gateway in the middle of a PATCH, the upload
// resumes after the restart from the offset the gateway kept, completes,
// and is attached with the SHA-256 of the whole file.
func TestTusResumesAfterGatewayKill(t *testing.T) {
	f := newFileFixture(t)
	g := f.g
	data := testBytes(12<<20, 43)
	path := tusCreate(t, g, f.editor, f.public, len(data), data[:1<<20])
	// A PATCH of the rest, cut after 5 MiB more.
	u, _ := url.Parse(g.URL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := fmt.Sprintf("PATCH %s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nTus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\nUpload-Offset: %d\r\nContent-Length: %d\r\n\r\n",
		path, u.Host, f.editor, 1<<20, len(data)-1<<20)
	if _, err := c.Write(append([]byte(head), data[1<<20:6<<20]...)); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(g.DataDir, "uploads", strings.TrimPrefix(path, "/uploads/"))
	waitFor(t, 30*time.Second, "the gateway to store the sent bytes", func() bool {
		st, err := os.Stat(bin)
		return err == nil && st.Size() == 6<<20
	})
	g.Kill9()
	g.Relaunch()
	code, off := tusOffset(t, g, path, f.editor)
	if code != 200 || off != 6<<20 {
		t.Fatalf("after kill -9: HEAD %d offset %d, want 200 %d", code, off, 6<<20)
	}
	if code, out := tusPatch(t, g, path, f.editor, int(off), data[off:], ""); code != 204 {
		t.Fatalf("resume: %d %s", code, out)
	}
	code2, out := ckan(t, g, "resource_create", f.editor, map[string]any{"package_id": f.public, "upload_id": path})
	if code2 != 200 {
		t.Fatalf("attach: %d %v", code2, out)
	}
	res := out["result"].(map[string]any)
	if res["hash"] != "sha256:"+sha(data) {
		t.Fatalf("hash %v, want sha256:%s", res["hash"], sha(data))
	}
	downloadIs(t, g, f.editor, res["id"].(string))

}
