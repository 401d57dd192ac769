package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"toxgate/internal/testenv"

	"github.com/chromedp/chromedp"

	"toxgate/gateway/harness"
)

// The resource form in a real browser sends the file with tus-js-client
// (served by the gateway from /static/vendor/) to /uploads/, then attaches
// it by upload_id; the resource serves the same bytes, the upload is gone
// from the upload directory, and tus-js-client's stored fingerprint (its
// way to resume after a reload) is removed on success.
func TestWebResourceUploadTus(t *testing.T) {
	g, f, ed, file, data := tusFormFixture(t, "tus plate.csv", 2<<20)
	ed.open("/dataset/herg-public/resource/new")
	if !eval[bool](ed, `typeof window.tus === "object" && window.tus.isSupported`) {
		t.Fatal("the resource form did not load tus-js-client")
	}
	// Count the uploads the page starts through tus.
	eval[bool](ed, `(function(){ var s = window.tus.Upload.prototype.start; window.tus.Upload.prototype.start = function(){ sessionStorage.setItem("tus-starts", String(Number(sessionStorage.getItem("tus-starts")||0)+1)); return s.apply(this, arguments); }; return true; })()`)
	ed.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#upload"), []string{file}), chromedp.SendKeys(chromedp.CSS("#res-name"), "Tus plate"))
	ed.do("submit", chromedp.Click(chromedp.CSS("#save-resource")), chromedp.WaitVisible(chromedp.CSS("#resource-title")))
	if n := eval[string](ed, `sessionStorage.getItem("tus-starts") || "0"`); n != "1" {
		t.Fatalf("tus uploads started by the page: %s, want 1", n)
	}
	if n := eval[int](ed, `Object.keys(localStorage).filter(function(k){ return k.indexOf("tus::") === 0; }).length`); n != 0 {
		t.Errorf("%d tus fingerprints left after success", n)
	}
	_, out := ckan(t, g, "package_show", f.editor, map[string]any{"id": "herg-public"})
	var res map[string]any
	for _, r := range out["result"].(map[string]any)["resources"].([]any) {
		if r.(map[string]any)["name"] == "Tus plate" {
			res = r.(map[string]any)
		}
	}
	if res == nil || res["url_type"] != "upload" || res["hash"] != "sha256:"+sha(data) || !strings.HasSuffix(res["url"].(string), "tus-plate.csv") {
		t.Fatalf("the form's resource: %v", res)
	}
	if got := downloadIs(t, g, f.editor, res["id"].(string)); !bytes.Equal(got, data) {
		t.Fatal("download differs")
	}
	left, _ := filepath.Glob(filepath.Join(g.DataDir, "uploads", "*.info"))
	if len(left) != 0 {
		t.Fatalf("uploads left after the attach: %v", left)
	}
}

// tusFormFixture starts a gateway serving tus-js-client (skipping without
// it outside CI), seeds the catalog, logs the editor in and writes a CSV
// file of about size bytes named name.
func tusFormFixture(t *testing.T, name string, size int) (*harness.Gateway, *webFixture, *tab, string, []byte) {
	t.Helper()
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+t.TempDir()))
	if resp, _, err := g.Do(context.Background(), http.MethodGet, "/static/vendor/tus.min.js", nil, nil); err != nil || resp.StatusCode != 200 {
		if testenv.CI() {
			t.Fatalf("the gateway serves no tus-js-client (make web-vendor): %v", err)
		}
		t.Skip("the gateway was built without tus-js-client (no npm): the form uploads with multipart")
	}
	f := seedCatalog(t, g)
	ed := newBrowser(t).tab(g, "editor")
	ed.login("eddie", f.passwords["eddie"])
	var data bytes.Buffer
	data.WriteString("well,compound,viability\n")
	for i := 0; data.Len() < size; i++ {
		fmt.Fprintf(&data, "%d,TUS-%d,%.4f\n", i, i%89, float64(i%997)/997)
	}
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, data.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return g, f, ed, file, data.Bytes()
}
