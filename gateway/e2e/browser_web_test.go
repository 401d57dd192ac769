package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"toxgate/gateway/harness"
)

// screenshotDir is where the browser tests save screenshots:
// $TOXGATE_SCREENSHOT_DIR when set (to look at them), else the test's
// artifact directory (go test -artifacts -outputdir DIR keeps them).
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("TOXGATE_SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.ArtifactDir()
}

// apiSearch runs package_search as a token (anonymous when empty) and
// returns the dataset names and the count.
func apiSearch(t *testing.T, g *harness.Gateway, token string, args map[string]any) ([]string, int) {
	t.Helper()
	data := map[string]any{"include_private": true, "rows": 1000}
	for k, v := range args {
		data[k] = v
	}
	code, out := ckan(t, g, "package_search", token, data)
	if code != 200 {
		t.Fatalf("package_search %v: %d %v", args, code, out)
	}
	res := out["result"].(map[string]any)
	var names []string
	for _, d := range res["results"].([]any) {
		names = append(names, d.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	return names, int(res["count"].(float64))
}

// uploadResource adds a resource with a file through the API (multipart).
func uploadResource(t *testing.T, g *harness.Gateway, token, dataset, filename string, content []byte) map[string]any {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("package_id", dataset)
	_ = mw.WriteField("name", filename)
	fw, _ := mw.CreateFormFile("upload", filename)
	_, _ = fw.Write(content)
	_ = mw.Close()
	resp, out, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/resource_create",
		http.Header{"Content-Type": {mw.FormDataContentType()}, "Authorization": {token}}, body.Bytes())
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resource_create upload: %v %s", err, out)
	}
	var env map[string]any
	_ = json.Unmarshal(out, &env)
	return env["result"].(map[string]any)
}

// browser is one chromium for a test, with a fresh browser context (its
// own cookies) per user.
type browser struct {
	t     *testing.T
	alloc context.Context
	root  context.Context
	shots string
	n     int
}

func newBrowser(t *testing.T) *browser {
	chrome := chromiumPath(t)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))...)
	t.Cleanup(cancelAlloc)
	root, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(root); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &browser{t: t, alloc: alloc, root: root, shots: screenshotDir(t)}
}

// tab is a browser context of one user.
type tab struct {
	b    *browser
	ctx  context.Context
	who  string
	base string
}

func (b *browser) tab(g *harness.Gateway, who string) *tab {
	ctx, cancel := chromedp.NewContext(b.root, chromedp.WithNewBrowserContext())
	b.t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatalf("new browser context: %v", err)
	}
	return &tab{b: b, ctx: ctx, who: who, base: g.URL}
}

func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	t := tb.b.t
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		diag, cancelDiag := context.WithTimeout(tb.ctx, 10*time.Second)
		defer cancelDiag()
		loc, _ := chromedp.Run(diag, chromedp.Location())
		body, _ := chromedp.Run(diag, chromedp.Text(chromedp.CSS("body")))
		t.Fatalf("%s (%s): %v\nbrowser at %s showing:\n%.1500s", what, tb.who, err, loc, body)
	}
}

// open navigates to a path and waits for the page's main element.
func (tb *tab) open(path string) {
	tb.b.t.Helper()
	tb.do("open "+path, chromedp.Navigate(tb.base+path), chromedp.WaitReady(chromedp.CSS("main")))
}

func eval[T any](tb *tab, js string) T {
	tb.b.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		tb.b.t.Fatalf("%s: evaluate %s: %v", tb.who, js, err)
	}
	return v
}

// waitURL waits until the page's address contains part and the page is loaded.
func (tb *tab) waitURL(part string) {
	tb.b.t.Helper()
	waitFor(tb.b.t, 60*time.Second, tb.who+": page at "+part, func() bool {
		return eval[bool](tb, fmt.Sprintf(`location.href.includes(%q) && document.readyState === "complete"`, part))
	})
}

