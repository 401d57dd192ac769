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
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"toxgate/gateway/harness"
	"toxgate/internal/testenv"
)

// chemServed reports whether the gateway serves OpenChemLib JS; on CI it
// must (make web-vendor).
func chemServed(t *testing.T, g *harness.Gateway) bool {
	t.Helper()
	resp, _, err := g.Do(context.Background(), http.MethodGet, "/static/vendor/openchemlib.js", http.Header{"Accept-Encoding": {"gzip"}}, nil)
	if err != nil || resp.StatusCode != 200 {
		if testenv.CI() {
			t.Fatalf("the gateway serves no OpenChemLib JS (make web-vendor): %v", err)
		}
		return false
	}
	return true
}

// needChemJS skips (fails on CI) when the gateway was built without
// OpenChemLib JS (make web-vendor without npm).
func needChemJS(t *testing.T, g *harness.Gateway) {
	t.Helper()
	if !chemServed(t, g) {
		t.Skip("the gateway was built without OpenChemLib JS (no npm): SMILES show as text")
	}
	resp, body, err := g.Do(context.Background(), http.MethodGet, "/static/vendor/openchemlib.js", http.Header{"Accept-Encoding": {"gzip"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Served compressed: the module is 1.1 MB, about 340 KB gzipped.
	if resp.Header.Get("Content-Encoding") != "gzip" || len(body) > 600<<10 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("openchemlib.js: %s, %s, %d bytes", resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"), len(body))
	}
}

// cspWatch makes the tab record every Content-Security-Policy violation of
// the pages it opens (in window.__csp), from before the pages' own scripts.
func cspWatch(tb *tab) {
	tb.do("watch CSP violations", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.__csp = []; document.addEventListener("securitypolicyviolation", function (e) { window.__csp.push(e.violatedDirective + " " + e.blockedURI + " " + e.sourceFile + ":" + e.lineNumber); });`})
		return err
	}))
}

func cspViolations(tb *tab) []string {
	tb.b.t.Helper()
	if !eval[bool](tb, `Array.isArray(window.__csp)`) {
		tb.b.t.Fatal("the CSP watch is not installed in the page")
	}
	return eval[[]string](tb, `window.__csp`)
}

// Pictures of molecules in a real browser: the DataStore preview of a
// table with a SMILES column draws each readable SMILES above its text
// (which stays), leaves a SMILES the library cannot read and one past the
// length bound as text, and the page keeps its strict CSP.
func TestWebMoleculeDrawingsInPreview(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+t.TempDir()))
	needChemJS(t, g)
	f := seedCatalog(t, g)
	long := strings.Repeat("C", 301)
	csv := []byte("compound,SMILES,note\nethanol,CCO,ok\nphenol,c1ccccc1O,ok\nbroken,C1CC((X,unreadable\nlong," + long + ",too long\ncaffeine,Cn1cnc2c1c(=O)n(C)c(=O)n2C,ok\n")
	res := uploadResource(t, g, f.editor, "herg-public", "smiles-table.csv", csv)
	waitFor(t, 60*time.Second, "the CSV loaded into the DataStore", func() bool {
		_, out := ckan(t, g, "resource_show", f.editor, map[string]any{"id": res["id"]})
		r, _ := out["result"].(map[string]any)
		return r != nil && r["datastore_active"] == true
	})

	b := newBrowser(t)
	anon := b.tab(g, "anonymous")
	cspWatch(anon)
	anon.open(fmt.Sprintf("/dataset/herg-public/resource/%s", res["id"]))
	if !strings.Contains(anon.text("#preview-note"), "DataStore") {
		t.Fatalf("the preview is not the DataStore table: %q", anon.text("#preview-note"))
	}
	waitFor(t, 60*time.Second, "three drawings in the preview", func() bool {
		return eval[int](anon, `document.querySelectorAll("#preview-table img.depiction").length`) == 3 &&
			eval[int](anon, `document.querySelectorAll("#preview-table .smiles-bad").length`) == 1
	})
	rows := eval[[]string](anon, `Array.from(document.querySelectorAll("#preview-table tr")).slice(1).map(function (tr) {
		var td = tr.children[1], img = td.querySelector("img.depiction");
		return td.textContent.trim() + "|" + (img ? (img.naturalWidth > 0 && img.getAttribute("src").indexOf("data:image/svg+xml") === 0 ? "drawn" : "broken image") : "text") +
			"|" + (td.querySelector(".smiles-bad") ? "bad" : "") })`)
	want := []string{"CCO|drawn|", "c1ccccc1O|drawn|", "C1CC((X|text|bad", long + "|text|", "Cn1cnc2c1c(=O)n(C)c(=O)n2C|drawn|"}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("preview SMILES cells:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if n := eval[int](anon, `document.querySelectorAll("#preview-table td:not(:nth-child(2)) img").length`); n != 0 {
		t.Errorf("%d drawings outside the SMILES column", n)
	}
	if v := cspViolations(anon); len(v) > 0 {
		t.Errorf("CSP violations on the resource page: %v", v)
	}
	// The watch sees a violation when there is one: an inline style.
	eval[bool](anon, `(function () { document.querySelector("main").setAttribute("style", "color: red"); return true; })()`)
	waitFor(t, 10*time.Second, "the CSP watch reports an inline style", func() bool { return len(cspViolations(anon)) > 0 })
	anon.shot("smiles-preview", 1280)
	anon.shot("smiles-preview", 390)
	if !anon.fitsPhone() {
		t.Errorf("the preview with drawings is wider than a 390 px phone: %v", anon.overflowing())
	}

	// A table of three SMILES columns: 50 rows a page, 150 SMILES, of
	// which the server marks 100 (DepictPerTable) and the page draws those.
	var wide strings.Builder
	wide.WriteString("smiles_a,smiles_b,smiles_c\n")
	for i := range 60 {
		fmt.Fprintf(&wide, "%s,%s,%s\n", strings.Repeat("C", i%7+1), "c1ccccc1"+strings.Repeat("C", i%5), "CC(=O)O")
	}
	wideRes := uploadResource(t, g, f.editor, "herg-public", "wide.csv", []byte(wide.String()))
	waitFor(t, 60*time.Second, "the wide CSV loaded into the DataStore", func() bool {
		_, out := ckan(t, g, "resource_show", f.editor, map[string]any{"id": wideRes["id"]})
		r, _ := out["result"].(map[string]any)
		return r != nil && r["datastore_active"] == true
	})
	anon.open(fmt.Sprintf("/dataset/herg-public/resource/%s", wideRes["id"]))
	waitFor(t, 60*time.Second, "the marked cells drawn", func() bool {
		return eval[int](anon, `document.querySelectorAll("#preview-table img.depiction").length`) == 100
	})
	if n := eval[int](anon, `document.querySelectorAll("#preview-table td").length`); n != 150 {
		t.Errorf("%d cells in the wide preview, want 150", n)
	}
	if n := eval[int](anon, `document.querySelectorAll("#preview-table [data-depict]").length`); n != 100 {
		t.Errorf("%d cells marked, want the bound 100", n)
	}

	// Without JavaScript the same page shows every SMILES as text.
	resp, body, err := g.Do(context.Background(), http.MethodGet, fmt.Sprintf("/dataset/herg-public/resource/%s", res["id"]), nil, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resource page: %v %v", err, resp)
	}
	for _, s := range []string{"CCO", "c1ccccc1O", "C1CC((X", long} {
		if !bytes.Contains(body, []byte(">"+s+"<")) {
			t.Errorf("the page's markup lacks the SMILES text %q", s)
		}
	}
	if bytes.Contains(body, []byte(`data-depict>`+long)) {
		t.Error("a SMILES past the length bound is marked for drawing")
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
}

// A model page draws what is typed in its SMILES box (or read into it from
// a file), its structure editor
// puts a drawn structure into the box, the prediction runs on it, and the
// result table draws the structures it answers.
func TestWebModelStructureEditor(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+modulesDir(t, "herg")))
	needChemJS(t, g)
	admin := adminToken(t, g)
	provision(t, g, admin, "mia", "mia-password-1", true, "models")
	b := newBrowser(t)
	mia := b.tab(g, "member")
	cspWatch(mia)
	mia.login("mia", "mia-password-1")
	mia.open("/models/herg")
	const box, drawings = "#smiles-list", "#depict-run-form-0-f_smiles"
	mia.do("type two SMILES, one unreadable", chromedp.WaitVisible(chromedp.CSS(drawings+"")), chromedp.Clear(chromedp.CSS(box)),
		chromedp.SendKeys(chromedp.CSS(box), "c1ccccc1O\nC1CC((X"))
	waitFor(t, 30*time.Second, "the typed SMILES drawn", func() bool {
		return eval[string](mia, `Array.from(document.querySelectorAll("`+drawings+` figure")).map(function (f) {
			var img = f.querySelector("img"); return f.textContent + ":" + (img && img.naturalWidth > 0 ? "drawn" : f.classList.contains("smiles-bad") ? "bad" : "none") }).join(",")`) ==
			"c1ccccc1O:drawn,C1CC((X:bad"
	})

	// A file of SMILES read into the box is drawn too.
	list := filepath.Join(t.TempDir(), "batch.smi")
	if err := os.WriteFile(list, []byte("c1ccccc1O\nCCN(CC)CC\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mia.do("choose a file of SMILES", chromedp.SetUploadFiles(chromedp.CSS("#smiles-file"), []string{list}))
	waitFor(t, 30*time.Second, "the file's SMILES drawn", func() bool {
		return eval[string](mia, `Array.from(document.querySelectorAll("`+drawings+` figure")).map(function (f) { return f.textContent + (f.querySelector("img") ? ":drawn" : ""); }).join(",")`) == "c1ccccc1O:drawn,CCN(CC)CC:drawn"
	})

	// The editor opens with the box's first structure; the box emptied,
	// a click on the canvas draws a bond (the editor's default tool) on a
	// fresh drawing, and "Use this structure" puts its SMILES into the box.
	mia.do("open the editor", chromedp.Click(chromedp.CSS("#draw-run-form-0-f_smiles")),
		chromedp.WaitVisible(chromedp.CSS("#editor-run-form-0-f_smiles [data-openchemlib-canvas-editor]")))
	mia.shot("editor", 1280)
	mia.shot("editor", 390)
	eval[bool](mia, `(function () { var b = document.querySelector("`+box+`"); b.value = ""; b.dispatchEvent(new Event("input")); return true; })()`)
	mia.do("use the structure loaded from the box", chromedp.Click(chromedp.CSS("#use-run-form-0-f_smiles")))
	if got := eval[string](mia, `document.querySelector("`+box+`").value`); got != "Oc1ccccc1" {
		t.Errorf("the editor opened on the box's SMILES gave %q, want phenol Oc1ccccc1", got)
	}
	// A structure drawn on a cleared canvas goes to a new line of the batch
	// box.
	mia.do("open the editor again", chromedp.Click(chromedp.CSS("#draw-run-form-0-f_smiles")),
		chromedp.WaitVisible(chromedp.CSS("#editor-run-form-0-f_smiles [data-openchemlib-canvas-editor]")))
	mia.do("clear the drawing", chromedp.Click(chromedp.CSS("#clear-run-form-0-f_smiles")))
	mia.do("draw on the canvas", chromedp.Click(chromedp.CSS("#editor-run-form-0-f_smiles .chem-editor-canvas")))
	mia.do("use the drawn structure", chromedp.Click(chromedp.CSS("#use-run-form-0-f_smiles")))
	if got := eval[string](mia, `document.querySelector("`+box+`").value`); got != "Oc1ccccc1\nCC" {
		t.Fatalf("the SMILES box holds %q, want phenol then the drawn ethane CC (note %q)", got, mia.text("#editor-run-form-0-f_smiles .hint"))
	}
	waitFor(t, 30*time.Second, "the box's structures drawn", func() bool {
		return eval[string](mia, `Array.from(document.querySelectorAll("`+drawings+` figure")).map(function (f) { return f.textContent + (f.querySelector("img") ? ":drawn" : ""); }).join(",")`) == "Oc1ccccc1:drawn,CC:drawn"
	})
	mia.do("run hERG on the structures", chromedp.Click(chromedp.CSS("#run-0")), chromedp.WaitVisible(chromedp.CSS("#result-table")))
	if cells := eval[string](mia, `Array.from(document.querySelectorAll("#result-table tr td:first-child")).map(function (td) { return td.textContent.trim(); }).join(",")`); cells != "Oc1ccccc1,CC" {
		t.Errorf("the result's SMILES %q, want the box's Oc1ccccc1,CC", cells)
	}
	waitFor(t, 30*time.Second, "the result's structures drawn", func() bool {
		return eval[int](mia, `Array.from(document.querySelectorAll("#result-table img.depiction")).filter(function (i) { return i.naturalWidth > 0; }).length`) == 2
	})
	if v := cspViolations(mia); len(v) > 0 {
		t.Errorf("CSP violations on the model page: %v", v)
	}
	mia.shot("result", 1280)
	mia.shot("result", 390)
	if !mia.fitsPhone() {
		t.Errorf("the model page with drawings is wider than a 390 px phone: %v", mia.overflowing())
	}
}
