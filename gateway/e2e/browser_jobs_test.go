package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"toxgate/gateway/harness"
)

// A screening table in the catalog is scored from the browser: the resource
// page offers the SMILES models and picks the smiles column, the job page
// shows a progress bar that the page's script moves to the end, then links
// the result resource; /jobs lists the job. A user without the models role
// gets neither the form nor the pages; API clients still get JSON.
func TestWebScoringJobPage(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+modulesDir(t, "herg")))
	admin := adminToken(t, g)
	provision(t, g, admin, "mia", "mia-password-1", true, "models")
	provision(t, g, admin, "nora", "nora-password-1", true)
	for _, c := range []struct {
		action string
		data   map[string]any
	}{
		{"organization_create", map[string]any{"name": "screen-lab"}},
		{"organization_member_create", map[string]any{"id": "screen-lab", "username": "mia", "role": "editor"}},
		{"organization_member_create", map[string]any{"id": "screen-lab", "username": "nora", "role": "editor"}},
		{"package_create", map[string]any{"name": "library", "owner_org": "screen-lab"}},
	} {
		if code, out := ckan(t, g, c.action, admin, c.data); code != 200 {
			t.Fatalf("%s: %d %v", c.action, code, out)
		}
	}
	const rows = 1500
	smiles := []string{"CCO", "c1ccccc1O", "CN1CCC(CC1)c1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "CCN(CC)CC", "C1CC"}
	var csv strings.Builder
	csv.WriteString("compound,smiles\n")
	for i := range rows {
		fmt.Fprintf(&csv, "c%d,%s\n", i, smiles[i%len(smiles)])
	}
	res := uploadResource(t, g, admin, "library", "library.csv", []byte(csv.String()))
	resPage := "/dataset/library/resource/" + res["id"].(string)

	b := newBrowser(t)
	nora := b.tab(g, "no models role")
	nora.login("nora", "nora-password-1")
	nora.open(resPage)
	if n := eval[int](nora, `document.querySelectorAll("#score-form").length`); n != 0 {
		t.Errorf("a user without the models role is offered the scoring form")
	}
	nora.open("/jobs")
	if !strings.Contains(nora.text("main"), "models role") {
		t.Errorf("/jobs for a user without the models role: %q", nora.text("main"))
	}

	mia := b.tab(g, "models role")
	mia.login("mia", "mia-password-1")
	mia.open(resPage)
	if col := eval[string](mia, `document.querySelector("#score-column").value`); col != "smiles" {
		t.Errorf("the form picks column %q, want smiles", col)
	}
	if opts := eval[string](mia, `Array.from(document.querySelectorAll("#score-model option")).map(o => o.value).join(" ")`); !strings.Contains(opts, "/hERG/evaluate") {
		t.Errorf("the form offers %q, want the hERG route", opts)
	}
	mia.shot("resource-score-form", 1280)
	mia.do("start scoring", chromedp.Click(chromedp.CSS("#score-button")), chromedp.WaitVisible(chromedp.CSS("#job-progress")))
	mia.waitURL("/jobs/")
	if max := eval[int](mia, `document.querySelector("#job-progress").max`); max != rows {
		t.Errorf("progress bar max %d, want %d rows", max, rows)
	}
	// The script follows the job and reloads the page when it ends: the
	// result link appears without the user reloading.
	mia.do("wait for the job to end", chromedp.WaitVisible(chromedp.CSS("#job-result-link")))
	if state := mia.text("#job-state"); state != "succeeded" {
		t.Errorf("job state %q, want succeeded", state)
	}
	if v := eval[int](mia, `document.querySelector("#job-progress").value`); v != rows {
		t.Errorf("progress bar at %d, want %d", v, rows)
	}
	if txt := mia.text("#job-progress-text"); !strings.Contains(txt, "1,500 of 1,500 rows") || !strings.Contains(txt, "250 with an error") {
		t.Errorf("progress text %q", txt)
	}
	if n := eval[int](mia, `document.querySelectorAll("#job-cancel").length`); n != 0 {
		t.Errorf("a finished job still offers Cancel")
	}
	mia.shot("job-finished", 1280)
	jobURL := eval[string](mia, `location.pathname`)
	mia.do("open the result", chromedp.Click(chromedp.CSS("#job-result-link")), chromedp.WaitReady(chromedp.CSS("#preview")))
	if head := mia.text("#preview-table tr"); !strings.Contains(head, "compound") || !strings.Contains(head, "smiles") || !strings.Contains(head, "probability") || !strings.Contains(head, "error") {
		t.Errorf("the result's header %q: want the input columns, then the model's and error", head)
	}
	// The result's SMILES are drawn; "C1CC" (a ring never closed) stays text.
	if chemServed(t, g) {
		waitFor(t, 60*time.Second, "the result's structures drawn", func() bool {
			return eval[bool](mia, `(function () { var m = document.querySelectorAll("#preview-table [data-depict]");
				return m.length > 0 && document.querySelectorAll("#preview-table [data-depict].drawn img.depiction, #preview-table [data-depict].smiles-bad").length === m.length; })()`)
		})
		if bad := eval[string](mia, `Array.from(new Set(Array.from(document.querySelectorAll("#preview-table .smiles-bad")).map(function (e) { return e.textContent.trim(); }))).join(",")`); bad != "C1CC" {
			t.Errorf("SMILES left as text in the result: %q, want C1CC", bad)
		}
		mia.shot("job-result", 1280)
	}
	mia.open("/jobs")
	if href := eval[string](mia, `document.querySelector("a.job-link").getAttribute("href")`); href != jobURL {
		t.Errorf("/jobs links %q, want %q", href, jobURL)
	}
	if done := eval[bool](mia, `document.querySelector("progress.job-bar").value === document.querySelector("progress.job-bar").max`); !done {
		t.Errorf("/jobs shows the finished job's bar short of its end")
	}

	tok := tokenFor(t, g, admin, "mia", nil)
	resp, body, err := g.Do(context.Background(), http.MethodGet, jobURL, http.Header{"Authorization": {"Bearer " + tok}, "Accept": {"application/json"}}, nil)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), `"state":"succeeded"`) {
		t.Errorf("GET %s as JSON: %v %d %.300s", jobURL, err, resp.StatusCode, body)
	}
}