func (tb *tab) text(sel string) string {
	return eval[string](tb, fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent.trim()`, sel))
}

// shot saves a full-page screenshot at the given width.
func (tb *tab) shot(name string, width int64) {
	b := tb.b
	b.t.Helper()
	b.n++
	file := filepath.Join(b.shots, fmt.Sprintf("%s-%02d-%s-%s-%d.png", b.t.Name(), b.n, tb.who, name, width))
	tb.do("screenshot "+name, chromedp.EmulateViewport(width, 900), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		buf, err := chromedp.FullScreenshot(100)(ctx, tg)
		if err != nil {
			return err
		}
		return os.WriteFile(file, buf, 0o644)
	}), chromedp.EmulateViewport(1280, 900))
}

// fitsPhone reports whether the page fits a 390 px wide screen (no
// horizontal scrolling of the page itself; wide tables scroll in their box).
func (tb *tab) fitsPhone() bool {
	tb.do("phone width", chromedp.EmulateViewport(390, 844))
	defer tb.do("laptop width", chromedp.EmulateViewport(1280, 900))
	return eval[bool](tb, `document.documentElement.scrollWidth <= window.innerWidth`)
}

// overflowing names the elements past a 390 px screen's right edge.
func (tb *tab) overflowing() []string {
	tb.do("phone width", chromedp.EmulateViewport(390, 844))
	defer tb.do("laptop width", chromedp.EmulateViewport(1280, 900))
	return eval[[]string](tb, `Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > 391).slice(0, 8).map(e => e.tagName + "#" + e.id + "." + e.className)`)
}

// spills names the elements that reach past the page's content column
// (not counting those inside boxes that scroll on their own).
func (tb *tab) spills() []string {
	return eval[[]string](tb, `(() => { const edge = document.querySelector("main").getBoundingClientRect().right + 1;
		return Array.from(document.querySelectorAll("main *")).filter(e => !e.closest(".scroll, pre, details") && e.getBoundingClientRect().right > edge)
			.slice(0, 8).map(e => e.tagName + "#" + e.id + "." + e.className); })()`)
}

func (tb *tab) login(user, password string) {
	tb.open("/login")
	tb.do("log in "+user,
		chromedp.SendKeys(chromedp.CSS("#username"), user), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS("#login")), chromedp.WaitVisible(chromedp.CSS("#profile")))
}

// pageNames lists the datasets a search page shows.
func (tb *tab) pageNames() []string {
	names := eval[[]string](tb, `Array.from(document.querySelectorAll("#datasets li.dataset-item")).map(e => e.dataset.name)`)
	slices.Sort(names)
	return names
}

type webFixture struct {
	g                        *harness.Gateway
	admin, member, editor    string // API tokens
	csv                      []byte
	csvRes                   map[string]any
	passwords                map[string]string
	all                      []string
	xssTitle, xssOrg, xssTag string
}

// seedCatalog makes two organizations, users of each role and datasets
// public and private, one with hostile text in every field.
func seedCatalog(t *testing.T, g *harness.Gateway) *webFixture {
	f := &webFixture{g: g, passwords: map[string]string{"admin": adminPassword, "mia": "mia-password-1", "eddie": "eddie-password-1"}}
	f.admin = adminToken(t, g)
	provision(t, g, f.admin, "mia", f.passwords["mia"], true, "models")
	provision(t, g, f.admin, "eddie", f.passwords["eddie"], true)
	f.member = tokenFor(t, g, f.admin, "mia", nil)
	f.editor = tokenFor(t, g, f.admin, "eddie", nil)
	f.xssTitle, f.xssOrg = `<script>alert(1)</script>`, `<img src=x onerror=alert(2)> Lab`
	must := func(action string, data map[string]any) map[string]any {
		t.Helper()
		code, out := ckan(t, g, action, f.admin, data)
		if code != 200 {
			t.Fatalf("%s: %d %v", action, code, out)
		}
		return out["result"].(map[string]any)
	}
	must("organization_create", map[string]any{"name": "tox-lab", "title": "Tox Lab", "description": "Cardiotoxicity **screening** lab."})
	must("organization_create", map[string]any{"name": "other-lab", "title": f.xssOrg, "description": `<script>alert(3)</script> text`})
	must("organization_member_create", map[string]any{"id": "tox-lab", "username": "eddie", "role": "editor"})
	must("organization_member_create", map[string]any{"id": "tox-lab", "username": "mia", "role": "member"})
	ds := func(name, title, org string, private bool, tags []string, extra map[string]any) {
		var tl []map[string]string
		for _, tg := range tags {
			tl = append(tl, map[string]string{"name": tg})
		}
		data := map[string]any{"name": name, "title": title, "owner_org": org, "private": private, "tags": tl,
			"notes": "Measured " + name + " data.", "license_id": "cc-by"}
		for k, v := range extra {
			data[k] = v
		}
		must("package_create", data)
		f.all = append(f.all, name)
	}
	ds("herg-public", "hERG patch clamp", "tox-lab", false, []string{"herg", "cardio"}, nil)
	ds("herg-private", "hERG internal screen", "tox-lab", true, []string{"herg"}, nil)
	ds("liver-public", "Liver spheroids", "other-lab", false, []string{"liver"}, map[string]any{
		"resources": []map[string]any{{"url": "http://example.org/liver.json", "name": "liver data", "format": "JSON"}}})
	ds("other-private", "Other lab's private data", "other-lab", true, []string{"liver"}, nil)
	ds("xss-test", f.xssTitle, "other-lab", false, []string{"liver"}, map[string]any{
		"notes":  "**bold** <img src=x onerror=alert(4)> <script>alert(5)</script> [click](javascript:alert(6))",
		"author": `<b onmouseover=alert(7)>Eve</b>`, "version": `"><script>alert(8)</script>`,
		"extras": []map[string]string{{"key": "<i>replicates</i>", "value": `<script>alert(9)</script>`}},
		"resources": []map[string]any{{"url": "javascript:alert(10)", "name": `<svg onload=alert(11)>`, "format": "<b>CSV</b>",
			"description": `<iframe src="javascript:alert(12)"></iframe>`}}})
	slices.Sort(f.all)
	f.csv = []byte("smiles,ic50_uM,label\nCCO,120,non-blocker\nc1ccccc1O,85,non-blocker\nCN1CCC(CC1)c1ccccc1,3.2,blocker\n")
	f.csvRes = uploadResource(t, g, f.editor, "herg-public", "herg-ic50.csv", f.csv)
	// The upload is loaded into the DataStore in the background: wait for
	// it, so that every role's page previews the same table.
	waitFor(t, 60*time.Second, "the CSV loaded into the DataStore", func() bool {
		_, out := ckan(t, g, "resource_show", f.editor, map[string]any{"id": f.csvRes["id"]})
		r, _ := out["result"].(map[string]any)
		return r != nil && r["datastore_active"] == true
	})
	return f
}

