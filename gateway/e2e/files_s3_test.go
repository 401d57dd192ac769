package e2e

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"toxgate/gateway/harness"
	"toxgate/internal/s3test"
)

// Two gateways on one catalog database and one bucket serve each other's
// files: a file uploaded through one downloads whole and by range from the
// other, and a replaced file leaves the bucket.
func TestFilesS3SharedByTwoGateways(t *testing.T) {
	srv := s3test.Start(t)
	env := srv.Env(srv.Bucket(t), "shared/")
	f := newFileFixture(t, harness.WithEnv(env...))
	other := harness.Start(t, harness.WithEnv(append(env, "TOXGATE_MONGODB_URI="+f.g.StoreURI())...))
	data := testBytes(13<<20+5, 11) // three parts of 6 MiB, the last short
	code, out := uploadAction(t, other, f.editor, "resource_create", map[string]string{"package_id": f.public}, "s3.csv", data)
	if code != 200 || out["result"].(map[string]any)["hash"] != "sha256:"+sha(data) {
		t.Fatalf("upload through the second gateway: %d %v", code, out)
	}
	res := out["result"].(map[string]any)
	path := res["url"].(string)[strings.Index(res["url"].(string), "/dataset/"):]
	if resp, body, err := f.g.Do(context.Background(), http.MethodGet, path, nil, nil); err != nil || resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("download from the first gateway: %v", err)
	}
	if resp, body, _ := f.g.Do(context.Background(), http.MethodGet, path, http.Header{"Range": {"bytes=6291450-6291469"}}, nil); resp.StatusCode != 206 || !bytes.Equal(body, data[6291450:6291470]) {
		t.Fatalf("range across a part boundary: %d", resp.StatusCode)
	}
	data2 := testBytes(1000, 12)
	if code, out := uploadAction(t, f.g, f.editor, "resource_patch", map[string]string{"id": res["id"].(string)}, "s3b.csv", data2); code != 200 {
		t.Fatalf("replace: %d %v", code, out)
	}
	if got := downloadIs(t, other, f.editor, res["id"].(string)); !bytes.Equal(got, data2) {
		t.Fatal("the second gateway does not serve the replacement")
	}
	if files, withBytes := storedFiles(t, f.g); files != 1 || withBytes != 1 {
		t.Fatalf("after a replacement: %d files, %d with bytes; want 1, 1", files, withBytes)
	}
}

// With files.download: redirect, an authorized download is a 302 to a
// presigned URL of the bucket, which serves the bytes and ranges without
// credentials; a caller who may not read the resource gets 404, no URL.
func TestFilesS3PresignedDownload(t *testing.T) {
	srv := s3test.Start(t)
	f := newFileFixture(t, harness.WithEnv(append(srv.Env(srv.Bucket(t), ""), "TOXGATE_FILES_DOWNLOAD=redirect")...))
	data := testBytes(7<<20+3, 13)
	code, out := uploadAction(t, f.g, f.editor, "resource_create", map[string]string{"package_id": f.private}, "secret.csv", data)
	if code != 200 {
		t.Fatalf("upload: %d %v", code, out)
	}
	u := out["result"].(map[string]any)["url"].(string)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(url, token string, h http.Header) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		for k, v := range h {
			req.Header[k] = v
		}
		if token != "" {
			req.Header.Set("Authorization", token)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp, b.Bytes()
	}
	for _, who := range []string{"", f.outsider} {
		if resp, _ := get(u, who, nil); resp.StatusCode != 404 || resp.Header.Get("Location") != "" {
			t.Fatalf("unauthorized download: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	resp, _ := get(u, f.member, nil)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 302 || !strings.HasPrefix(loc, srv.Endpoint+"/") || !strings.Contains(loc, "X-Amz-Signature=") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("authorized download: %d, Location %q", resp.StatusCode, loc)
	}
	resp, body := get(loc, "", nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, data) || !strings.Contains(resp.Header.Get("Content-Disposition"), "secret.csv") {
		t.Fatalf("presigned GET: %d, %d bytes, %v", resp.StatusCode, len(body), resp.Header)
	}
	resp, body = get(loc, "", http.Header{"Range": {"bytes=100-199"}})
	if resp.StatusCode != 206 || !bytes.Equal(body, data[100:200]) {
		t.Fatalf("presigned range: %d, %d bytes", resp.StatusCode, len(body))
	}
	if resp, _ := get(strings.Replace(loc, "X-Amz-Signature=", "X-Amz-Signature=0", 1), "", nil); resp.StatusCode != 403 {
		t.Fatalf("a tampered URL: %d", resp.StatusCode)
	}
}

// A file whose object is gone from the bucket is a 404 before any byte is
// sent (whole and by range), never a 200 cut short; the files directory
// answers the same for a file missing on disk.
func TestFilesMissingBytesAre404(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	f := newFileFixture(t, harness.WithEnv(srv.Env(bucket, "gone/")...))
	data := testBytes(7<<20+1, 14)
	code, out := uploadAction(t, f.g, f.editor, "resource_create", map[string]string{"package_id": f.public}, "gone.csv", data)
	if code != 200 {
		t.Fatalf("upload: %d %v", code, out)
	}
	res := out["result"].(map[string]any)
	path := res["url"].(string)[strings.Index(res["url"].(string), "/dataset/"):]
	c := srv.Client(t)
	var key string
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: "gone/", Recursive: true}) {
		key = o.Key
	}
	if key == "" {
		t.Fatal("no object in the bucket")
	}
	if err := c.RemoveObject(context.Background(), bucket, key, minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []http.Header{nil, {"Range": {"bytes=100-199"}}} {
		resp, body, err := f.g.Do(context.Background(), http.MethodGet, path, h, nil)
		if err != nil || resp.StatusCode != 404 || bytes.Contains(body, data[100:200]) {
			t.Fatalf("download of a missing object (%v): %v %d %.200s", h, err, resp.StatusCode, body)
		}
	}
	// The gateway goes on serving others.
	if code, out := uploadAction(t, f.g, f.editor, "resource_create", map[string]string{"package_id": f.public}, "next.csv", data[:1000]); code != 200 {
		t.Fatalf("next upload: %d %v", code, out)
	}
}
