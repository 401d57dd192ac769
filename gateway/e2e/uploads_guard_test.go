package e2e

import (
	"bytes"
	"context"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// heldUpload is a multipart resource action sent over a raw connection:
// its head declares the whole body, and only a prefix was sent so far.
type heldUpload struct {
	c          net.Conn
	unsent     int    // bytes of the file not sent yet
	closingTag []byte // the end of the body
}

// uploadFiller is the content of held uploads' files.
var uploadFiller = bytes.Repeat([]byte("a,b\n"), 16<<10)

// holdUpload sends the head of a multipart resource action whose fields
// (sent first, in order) are fields, then a file part "upload" of fileSize
// bytes of which only the first sent (at most 64 KiB) are written; the
// gateway gets the rest when finish is called.
func holdUpload(t *testing.T, g *harness.Gateway, token, path string, fields [][2]string, fileSize, sent int) *heldUpload {
	t.Helper()
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := mw.CreateFormFile("upload", "held.csv"); err != nil {
		t.Fatal(err)
	}
	closing := []byte("\r\n--" + mw.Boundary() + "--\r\n")
	length := head.Len() + fileSize + len(closing)
	c := openBody(t, g, http.MethodPost, path, "Authorization: "+token+"\r\nContent-Type: "+mw.FormDataContentType()+"\r\n", length, 0)
	if _, err := c.Write(append(head.Bytes(), uploadFiller[:sent]...)); err != nil {
		t.Fatal(err)
	}
	return &heldUpload{c: c, unsent: fileSize - sent, closingTag: closing}
}

// finish sends the rest of the body and reads the answer.
func (h *heldUpload) finish(t *testing.T) (*http.Response, string) {
	t.Helper()
	for h.unsent > 0 {
		n := min(h.unsent, len(uploadFiller))
		if _, err := h.c.Write(uploadFiller[:n]); err != nil {
			t.Fatalf("sending the rest of the upload: %v", err)
		}
		h.unsent -= n
	}
	if _, err := h.c.Write(h.closingTag); err != nil {
		t.Fatalf("sending the end of the upload: %v", err)
	}
	return readStatus(t, h.c)
}

// A user who may not write a dataset is refused before the file is read:
// the gateway answers while the client has sent 64 KiB of a declared
// 1 GiB file and waits, and stores nothing. The same holds for
// resource_update of another dataset's resource, for a member who may read
// but not edit, and for a file part sent before package_id (the clients
// after the first close their sending side after the prefix, so that the
// gateway's bounded drain of a refused body ends at once).
func TestUploadRefusedBeforeTheFileIsRead(t *testing.T) {
	f := newFileFixture(t)
	g := f.g
	code, out := uploadAction(t, g, f.editor, "resource_create", map[string]string{"package_id": f.private, "name": "kept"}, "kept.csv", []byte("x,y\n1,2\n"))
	if code != 200 {
		t.Fatalf("editor upload: %d %v", code, out)
	}
	rid := out["result"].(map[string]any)["id"].(string)
	for i, c := range []struct {
		name, token, action string
		fields              [][2]string
		status              int
		text                string
	}{
		{"outsider, public dataset", f.outsider, "resource_create", [][2]string{{"package_id", f.public}, {"name", "x"}}, 403, "Authorization Error"},
		{"outsider, private dataset", f.outsider, "resource_create", [][2]string{{"package_id", f.private}}, 403, "Authorization Error"},
		{"member (reads, may not edit)", f.member, "resource_create", [][2]string{{"package_id", f.private}}, 403, "Authorization Error"},
		{"outsider, resource_update of a private resource", f.outsider, "resource_update", [][2]string{{"id", rid}}, 403, "Authorization Error"},
		{"member, resource_patch", f.member, "resource_patch", [][2]string{{"id", rid}}, 403, "Authorization Error"},
		{"unknown dataset", f.editor, "resource_create", [][2]string{{"package_id", "no-such-dataset"}}, 404, "Not found"},
		{"file before package_id", f.editor, "resource_create", nil, 409, "send package_id before the upload field"},
		{"file before id", f.editor, "resource_patch", nil, 409, "send id before the upload field"},
		{"package_id twice", f.editor, "resource_create", [][2]string{{"package_id", f.public}, {"package_id", f.private}}, 409, "Give one value"},
	} {
		h := holdUpload(t, g, c.token, "/api/3/action/"+c.action, c.fields, 1<<30, 64<<10)
		if i > 0 {
			h.c.(*net.TCPConn).CloseWrite()
		}
		resp, body := readStatus(t, h.c)
		if resp.StatusCode != c.status || !strings.Contains(body, c.text) || !strings.Contains(body, `"success": false`) || !resp.Close {
			t.Errorf("%s: %d (close %v) %s", c.name, resp.StatusCode, resp.Close, body)
		}
	}
	if files, segs := storedFiles(t, g); files != 1 || segs != 1 {
		t.Fatalf("refused uploads left files: %d files, %d segment collections (want the one kept)", files, segs)
	}
	if n := metricValue(t, g, `toxgate_file_uploads_total{outcome="denied"}`); n != 9 {
		t.Fatalf("denied uploads counted: %v, want 9", n)
	}
	// The dataset may be named in the query string (a client that cannot
	// order its parts); a part of the same name must agree with it.
	ct, body := multipartBody(t, nil, "upload", "q.csv", []byte("q\n1\n"))
	resp, got, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/resource_create?package_id="+url.QueryEscape(f.public),
		http.Header{"Content-Type": {ct}, "Authorization": {f.editor}}, body)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(string(got), `"package_id": "`+f.public+`"`) {
		t.Fatalf("package_id in the query string: %v %v %s", err, resp, got)
	}
	h := holdUpload(t, g, f.outsider, "/api/3/action/resource_create?package_id="+f.public, nil, 1<<30, 64<<10)
	if resp, body := readStatus(t, h.c); resp.StatusCode != 403 {
		t.Fatalf("outsider with package_id in the query string: %d %s", resp.StatusCode, body)
	}
	h = holdUpload(t, g, f.editor, "/api/3/action/resource_create?package_id="+f.public, [][2]string{{"package_id", f.private}}, 1<<30, 64<<10)
	if resp, body := readStatus(t, h.c); resp.StatusCode != 409 || !strings.Contains(body, "Differs from the package_id of the query string") {
		t.Fatalf("package_id differing from the query string's: %d %s", resp.StatusCode, body)
	}
}