// The catalog pages through a real browser for each role: what a page
// lists and opens is what the API gives the same user; search and facet
// clicks change the results as the API says; the resource page previews
// the uploaded CSV; every user-written field renders as text.
func TestWebCatalogPagesByRole(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+t.TempDir()))
	f := seedCatalog(t, g)
	b := newBrowser(t)

	roles := []struct{ who, user, token string }{
		{"anonymous", "", ""}, {"member", "mia", f.member}, {"editor", "eddie", f.editor}, {"sysadmin", "admin", f.admin},
	}
	for _, role := range roles {
		tb := b.tab(g, role.who)
		if role.user != "" {
			tb.login(role.user, f.passwords[role.user])
		}
		want, count := apiSearch(t, g, role.token, nil)
		tb.open("/dataset")
		if got := tb.pageNames(); !slices.Equal(got, want) {
			t.Errorf("%s: /dataset lists %v; package_search gives %v", role.who, got, want)
		}
		if got := tb.text("#result-count strong"); got != fmt.Sprint(count) {
			t.Errorf("%s: result count %q, API count %d", role.who, got, count)
		}
		tb.shot("datasets", 1280)
		// Each dataset opens for exactly those who may see it.
		for _, name := range f.all {
			tb.open("/dataset/" + name)
			code, out := ckan(t, g, "package_show", role.token, map[string]any{"id": name})
			title := tb.text("#dataset-title")
			if code == 200 {
				wantTitle := out["result"].(map[string]any)["title"].(string)
				if !strings.HasPrefix(title, wantTitle) {
					t.Errorf("%s: /dataset/%s shows title %q, API %q", role.who, name, title, wantTitle)
				}
			} else if title != "" || !strings.Contains(tb.text("main"), "not found") {
				t.Errorf("%s: /dataset/%s (API %d) shows %q / %q", role.who, name, code, title, tb.text("main"))
			}
		}
		// An organization's page lists the organization's datasets the user may see.
		wantOrg, _ := apiSearch(t, g, role.token, map[string]any{"fq": "organization:tox-lab"})
		tb.open("/organization/tox-lab")
		if got := tb.pageNames(); !slices.Equal(got, wantOrg) {
			t.Errorf("%s: /organization/tox-lab lists %v; API %v", role.who, got, wantOrg)
		}
		// The resource page previews the uploaded CSV and links its download.
		tb.open("/dataset/herg-public/resource/" + f.csvRes["id"].(string))
		if got := eval[int](tb, `document.querySelectorAll("#preview-table tr").length`); got != 4 {
			t.Errorf("%s: preview table has %d rows, want header + 3: %s", role.who, got, tb.text("#preview"))
		}
		if cell := tb.text("#preview-table tr:nth-child(4) td"); cell != "CN1CCC(CC1)c1ccccc1" {
			t.Errorf("%s: preview's last row starts with %q", role.who, cell)
		}
		if note := tb.text("#preview-note"); !strings.Contains(note, "DataStore") {
			t.Errorf("%s: preview note %q, want a DataStore table", role.who, note)
		}
		href := eval[string](tb, `document.querySelector("#download").getAttribute("href")`)
		h := http.Header{}
		if role.token != "" {
			h.Set("Authorization", role.token)
		}
		resp, body, err := g.Do(context.Background(), http.MethodGet, href, h, nil)
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, f.csv) {
			t.Errorf("%s: download button %s: %v %v %q", role.who, href, err, resp, body)
		}
		if role.who == "anonymous" || role.who == "editor" {
			tb.shot("resource", 1280)
			tb.shot("resource", 390)
			if !tb.fitsPhone() {
				t.Errorf("%s: the resource page is wider than a 390 px phone: %v", role.who, tb.overflowing())
			}
			tb.open("/dataset")
			if !tb.fitsPhone() {
				t.Errorf("%s: /dataset is wider than a 390 px phone: %v", role.who, tb.overflowing())
			}
		}
	}

	// The DataStore preview's column filter gives what datastore_search gives.
	tb := b.tab(g, "facets")
	tb.open("/dataset/herg-public/resource/" + f.csvRes["id"].(string))
	tb.do("filter the preview", chromedp.SetValue(chromedp.CSS("#filter-col"), "label"),
		chromedp.SendKeys(chromedp.CSS("#filter-val"), "blocker"), chromedp.Click(chromedp.CSS("#filter-button")))
	tb.waitURL("val=blocker")
	_, ds := ckan(t, g, "datastore_search", "", map[string]any{"resource_id": f.csvRes["id"], "filters": map[string]any{"label": "blocker"}})
	wantRows := len(ds["result"].(map[string]any)["records"].([]any))
	if got := eval[int](tb, `document.querySelectorAll("#preview-table tr").length`) - 1; got != wantRows || wantRows != 1 {
		t.Errorf("filtered preview: %d rows, datastore_search %d (want 1)", got, wantRows)
	}
	if cell := tb.text("#preview-table tr:nth-child(2) td"); cell != "CN1CCC(CC1)c1ccccc1" {
		t.Errorf("filtered preview row starts with %q", cell)
	}
	tb.shot("datastore-filter", 1280)

	// Search and facets (anonymous): the results follow each click as the API says.
	tb.open("/dataset")
	tb.do("search herg", chromedp.SendKeys(chromedp.CSS("#q"), "herg"), chromedp.Click(chromedp.CSS("#search-button")))
	tb.waitURL("q=herg")
	want, _ := apiSearch(t, g, "", map[string]any{"q": "herg"})
	if got := tb.pageNames(); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("search herg: page %v, API %v", got, want)
	}
	tb.open("/dataset")
	before := tb.pageNames()
	tb.do("click the liver tag facet", chromedp.Click(chromedp.CSS(`section[data-facet="tags"] a[data-value="liver"]`)))
	tb.waitURL("tags=liver")
	want, _ = apiSearch(t, g, "", map[string]any{"fq": `tags:"liver"`})
	got := tb.pageNames()
	if !slices.Equal(got, want) || slices.Equal(got, before) {
		t.Errorf("tag facet liver: page %v (before %v), API %v", got, before, want)
	}
	tb.shot("facet-liver", 1280)
	tb.do("click the JSON format facet", chromedp.Click(chromedp.CSS(`section[data-facet="res_format"] a[data-value="JSON"]`)))
	tb.waitURL("res_format=JSON")
	want, _ = apiSearch(t, g, "", map[string]any{"fq": `tags:"liver" res_format:"JSON"`})
	if got := tb.pageNames(); !slices.Equal(got, want) || len(want) != 1 {
		t.Errorf("tags liver + format JSON: page %v, API %v", got, want)
	}
	tb.shot("facet-liver-json", 390)

	// Escaping: hostile text in every field renders as text.
	tb.open("/dataset/xss-test")
	if got := tb.text("#dataset-title"); got != f.xssTitle {
		t.Errorf("dataset title renders as %q, want the literal text %q", got, f.xssTitle)
	}
	for _, page := range []string{"/dataset/xss-test", "/dataset?q=script", "/organization", "/organization/other-lab"} {
		tb.open(page)
		bad := eval[[]string](tb, `Array.from(document.querySelectorAll("main script, main iframe, main svg, main [onerror], main [onload], main [onmouseover], main a[href^='javascript']")).map(e => e.outerHTML)`)
		if len(bad) > 0 {
			t.Errorf("%s: user text became markup: %v", page, bad)
		}
		if html := eval[string](tb, `document.querySelector("main").innerHTML`); strings.Contains(html, "<script") || strings.Contains(html, "<img src=\"x\"") {
			t.Errorf("%s: raw markup in the page: %.400s", page, html)
		}
	}
	tb.open("/dataset/xss-test")
	if s := tb.text("#dataset-notes strong"); s != "bold" {
		t.Errorf("Markdown description: <strong> holds %q", s)
	}
	if s := tb.text("#metadata"); !strings.Contains(s, "<i>replicates</i>") || !strings.Contains(s, "<b onmouseover=alert(7)>Eve</b>") {
		t.Errorf("metadata table text: %q", s)
	}
	tb.shot("escaping", 1280)
}

