package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"toxgate/gateway/harness"
	"toxgate/internal/s3test"
)

// multipartBody builds what ckanapi sends for `upload@file`: the fields
// first, then the file (fileName "" leaves the file out).
func multipartBody(t testing.TB, fields map[string]string, field, fileName string, data []byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if fileName != "" {
		fw, err := mw.CreateFormFile(field, fileName)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

// uploadAction posts a multipart resource action and decodes the envelope.
func uploadAction(t testing.TB, g *harness.Gateway, token, action string, fields map[string]string, fileName string, data []byte) (int, map[string]any) {
	t.Helper()
	ct, body := multipartBody(t, fields, "upload", fileName, data)
	h := http.Header{"Content-Type": {ct}}
	if token != "" {
		h.Set("Authorization", token)
	}
	resp, out, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/"+action, h, body)
	if err != nil {
		t.Fatalf("%s: %v", action, err)
	}
	var env map[string]any
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatalf("%s: %d, not JSON: %.300s", action, resp.StatusCode, out)
	}
	return resp.StatusCode, env
}

// fetch GETs (or HEADs) a URL of the gateway with optional headers.
func fetch(t testing.TB, g *harness.Gateway, method, url string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	resp, body, err := g.Do(context.Background(), method, strings.TrimPrefix(url, g.URL), h, nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp, body
}

// storedFiles counts the file store's metadata documents in the gateway's
// store, and the files that have bytes in any backend the gateway uses:
// segment collections, its files directory, its bucket (objects and
// incomplete multipart uploads).
func storedFiles(t testing.TB, g *harness.Gateway) (files, withBytes int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(g.StoreURI()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	db := c.Database("toxgate")
	n, err := db.Collection("filestore").CountDocuments(ctx, bson.M{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	names, err := db.ListCollectionNames(ctx, bson.M{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if rest, ok := strings.CutPrefix(name, "filestore."); ok {
			id, _, _ := strings.Cut(rest, ".")
			ids[id] = true
		}
	}
	env := gatewayEnv(g)
	dir := env["TOXGATE_FILES_DIR"]
	if dir == "" {
		dir = filepath.Join(g.DataDir, "files")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		ids[strings.TrimSuffix(e.Name(), ".part")] = true
	}
	if bucket := env["TOXGATE_FILES_S3_BUCKET"]; bucket != "" {
		s3c, err := minio.New(strings.TrimPrefix(env["TOXGATE_FILES_S3_ENDPOINT"], "http://"), &minio.Options{
			Creds:  credentials.NewStaticV4(env["TOXGATE_FILES_S3_ACCESS_KEY_ID"], env["TOXGATE_FILES_S3_SECRET_ACCESS_KEY"], ""),
			Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
		if err != nil {
			t.Fatal(err)
		}
		prefix := env["TOXGATE_FILES_S3_PREFIX"]
		for o := range s3c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			ids[strings.TrimPrefix(o.Key, prefix)] = true
		}
		for u := range s3c.ListIncompleteUploads(ctx, bucket, prefix, true) {
			if u.Err != nil {
				t.Fatal(u.Err)
			}
			ids[strings.TrimPrefix(u.Key, prefix)] = true
		}
	}
	return int(n), len(ids)
}

// gatewayEnv is the gateway's environment as a map (later entries win).
func gatewayEnv(g *harness.Gateway) map[string]string {
	out := map[string]string{}
	for _, kv := range g.Env {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// fileBackends are the file store's backends a gateway test runs on: the
// default files directory, segment collections, and a bucket of a real
// S3-compatible server (versitygw) started for the test.
var fileBackends = []struct {
	name string
	env  func(t *testing.T) []string
}{
	{"dir", func(*testing.T) []string { return nil }},
	{"mongodb", func(*testing.T) []string { return []string{"TOXGATE_FILES_BACKEND=mongodb"} }},
	{"s3", func(t *testing.T) []string {
		srv := s3test.Start(t)
		return srv.Env(srv.Bucket(t), "files/")
	}},
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func testBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = "0123456789,abcdef\n"[r.IntN(18)]
	}
	return b
}

// fileFixture is a gateway with an org, a public and a private dataset, a
// sysadmin token, an editor, a member and an outsider.
type fileFixture struct {
	g                               *harness.Gateway
	admin, editor, member, outsider string
	public, private                 string // dataset ids
	publicName                      string
}

func newFileFixture(t *testing.T, opts ...harness.Option) *fileFixture {
	t.Helper()
	g := harness.Start(t, opts...)
	f := &fileFixture{g: g, admin: adminToken(t, g)}
	for _, u := range []string{"editor", "member", "outsider"} {
		provision(t, g, f.admin, u, "password-"+u+"-1", true)
	}
	f.editor = tokenFor(t, g, f.admin, "editor", nil)
	f.member = tokenFor(t, g, f.admin, "member", nil)
	f.outsider = tokenFor(t, g, f.admin, "outsider", nil)
	if code, out := ckan(t, g, "organization_create", f.admin, map[string]any{"name": "tox-lab", "users": []any{
		map[string]any{"name": "editor", "capacity": "editor"}, map[string]any{"name": "member", "capacity": "member"}}}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	for _, d := range []struct {
		name    string
		private bool
		id      *string
	}{{"viability-public", false, &f.public}, {"viability-private", true, &f.private}} {
		code, out := ckan(t, g, "package_create", f.editor, map[string]any{"name": d.name, "owner_org": "tox-lab", "private": d.private})
		if code != 200 {
			t.Fatalf("package_create: %d %v", code, out)
		}
		*d.id = out["result"].(map[string]any)["id"].(string)
	}
	f.publicName = "viability-public"
	return f
}

// Upload, download (whole, HEAD, ranges, validators), replace, clear,
// delete and purge, on every backend.
func TestResourceUploadDownload(t *testing.T) {
	for _, b := range fileBackends {
		t.Run(b.name, func(t *testing.T) { testResourceUploadDownload(t, harness.WithEnv(b.env(t)...)) })
	}
}

func testResourceUploadDownload(t *testing.T, opts ...harness.Option) {
	f := newFileFixture(t, opts...)
	g := f.g
	data := testBytes(3<<20+777, 1) // several chunks and a short last one
	code, out := uploadAction(t, g, f.editor, "resource_create", map[string]string{"package_id": f.public, "name": "Viability"}, "Viability Table.csv", data)
	if code != 200 {
		t.Fatalf("resource_create: %d %v", code, out)
	}
	res := out["result"].(map[string]any)
	rid := res["id"].(string)
	wantURL := g.URL + "/dataset/" + f.public + "/resource/" + rid + "/download/viability-table.csv"
	if res["url"] != wantURL || res["url_type"] != "upload" || res["hash"] != "sha256:"+sha(data) ||
		res["size"] != float64(len(data)) || res["mimetype"] != "text/csv" || res["last_modified"] == nil || res["format"] != "CSV" {
		t.Fatalf("resource after upload: %v", res)
	}
	// package_show and resource_show agree.
	_, shown := ckan(t, g, "resource_show", "", map[string]any{"id": rid})
	if r := shown["result"].(map[string]any); r["url"] != wantURL || r["hash"] != res["hash"] {
		t.Fatalf("resource_show: %v", r)
	}

	resp, body := fetch(t, g, http.MethodGet, wantURL, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("download: %d, %d bytes (want %d)", resp.StatusCode, len(body), len(data))
	}
	etag := `"` + sha(data) + `"`
	if resp.Header.Get("ETag") != etag || resp.Header.Get("Content-Type") != "text/csv" ||
		resp.Header.Get("Content-Length") != fmt.Sprint(len(data)) || resp.Header.Get("Accept-Ranges") != "bytes" ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), `filename="viability-table.csv"`) || resp.Header.Get("Last-Modified") == "" {
		t.Fatalf("download headers: %v", resp.Header)
	}
	// Without the file name, and by the dataset's name.
	for _, u := range []string{g.URL + "/dataset/" + f.public + "/resource/" + rid + "/download", g.URL + "/dataset/" + f.publicName + "/resource/" + rid + "/download/x.csv"} {
		if resp, body := fetch(t, g, http.MethodGet, u, nil); resp.StatusCode != 200 || !bytes.Equal(body, data) {
			t.Fatalf("download %s: %d", u, resp.StatusCode)
		}
	}
	// HEAD: the headers, no body.
	resp, body = fetch(t, g, http.MethodHead, wantURL, nil)
	if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != int64(len(data)) || resp.Header.Get("ETag") != etag {
		t.Fatalf("HEAD: %d len %d cl %d", resp.StatusCode, len(body), resp.ContentLength)
	}
	// Ranges: resumable downloads.
	n := int64(len(data))
	for _, c := range []struct {
		spec       string
		from, to   int64 // inclusive
		wantStatus int
	}{{"bytes=0-9", 0, 9, 206}, {"bytes=1048570-1048590", 1048570, 1048590, 206}, {"bytes=3145000-", 3145000, n - 1, 206}, {"bytes=-100", n - 100, n - 1, 206}, {"bytes=5-1000000000", 5, n - 1, 206}} {
		resp, body := fetch(t, g, http.MethodGet, wantURL, http.Header{"Range": {c.spec}})
		if resp.StatusCode != c.wantStatus || !bytes.Equal(body, data[c.from:c.to+1]) ||
			resp.Header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", c.from, c.to, n) {
			t.Fatalf("Range %s: %d %q, %d bytes", c.spec, resp.StatusCode, resp.Header.Get("Content-Range"), len(body))
		}
	}
	if resp, _ := fetch(t, g, http.MethodGet, wantURL, http.Header{"Range": {fmt.Sprintf("bytes=%d-", n)}}); resp.StatusCode != 416 || resp.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", n) {
		t.Fatalf("unsatisfiable range: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, body := fetch(t, g, http.MethodGet, wantURL, http.Header{"Range": {"bytes=0-9"}, "If-Range": {`"stale"`}}); resp.StatusCode != 200 || len(body) != len(data) {
		t.Fatalf("If-Range with another ETag must send the whole file: %d", resp.StatusCode)
	}
	if resp, _ := fetch(t, g, http.MethodGet, wantURL, http.Header{"If-None-Match": {etag}}); resp.StatusCode != 304 {
		t.Fatalf("If-None-Match: %d", resp.StatusCode)
	}

	// Replace the file with resource_patch: new bytes, new hash, the old file freed.
	data2 := testBytes(5000, 2)
	code, out = uploadAction(t, g, f.editor, "resource_patch", map[string]string{"id": rid}, "new.csv", data2)
	if code != 200 {
		t.Fatalf("resource_patch: %d %v", code, out)
	}
	res2 := out["result"].(map[string]any)
	if res2["hash"] != "sha256:"+sha(data2) || res2["size"] != float64(len(data2)) || res2["name"] != "Viability" ||
		!strings.HasSuffix(res2["url"].(string), "/download/new.csv") {
		t.Fatalf("after patch: %v", res2)
	}
	if resp, body := fetch(t, g, http.MethodGet, res2["url"].(string), nil); resp.StatusCode != 200 || !bytes.Equal(body, data2) {
		t.Fatalf("download after patch: %d", resp.StatusCode)
	}
	if files, segs := storedFiles(t, g); files != 1 || segs != 1 {
		t.Fatalf("after replacing: %d files, %d with bytes; want 1, 1", files, segs)
	}
	// A resource_update that sends the dict back keeps the file.
	upd := map[string]any{}
	for k, v := range res2 {
		upd[k] = v
	}
	upd["description"] = "kept file"
	if code, out := ckan(t, g, "resource_update", f.editor, upd); code != 200 || out["result"].(map[string]any)["hash"] != res2["hash"] {
		t.Fatalf("resource_update keeping the file: %d %v", code, out)
	}
	if resp, body := fetch(t, g, http.MethodGet, res2["url"].(string), nil); resp.StatusCode != 200 || !bytes.Equal(body, data2) {
		t.Fatalf("download after update: %d", resp.StatusCode)
	}
	// clear_upload turns it back into a link and frees the file.
	code, out = ckan(t, g, "resource_patch", f.editor, map[string]any{"id": rid, "clear_upload": "true", "url": "https://example.org/v.csv"})
	if r := out["result"].(map[string]any); code != 200 || r["url"] != "https://example.org/v.csv" || r["url_type"] != "" || r["hash"] != "" {
		t.Fatalf("clear_upload: %d %v", code, out)
	}
	if resp, _ := fetch(t, g, http.MethodGet, res2["url"].(string), nil); resp.StatusCode != 404 {
		t.Fatalf("download after clear_upload: %d", resp.StatusCode)
	}
	if files, segs := storedFiles(t, g); files != 0 || segs != 0 {
		t.Fatalf("after clear_upload: %d files, %d segments", files, segs)
	}

	// resource_update with a new file, then resource_delete: 404 at once, bytes freed.
	code, out = uploadAction(t, g, f.editor, "resource_update", map[string]string{"id": rid, "name": "again"}, "again.tsv", []byte("a\tb\n1\t2\n"))
	if code != 200 || out["result"].(map[string]any)["mimetype"] != "text/tab-separated-values" {
		t.Fatalf("resource_update with a file: %d %v", code, out)
	}
	url3 := out["result"].(map[string]any)["url"].(string)
	if code, out := ckan(t, g, "resource_delete", f.editor, map[string]any{"id": rid}); code != 200 {
		t.Fatalf("resource_delete: %d %v", code, out)
	}
	if resp, _ := fetch(t, g, http.MethodGet, url3, nil); resp.StatusCode != 404 {
		t.Fatalf("download after delete: %d", resp.StatusCode)
	}
	if files, segs := storedFiles(t, g); files != 0 || segs != 0 {
		t.Fatalf("after resource_delete: %d files, %d segments", files, segs)
	}

	// dataset_purge frees the files of the dataset's resources.
	uploadAction(t, g, f.editor, "resource_create", map[string]string{"package_id": f.public}, "p.csv", []byte("x,y\n"))
	if code, out := ckan(t, g, "package_delete", f.editor, map[string]any{"id": f.public}); code != 200 {
		t.Fatalf("package_delete: %d %v", code, out)
	}
	if files, _ := storedFiles(t, g); files != 1 {
		t.Fatalf("a deleted (not purged) dataset keeps its file: %d files", files)
	}
	if code, out := ckan(t, g, "dataset_purge", f.admin, map[string]any{"id": f.public}); code != 200 {
		t.Fatalf("dataset_purge: %d %v", code, out)
	}
	if files, segs := storedFiles(t, g); files != 0 || segs != 0 {
		t.Fatalf("after purge: %d files, %d segments", files, segs)
	}
}

func TestResourceDownloadAuthorization(t *testing.T) {
	f := newFileFixture(t)
	g := f.g
	data := []byte("smiles,activity\nCCO,0\n")
	code, out := uploadAction(t, g, f.editor, "resource_create", map[string]string{"package_id": f.private}, "lib.csv", data)
	if code != 200 {
		t.Fatalf("upload to the private dataset: %d %v", code, out)
	}
	url := out["result"].(map[string]any)["url"].(string)
	for _, c := range []struct {
		who   string
		h     http.Header
		found bool
	}{
		{"anonymous", nil, false}, {"outsider", http.Header{"Authorization": {f.outsider}}, false},
		{"member", http.Header{"Authorization": {f.member}}, true}, {"member (X-CKAN-API-Key)", http.Header{"X-CKAN-API-Key": {f.member}}, true},
		{"member (Bearer)", http.Header{"Authorization": {"Bearer " + f.member}}, true}, {"sysadmin", http.Header{"Authorization": {f.admin}}, true},
	} {
		resp, body := fetch(t, g, http.MethodGet, url, c.h)
		if c.found != (resp.StatusCode == 200) || c.found && !bytes.Equal(body, data) || !c.found && resp.StatusCode != 404 {
			t.Errorf("%s: %d", c.who, resp.StatusCode)
		}
	}
	// The web session cookie of a member also downloads.
	w := newWebClient(t, g)
	if p := w.login("member", "password-member-1"); p.status != http.StatusSeeOther {
		t.Fatalf("member login: %d %s", p.status, p.body)
	}
	if p := w.get(strings.TrimPrefix(url, g.URL)); p.status != 200 || p.body != string(data) {
		t.Fatalf("download with the session cookie: %d", p.status)
	}
	// Only editors upload: a member's upload is refused and leaves nothing.
	if code, out := uploadAction(t, g, f.member, "resource_create", map[string]string{"package_id": f.private}, "m.csv", data); code != 403 {
		t.Fatalf("member upload: %d %v", code, out)
	}
	if files, _ := storedFiles(t, g); files != 1 {
		t.Fatalf("a refused upload left a file: %d files", files)
	}
}

func TestResourceUploadBadInput(t *testing.T) {
	f := newFileFixture(t, harness.WithEnv("TOXGATE_CATALOG_MAX_RESOURCE_BYTES=1048576"))
	g := f.g
	pkg := map[string]string{"package_id": f.public}
	cases := []struct {
		name       string
		token      string
		fields     map[string]string
		field      string
		file       string
		data       []byte
		wantStatus int
		wantText   string
	}{
		{"anonymous", "", pkg, "upload", "a.csv", []byte("x"), 403, "requires an authenticated user"},
		{"too large", f.editor, pkg, "upload", "big.csv", testBytes(1048577, 3), 413, "limit of 1048576 bytes"},
		{"empty file", f.editor, pkg, "upload", "empty.csv", nil, 409, "empty"},
		{"file in another field", f.editor, pkg, "data", "a.csv", []byte("x"), 409, "field named upload"},
		{"no file but url_type upload", f.editor, map[string]string{"package_id": f.public, "url_type": "upload"}, "upload", "", nil, 409, "Missing value"},
		{"unknown dataset", f.editor, map[string]string{"package_id": "nope"}, "upload", "a.csv", []byte("x"), 404, "Not found"},
	}
	for _, c := range cases {
		ct, body := multipartBody(t, c.fields, c.field, c.file, c.data)
		h := http.Header{"Content-Type": {ct}}
		if c.token != "" {
			h.Set("Authorization", c.token)
		}
		resp, out, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/resource_create", h, body)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if resp.StatusCode != c.wantStatus || !strings.Contains(string(out), c.wantText) || !strings.Contains(string(out), `"success": false`) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, out)
		}
	}
	// A file sent to an action that takes none is refused, not dropped.
	ct, body := multipartBody(t, map[string]string{"name": "with-file"}, "upload", "a.csv", []byte("x"))
	resp, out, _ := g.Do(context.Background(), http.MethodPost, "/api/3/action/package_create", http.Header{"Content-Type": {ct}, "Authorization": {f.editor}}, body)
	if resp.StatusCode != 409 || !strings.Contains(string(out), "Files are accepted only by resource_create") {
		t.Errorf("file to package_create: %d %s", resp.StatusCode, out)
	}
	if files, segs := storedFiles(t, g); files != 0 || segs != 0 {
		t.Fatalf("bad uploads left %d files, %d segments", files, segs)
	}
	// The limit is the upload's own: other routes keep server.max_body_bytes.
	big := bytes.Repeat([]byte("a"), 9<<20)
	resp, _, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/package_create", http.Header{"Content-Type": {"application/json"}, "Authorization": {f.editor}}, big)
	if err != nil {
		t.Fatalf("9 MiB JSON body: %v", err)
	}
	if resp.StatusCode != 413 {
		t.Errorf("9 MiB JSON body: %d", resp.StatusCode)
	}
}

// Two gateways on one store, with the bytes in its segment collections,
// serve each other's files.
func TestFilesSharedByTwoGateways(t *testing.T) {
	f := newFileFixture(t, harness.WithEnv("TOXGATE_FILES_BACKEND=mongodb"))
	other := harness.Start(t, harness.WithEnv("TOXGATE_MONGODB_URI="+f.g.StoreURI(), "TOXGATE_FILES_BACKEND=mongodb"))
	data := testBytes(1500000, 4)
	code, out := uploadAction(t, other, f.editor, "resource_create", map[string]string{"package_id": f.public}, "shared.csv", data)
	if code != 200 {
		t.Fatalf("upload through the second gateway: %d %v", code, out)
	}
	url := out["result"].(map[string]any)["url"].(string)
	path := url[strings.Index(url, "/dataset/"):]
	resp, body, err := f.g.Do(context.Background(), http.MethodGet, path, nil, nil)
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("download from the first gateway: %v %d, %d bytes", err, resp.StatusCode, len(body))
	}
	_ = io.Discard
}

// With the dir backend on a directory that gateways share, a file uploaded
// through one gateway downloads (whole and by range) from the other, a
// replaced file leaves the directory, and nothing but the held file is left.
func TestFilesDirBackendSharedByTwoGateways(t *testing.T) {
	dir := t.TempDir()
	f := newFileFixture(t, harness.WithEnv("TOXGATE_FILES_DIR="+dir))
	other := harness.Start(t, harness.WithEnv("TOXGATE_MONGODB_URI="+f.g.StoreURI(), "TOXGATE_FILES_DIR="+dir))
	data := testBytes(2500000, 9)
	code, out := uploadAction(t, other, f.editor, "resource_create", map[string]string{"package_id": f.public}, "dir.csv", data)
	if code != 200 || out["result"].(map[string]any)["hash"] != "sha256:"+sha(data) {
		t.Fatalf("upload through the second gateway: %d %v", code, out)
	}
	res := out["result"].(map[string]any)
	path := res["url"].(string)[strings.Index(res["url"].(string), "/dataset/"):]
	if resp, body, err := f.g.Do(context.Background(), http.MethodGet, path, nil, nil); err != nil || resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("download from the first gateway: %v", err)
	}
	if resp, body, _ := f.g.Do(context.Background(), http.MethodGet, path, http.Header{"Range": {"bytes=1048570-1048599"}}, nil); resp.StatusCode != 206 || !bytes.Equal(body, data[1048570:1048600]) {
		t.Fatalf("range from the directory: %d", resp.StatusCode)
	}
	if files, segs := storedFiles(t, f.g); files != 1 || segs != 1 {
		t.Fatalf("metadata %d, with bytes %d; want 1, 1", files, segs)
	}
	data2 := testBytes(1000, 10)
	if code, out := uploadAction(t, f.g, f.editor, "resource_patch", map[string]string{"id": res["id"].(string)}, "dir2.csv", data2); code != 200 {
		t.Fatalf("replace: %d %v", code, out)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("the files directory holds %d entries after a replacement, want 1", len(entries))
	}
	if info, err := os.Stat(dir + "/" + entries[0].Name()); err != nil || info.Size() != int64(len(data2)) {
		t.Fatalf("the file left is not the new one: %v", err)
	}
}
