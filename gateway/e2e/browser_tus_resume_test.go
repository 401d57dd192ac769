package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// An upload from the resource form that stops after its first part (the
// page is left mid-upload) resumes after a reload: choosing the same file
// again continues the same tus upload (tus-js-client finds it by the
// fingerprint it kept in localStorage) instead of creating another, and
// the resource gets the whole file.
func TestWebResourceUploadResumesAfterReload(t *testing.T) {
	g, f, ed, file, data := tusFormFixture(t, "resumed plate.csv", 3<<20)

	// First visit: the upload goes in parts of 1 MiB and is cut off after
	// the first, as when the tab is closed or the connection dies for good.
	ed.open("/dataset/herg-public/resource/new")
	eval[bool](ed, `(function(){
		var U = window.tus.Upload;
		window.tus.Upload = function(file, opts) {
			opts.chunkSize = 1 << 20;
			var up;
			opts.onChunkComplete = function() { up.abort(); document.body.setAttribute("data-cut", String(up.url)); };
			up = new U(file, opts);
			return up;
		};
		return true; })()`)
	ed.do("start the upload", chromedp.SetUploadFiles(chromedp.CSS("#upload"), []string{file}),
		chromedp.SendKeys(chromedp.CSS("#res-name"), "Resumed plate"), chromedp.Click(chromedp.CSS("#save-resource")),
		chromedp.WaitReady(chromedp.CSS("body[data-cut]")))
	first := eval[string](ed, `document.body.getAttribute("data-cut")`)
	if n := eval[int](ed, `Object.keys(localStorage).filter(function(k){ return k.indexOf("tus::") === 0; }).length`); n != 1 {
		t.Fatalf("%d tus fingerprints kept for the cut upload, want 1", n)
	}
	st, off := tusOffset(t, g, urlPath(t, first), f.editor)
	if st != 200 || off != 1<<20 {
		t.Fatalf("the cut upload: %d at offset %d, want 200 at %d", st, off, 1<<20)
	}

	// After a reload the same file is chosen again: the form resumes.
	ed.open("/dataset/herg-public/resource/new")
	ed.do("upload again", chromedp.SetUploadFiles(chromedp.CSS("#upload"), []string{file}),
		chromedp.SendKeys(chromedp.CSS("#res-name"), "Resumed plate"), chromedp.Click(chromedp.CSS("#save-resource")),
		chromedp.WaitVisible(chromedp.CSS("#resource-title")))
	if n := strings.Count(g.Logs(), `"method":"POST","path":"/uploads/"`); n != 1 {
		t.Errorf("%d uploads created, want 1 (the second visit resumes the first)", n)
	}
	_, out := ckan(t, g, "package_show", f.editor, map[string]any{"id": "herg-public"})
	var res map[string]any
	for _, r := range out["result"].(map[string]any)["resources"].([]any) {
		if r.(map[string]any)["name"] == "Resumed plate" {
			res = r.(map[string]any)
		}
	}
	if res == nil || res["hash"] != "sha256:"+sha(data) || res["size"] != float64(len(data)) {
		t.Fatalf("the resumed resource: %v", res)
	}
}

// urlPath is the path of an absolute URL.
func urlPath(t *testing.T, u string) string {
	t.Helper()
	i := strings.Index(u, "/uploads/")
	if i < 0 {
		t.Fatalf("not an upload URL: %q", u)
	}
	return u[i:]
}