// Editing in the browser: an editor creates a dataset with the form, edits
// it, uploads a file through the resource form (the progress-bar path)
// and downloads the same bytes, then deletes the dataset; a member gets
// no editing buttons.
func TestWebEditingForms(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+t.TempDir()))
	f := seedCatalog(t, g)
	b := newBrowser(t)

	member := b.tab(g, "member")
	member.login("mia", f.passwords["mia"])
	member.open("/dataset/herg-public")
	if n := eval[int](member, `document.querySelectorAll("#edit-dataset, #add-resource, #delete-dataset").length`); n != 0 {
		t.Errorf("a member sees %d editing controls", n)
	}

	ed := b.tab(g, "editor")
	ed.login("eddie", f.passwords["eddie"])
	ed.open("/dataset")
	ed.do("open the new dataset form", chromedp.Click(chromedp.CSS("#new-dataset")), chromedp.WaitVisible(chromedp.CSS("#dataset-form")))
	ed.do("create a dataset",
		chromedp.SendKeys(chromedp.CSS("#title"), "Cardiomyocyte viability"),
		chromedp.SendKeys(chromedp.CSS("#name"), "cm-viability"),
		chromedp.SendKeys(chromedp.CSS("#notes"), "Viability of *iPSC* cardiomyocytes."),
		chromedp.SendKeys(chromedp.CSS("#tags"), "cardio, viability"),
		chromedp.SetValue(chromedp.CSS("#private"), "false"))
	ed.shot("dataset-form", 1280)
	ed.do("save", chromedp.Click(chromedp.CSS("#save-dataset")), chromedp.WaitVisible(chromedp.CSS("#dataset-title")))
	code, out := ckan(t, g, "package_show", "", map[string]any{"id": "cm-viability"})
	if code != 200 || out["result"].(map[string]any)["organization"].(map[string]any)["name"] != "tox-lab" {
		t.Fatalf("the dataset made by the form: %d %v", code, out)
	}
	ed.do("edit", chromedp.Click(chromedp.CSS("#edit-dataset")), chromedp.WaitVisible(chromedp.CSS("#dataset-form")),
		chromedp.Clear(chromedp.CSS("#title")), chromedp.SendKeys(chromedp.CSS("#title"), "Cardiomyocyte viability (48 h)"),
		chromedp.Click(chromedp.CSS("#save-dataset")), chromedp.WaitVisible(chromedp.CSS("#dataset-title")))
	if _, out := ckan(t, g, "package_show", "", map[string]any{"id": "cm-viability"}); out["result"].(map[string]any)["title"] != "Cardiomyocyte viability (48 h)" {
		t.Errorf("after the edit form: %v", out["result"])
	}

	// A 3 MB file through the resource form, then the same bytes back.
	var data bytes.Buffer
	data.WriteString("well,compound,viability\n")
	for i := 0; data.Len() < 3<<20; i++ {
		fmt.Fprintf(&data, "%d,DOX-%d,%.4f\n", i, i%97, float64(i%1000)/1000)
	}
	file := filepath.Join(t.TempDir(), "viability plate.csv")
	if err := os.WriteFile(file, data.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ed.do("upload a file through the form", chromedp.Click(chromedp.CSS("#add-resource")), chromedp.WaitVisible(chromedp.CSS("#resource-form")),
		chromedp.SetUploadFiles(chromedp.CSS("#upload"), []string{file}), chromedp.SendKeys(chromedp.CSS("#res-name"), "Plate 1"))
	ed.shot("resource-form", 390)
	ed.do("submit the upload", chromedp.Click(chromedp.CSS("#save-resource")), chromedp.WaitVisible(chromedp.CSS("#resource-title")))
	if got := ed.text("#resource-title"); got != "Plate 1" {
		t.Errorf("after the upload the page shows %q", got)
	}
	href := eval[string](ed, `document.querySelector("#download").getAttribute("href")`)
	resp, body, err := g.Do(context.Background(), http.MethodGet, href, http.Header{"Authorization": {f.editor}}, nil)
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, data.Bytes()) {
		t.Fatalf("download of the uploaded file %s: %v %v, %d bytes, want %d identical", href, err, resp, len(body), data.Len())
	}
	if n := eval[int](ed, `document.querySelectorAll("#preview-table tr").length`); n != 51 {
		t.Errorf("preview of the uploaded file: %d table rows, want header + 50", n)
	}
	ed.shot("uploaded", 1280)

	// A link resource through the same form without a file.
	ed.open("/dataset/cm-viability/resource/new")
	ed.do("add a link", chromedp.SendKeys(chromedp.CSS("#res-url"), "https://example.org/protocol.pdf"),
		chromedp.SendKeys(chromedp.CSS("#res-name"), "Protocol"), chromedp.Click(chromedp.CSS("#save-resource")),
		chromedp.WaitVisible(chromedp.CSS("#resource-title")))
	if got := ed.text("#resource-title"); got != "Protocol" {
		t.Errorf("link resource page shows %q", got)
	}

	ed.open("/dataset/cm-viability")
	ed.do("delete the dataset", chromedp.Click(chromedp.CSS("#confirm-delete")), chromedp.Click(chromedp.CSS("#delete-dataset")),
		chromedp.WaitVisible(chromedp.CSS("#flash")))
	if code, _ := ckan(t, g, "package_show", f.editor, map[string]any{"id": "cm-viability"}); code == 200 {
		if _, out := ckan(t, g, "package_show", f.editor, map[string]any{"id": "cm-viability"}); out["result"].(map[string]any)["state"] != "deleted" {
			t.Errorf("after the delete form the dataset is %v", out["result"])
		}
	}
	// The form refuses a POST without the CSRF token.
	w := newWebClient(t, g)
	w.login("eddie", f.passwords["eddie"])
	if p := w.post("/dataset/new", url.Values{"name": {"no-csrf"}, "title": {"x"}}); p.status != http.StatusForbidden {
		t.Errorf("POST /dataset/new without CSRF: %d", p.status)
	}
	resp, _, _ = g.Do(context.Background(), http.MethodPost, "/dataset/herg-public/resource/new",
		http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, []byte("--x--\r\n"))
	if resp.Request.URL.Path != "/login" {
		t.Errorf("anonymous upload POST ends at %s (%d), want a redirect to /login", resp.Request.URL, resp.StatusCode)
	}
}

