package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// partialUpload opens a connection and sends the head of a multipart
// resource_patch of file (declared whole) and its first sent bytes; the
// caller finishes it with the returned function or abandons it.
func partialUpload(t *testing.T, g *harness.Gateway, token, resID string, file []byte, sent int) (finish func() (int, string), conn net.Conn) {
	t.Helper()
	ct, body := multipartBody(t, map[string]string{"id": resID}, "upload", "replaced.csv", file)
	u, _ := url.Parse(g.URL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("POST /api/3/action/resource_patch HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", u.Host, token, ct, len(body))
	cut := bytes.Index(body, file) + sent
	if _, err := c.Write(append([]byte(head), body[:cut]...)); err != nil {
		t.Fatal(err)
	}
	return func() (int, string) {
		if _, err := c.Write(body[cut:]); err != nil {
			return 0, err.Error()
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}, c
}

// downloadIs checks that the resource's download serves whole bytes that
// match the hash resource_show reports, and returns them.
func downloadIs(t testing.TB, g *harness.Gateway, token, resID string) []byte {
	t.Helper()
	_, out := ckan(t, g, "resource_show", token, map[string]any{"id": resID})
	r := out["result"].(map[string]any)
	u := r["url"].(string)
	resp, body := fetch(t, g, http.MethodGet, g.URL+u[strings.Index(u, "/dataset/"):], http.Header{"Authorization": {token}})
	if resp.StatusCode != 200 || "sha256:"+sha(body) != r["hash"] || float64(len(body)) != r["size"] {
		t.Fatalf("download: %d, %d bytes, sha256:%s; resource says %v %v", resp.StatusCode, len(body), sha(body), r["hash"], r["size"])
	}
	return body
}

// sweptFixture is a file fixture whose sweep runs every 250 ms with a 2 s
// grace, and a resource holding a file of size bytes (returned).
func sweptFixture(t *testing.T, size int, seed uint64, env ...string) (*fileFixture, string, []byte) {
	t.Helper()
	f := newFileFixture(t, harness.WithEnv(append([]string{"TOXGATE_CATALOG_UPLOAD_GRACE=2s", "TOXGATE_CATALOG_SWEEP_INTERVAL=250ms"}, env...)...))
	old := testBytes(size, seed)
	code, out := uploadAction(t, f.g, f.editor, "resource_create", map[string]string{"package_id": f.public}, "v1.csv", old)
	if code != 200 {
		t.Fatalf("upload: %d %v", code, out)
	}
	return f, out["result"].(map[string]any)["id"].(string), old
}

// Under kill -9 of the gateway in the middle of an upload, the resource
// keeps its old file, and the partial upload (a pending file, a ".part" in
// the files directory, an incomplete multipart upload with two parts in
// the bucket) is swept after the restart, on every backend.
func TestUploadSurvivesGatewayKill(t *testing.T) {
	for _, b := range fileBackends {
		t.Run(b.name, func(t *testing.T) { testUploadSurvivesGatewayKill(t, b.env(t)...) })
	}
}

func testUploadSurvivesGatewayKill(t *testing.T, env ...string) {
	f, rid, old := sweptFixture(t, 1500000, 5, env...)
	g := f.g
	next := testBytes(16<<20, 6)
	partialUpload(t, g, f.editor, rid, next, 13<<20)
	waitFor(t, 30*time.Second, "a pending upload with chunks in the store", func() bool {
		files, segs := storedFiles(t, g)
		return files == 2 && segs == 2
	})
	// File traffic leaves readiness alone.
	if resp, body := fetch(t, g, http.MethodGet, g.URL+"/readyz", nil); resp.StatusCode != 200 {
		t.Fatalf("/readyz during an upload: %d %s", resp.StatusCode, body)
	}
	storeURI := g.StoreURI()
	g.Kill9()
	g.Relaunch()
	if g.StoreURI() == storeURI {
		t.Fatal("the relaunched gateway reports the old store")
	}
	if got := downloadIs(t, g, f.editor, rid); !bytes.Equal(got, old) {
		t.Fatal("after kill -9 mid-upload the resource does not serve its old bytes")
	}
	waitFor(t, 30*time.Second, "the sweep to remove the partial upload", func() bool {
		files, segs := storedFiles(t, g)
		return files == 1 && segs == 1
	})
	if !g.WaitLog(regexp.MustCompile(`file sweep removed leftovers.*abandoned_uploads.?.?1`), 10*time.Second) {
		t.Fatalf("no log line counts the swept upload:\n%s", g.Logs())
	}
}

// Under kill -9 of the catalog plugin in the middle of an upload, the
// resource ends with either its old or its new file, whole, and nothing
// is left over.
func TestUploadSurvivesPluginKill(t *testing.T) {
	f, rid, old := sweptFixture(t, 1200000, 7)
	g := f.g
	next := testBytes(3<<20, 8)
	finish, _ := partialUpload(t, g, f.editor, rid, next, 2<<20)
	waitFor(t, 30*time.Second, "a pending upload", func() bool { files, _ := storedFiles(t, g); return files == 2 })
	pid, ok := pluginPID(t, g, f.admin)
	if !ok {
		t.Fatal("no plugin pid")
	}
	sockets := regexp.MustCompile(`"socket_dir":"([^"]*/toxgate-plugin-[0-9]+)"`).FindAllStringSubmatch(g.Logs(), -1)
	if len(sockets) == 0 {
		t.Fatalf("no plugin socket in the logs:\n%s", g.Logs())
	}
	oldSockDir := sockets[len(sockets)-1][1]
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	status, body := finish()
	if status != 200 && status != 503 {
		t.Fatalf("upload finished with %d %s", status, body)
	}
	waitFor(t, 30*time.Second, "the plugin to be back", func() bool {
		p, ok := pluginPID(t, g, f.admin)
		return ok && p != pid
	})
	got := downloadIs(t, g, f.editor, rid)
	if !bytes.Equal(got, old) && !bytes.Equal(got, next) {
		t.Fatal("the resource serves neither the old nor the new file")
	}
	if status == 200 && !bytes.Equal(got, next) {
		t.Fatal("an acknowledged upload is not served")
	}
	waitFor(t, 30*time.Second, "one file left in the store", func() bool {
		files, segs := storedFiles(t, g)
		return files == 1 && segs == 1
	})
	// The killed plugin's socket directory is gone; the new one is private.
	waitFor(t, 10*time.Second, "the killed plugin's socket directory to be removed", func() bool {
		_, err := os.Stat(oldSockDir)
		return os.IsNotExist(err)
	})
	sockets = regexp.MustCompile(`"socket_dir":"([^"]*/toxgate-plugin-[0-9]+)"`).FindAllStringSubmatch(g.Logs(), -1)
	newDir := sockets[len(sockets)-1][1]
	info, err := os.Stat(newDir)
	if err != nil || info.Mode().Perm() != 0o700 || newDir == oldSockDir {
		t.Fatalf("new plugin socket directory %s: %v", newDir, err)
	}
}

// A 300 MB upload and its download stream through the gateway: neither the
// gateway nor the plugin holds the file in memory, and the bytes come back
// with the hash the resource reports.
func TestLargeUploadBoundedMemory(t *testing.T) {
	f := newFileFixture(t)
	g := f.g
	const size = 300 << 20
	pids := []int{g.PID()}
	if pid, ok := pluginPID(t, g, f.admin); ok {
		pids = append(pids, pid)
	}
	want := sha256.New()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		_ = mw.WriteField("package_id", f.public)
		fw, _ := mw.CreateFormFile("upload", "omics-matrix.tsv")
		_, err := io.CopyN(io.MultiWriter(fw, want), mathrand.NewChaCha8([32]byte{11, 12}), size)
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	var res map[string]any
	_, upPeak := sampled(pids, func() {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/3/action/resource_create", pr)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", f.editor)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("upload: %d %v %v", resp.StatusCode, err, out)
		}
		res = out["result"].(map[string]any)
	})
	if res["hash"] != "sha256:"+hex.EncodeToString(want.Sum(nil)) || res["size"] != float64(size) {
		t.Fatalf("uploaded resource: %v", res)
	}
	got := sha256.New()
	var n int64
	_, downPeak := sampled(pids, func() {
		req, _ := http.NewRequest(http.MethodGet, res["url"].(string), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		n, _ = io.Copy(got, resp.Body)
	})
	if n != size || hex.EncodeToString(got.Sum(nil)) != hex.EncodeToString(want.Sum(nil)) {
		t.Fatalf("download: %d bytes, hash differs", n)
	}
	t.Logf("peak RSS growth of gateway + plugin: upload %d MiB, download %d MiB (file %d MiB)", upPeak>>20, downPeak>>20, size>>20)
	if upPeak > 128<<20 || downPeak > 128<<20 {
		t.Fatalf("peak RSS growth %d / %d MiB: the file is held in memory", upPeak>>20, downPeak>>20)
	}
}