// Each user may have catalog.max_uploads_per_user uploads in progress at
// once (2 by default): a third is refused with 429 and Retry-After before
// its body is read, while another user's upload goes through; once the
// first two finish the user uploads again.
func TestUploadsPerUserCap(t *testing.T) {
	f := newFileFixture(t)
	g := f.g
	fields := [][2]string{{"package_id", f.public}, {"name", "held"}}
	held := []*heldUpload{
		holdUpload(t, g, f.editor, "/api/3/action/resource_create", fields, 1<<20, 16<<10),
		holdUpload(t, g, f.editor, "/api/3/action/resource_create", fields, 1<<20, 16<<10),
	}
	waitFor(t, time.Minute, "two uploads in progress", func() bool {
		return metricValue(t, g, "toxgate_file_uploads_in_progress") == 2
	})
	ct, body := multipartBody(t, map[string]string{"package_id": f.public}, "upload", "third.csv", []byte("a\n1\n"))
	resp, out, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/resource_create", http.Header{"Content-Type": {ct}, "Authorization": {f.editor}}, body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(out), "catalog.max_uploads_per_user") ||
		!strings.Contains(string(out), `"__type": "Too Many Requests"`) || !strings.Contains(string(out), `"success": false`) {
		t.Fatalf("third upload of the same user: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), out)
	}
	if code, out := uploadAction(t, g, f.admin, "resource_create", map[string]string{"package_id": f.public}, "other.csv", []byte("b\n2\n")); code != 200 {
		t.Fatalf("another user's upload meanwhile: %d %v", code, out)
	}
	for i, h := range held {
		if resp, body := h.finish(t); resp.StatusCode != 200 || !strings.Contains(body, `"success": true`) {
			t.Fatalf("held upload %d: %d %s", i, resp.StatusCode, body)
		}
	}
	waitFor(t, time.Minute, "no upload in progress", func() bool {
		return metricValue(t, g, "toxgate_file_uploads_in_progress") == 0
	})
	if code, out := uploadAction(t, g, f.editor, "resource_create", map[string]string{"package_id": f.public}, "again.csv", []byte("c\n3\n")); code != 200 {
		t.Fatalf("upload after the held ones finished: %d %v", code, out)
	}
	if n := metricValue(t, g, `toxgate_file_uploads_total{outcome="busy"}`); n != 1 {
		t.Fatalf("busy uploads counted: %v", n)
	}
}