// Model pages: a browser gets HTML at /models/{name}, API clients JSON; a
// user with the models role runs the PBPK model (an SVG plot) and the hERG
// classifier on a batch (a table with applicability domain), and saves
// the result as JSON and CSV; /tokens and the dashboard fit a phone.
func TestWebModelPages(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+modulesDir(t, "herg", "pbpk-doxorubicin")))
	admin := adminToken(t, g)
	provision(t, g, admin, "mia", "mia-password-1", true, "models")
	provision(t, g, admin, "nora", "nora-password-1", true)

	resp, body, err := g.Do(context.Background(), http.MethodGet, "/models/herg", http.Header{"Accept": {"application/json"}}, nil)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !bytes.Contains(body, []byte(`"input_schema"`)) {
		t.Fatalf("GET /models/herg as JSON: %v %v %.200s", err, resp, body)
	}

	b := newBrowser(t)
	anon := b.tab(g, "anonymous")
	anon.open("/models/herg")
	if !strings.Contains(anon.text("#login-to-run"), "Log in") || anon.text("#model-card") == "" {
		t.Errorf("anonymous model page: %q / card %q", anon.text("#login-to-run"), anon.text("#model-card"))
	}
	nora := b.tab(g, "no-role")
	nora.login("nora", "nora-password-1")
	nora.open("/models/herg")
	if !strings.Contains(nora.text("#login-to-run"), "models") {
		t.Errorf("a user without the models role sees %q", nora.text("#login-to-run"))
	}

	mia := b.tab(g, "member")
	mia.login("mia", "mia-password-1")
	if href := eval[string](mia, `document.querySelector("a.model-link").getAttribute("href")`); !strings.HasPrefix(href, "/models/") {
		t.Errorf("dashboard model link: %q", href)
	}
	if href := eval[string](mia, `document.querySelector("#catalog-link").getAttribute("href")`); href != "/dataset" {
		t.Errorf("dashboard catalog link: %q", href)
	}
	mia.shot("dashboard", 390)
	mia.open("/models/pbpk-doxorubicin")
	if v := eval[string](mia, `document.querySelector("#f-0-dose_mg").value`); v != "60" {
		t.Errorf("dose_mg prefilled with %q, want the example 60", v)
	}
	if l := mia.text(`label[for="f-0-dose_mg"]`); !strings.Contains(l, "mg/m²") {
		t.Errorf("dose_mg label %q lacks its unit", l)
	}
	mia.do("run the PBPK model", chromedp.Click(chromedp.CSS("#run-0")), chromedp.WaitVisible(chromedp.CSS("#result-plot")))
	if src := eval[string](mia, `document.querySelector("#result-plot").getAttribute("src")`); !strings.HasPrefix(src, "data:image/svg+xml;base64,") {
		t.Errorf("plot src %.80q", src)
	}
	if ok := eval[bool](mia, `document.querySelector("#result-plot").naturalWidth > 0`); !ok {
		t.Errorf("the SVG plot did not load in the browser")
	}
	if out := mia.spills(); len(out) > 0 {
		t.Errorf("PBPK result page at 1280 px: elements past the content column: %v", out)
	}
	mia.shot("pbpk-result", 1280)
	mia.shot("pbpk-result", 390)
	if !mia.fitsPhone() {
		t.Errorf("the PBPK result page is wider than a 390 px phone: %v", mia.overflowing())
	}

	mia.open("/models/herg")
	mia.do("run hERG on a batch", chromedp.Clear(chromedp.CSS("#smiles-list")),
		chromedp.SendKeys(chromedp.CSS("#smiles-list"), "CCO\nCN1CCC(CC1)c1ccccc1\nc1ccccc1O"),
		chromedp.Click(chromedp.CSS("#run-0")), chromedp.WaitVisible(chromedp.CSS("#result-table")))
	if n := eval[int](mia, `document.querySelectorAll("#result-table tr").length`); n != 4 {
		t.Errorf("hERG batch: %d table rows, want header + 3", n)
	}
	head := mia.text("#result-table tr")
	for _, col := range []string{"smiles", "probability", "applicability_domain", "nearest_similarities"} {
		if !strings.Contains(head, col) {
			t.Errorf("hERG result table header %q lacks %s", head, col)
		}
	}
	if out := mia.spills(); len(out) > 0 {
		t.Errorf("hERG result page at 1280 px: elements past the content column: %v", out)
	}
	mia.shot("herg-result", 1280)
	mia.shot("herg-result", 390)
	if !mia.fitsPhone() {
		t.Errorf("the hERG result page is wider than a 390 px phone: %v", mia.overflowing())
	}

	// Save as JSON and CSV: the form posted as the buttons post it.
	w := newWebClient(t, g)
	w.login("mia", "mia-password-1")
	for format, ctype := range map[string]string{"json": "application/json", "csv": "text/csv"} {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("csrf", w.csrf("/dashboard"))
		_ = mw.WriteField("route", "0")
		_ = mw.WriteField("f_smiles", "CCO\nc1ccccc1O")
		_ = mw.WriteField("format", format)
		_ = mw.Close()
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/models/herg/run", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := w.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) ||
			!strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") || !bytes.Contains(out, []byte("c1ccccc1O")) {
			t.Errorf("save as %s: %d %s %q %.300s", format, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"), out)
		}
	}

	// /tokens on a phone: nothing wider than the screen, Log out reachable.
	mia.open("/tokens")
	mia.do("make a token", chromedp.SendKeys(chromedp.CSS("#token-name"), "phone"), chromedp.Click(chromedp.CSS("#create-token")),
		chromedp.WaitVisible(chromedp.CSS("#new-token")))
	mia.do("phone width", chromedp.EmulateViewport(390, 844))
	fits := eval[bool](mia, `document.documentElement.scrollWidth <= window.innerWidth && document.querySelector("#logout").getBoundingClientRect().right <= window.innerWidth`)
	if !fits {
		t.Errorf("/tokens at 390 px: page %v px wide, Log out ends at %v px",
			eval[float64](mia, `document.documentElement.scrollWidth`), eval[float64](mia, `document.querySelector("#logout").getBoundingClientRect().right`))
	}
	mia.shot("tokens", 390)
	resp, body, _ = g.Do(context.Background(), http.MethodGet, "/favicon.ico", nil, nil)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("<svg")) {
		t.Errorf("favicon: %d %.100s", resp.StatusCode, body)
	}
}
