package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"toxgate/gateway/harness"
)

// TestModelsAnswerNearestCompounds calls the real hERG and DICTrank modules
// through the gateway, with the host cutting the list into slices of two:
// with "nearest_compounds": true each row ends, after the members it has
// without the flag (same bytes), with the nearest training compounds (one
// list for hERG's domain, one per task for DICTrank's), whose similarities
// are the row's nearest_similarities, at most 5, each with its training
// SMILES and experimental label, also for the longest SMILES accepted;
// without the flag a row has none, and the CSV answer keeps its columns
// either way.
func TestModelsAnswerNearestCompounds(t *testing.T) {
	g, _ := modelsGateway(t, []string{"herg", "dictrank"},
		harness.WithEnv("TOXGATE_MODULES_BATCH_SLICE_ITEMS=2", "TOXGATE_CATALOG_PUBLISH_MODELS=false"))
	admin := adminToken(t, g)
	provision(t, g, admin, "screener", "screener-password-1", true, "models")
	tok := http.Header{"Authorization": {"Bearer " + tokenFor(t, g, admin, "screener", nil)}}
	list := []string{"CC(=O)Oc1ccccc1C(=O)O", "CC(C)Xx", "CN1CCC(CC1)c1ccccc1", "c1ccccc1O", "CCCCCCCCCCCCCCCCCC(=O)O"}
	plainBody, _ := json.Marshal(map[string]any{"smiles": list})
	nearBody, _ := json.Marshal(map[string]any{"smiles": list, "nearest_compounds": true})
	for route, domains := range map[string][]string{
		"/hERG/evaluate": {""}, "/DICTrank/ML_apical_cardiotox/evaluate": {"apical_", "DICTrank_"},
	} {
		code, _, plain := postJSON(t, g, route, string(plainBody), tok.Clone())
		if code != 200 {
			t.Fatalf("%s: %d %s", route, code, plain)
		}
		code, _, near := postJSON(t, g, route, string(nearBody), tok.Clone())
		if code != 200 {
			t.Fatalf("%s with nearest_compounds: %d %s", route, code, near)
		}
		var p, n struct {
			Results []json.RawMessage `json:"results"`
		}
		if json.Unmarshal(plain, &p) != nil || json.Unmarshal(near, &n) != nil || len(p.Results) != len(list) || len(n.Results) != len(list) {
			t.Fatalf("%s: %s / %s", route, plain, near)
		}
		for i := range list {
			pr, nr := p.Results[i], n.Results[i]
			if bytes.Contains(pr, []byte("nearest_compounds")) {
				t.Fatalf("%s row %d without the flag: %s", route, i, pr)
			}
			if i == 1 { // the unreadable SMILES: its error row alone
				if !bytes.Equal(pr, nr) {
					t.Fatalf("%s error row %d: %s / %s", route, i, pr, nr)
				}
				continue
			}
			if !bytes.HasPrefix(nr, pr[:len(pr)-1]) || !bytes.HasPrefix(nr[len(pr)-1:], []byte(`,"`)) {
				t.Fatalf("%s row %d: the flag changed the members before nearest_compounds:\n%s\n%s", route, i, pr, nr)
			}
			var row map[string]any
			if err := json.Unmarshal(nr, &row); err != nil {
				t.Fatal(err)
			}
			for _, d := range domains {
				sims, _ := row[d+"nearest_similarities"].([]any)
				comps, _ := row[d+"nearest_compounds"].([]any)
				if len(sims) == 0 || len(comps) != min(len(sims), 5) {
					t.Fatalf("%s row %d: %d compounds for similarities %v", route, i, len(comps), sims)
				}
				for j, c := range comps {
					cm := c.(map[string]any)
					labels, _ := cm["labels"].(map[string]any)
					smi, _ := cm["smiles"].(string)
					if cm["similarity"] != sims[j] || smi == "" || len(labels) != 1 {
						t.Fatalf("%s row %d compound %d: %v (similarities %v)", route, i, j, cm, sims)
					}
				}
			}
		}
		if route == "/hERG/evaluate" && !strings.Contains(string(n.Results[0]), `"nearest_compounds":[{"smiles":"CC(=O)Oc1ccccc1C(=O)O","similarity":1,"labels":{"hERG":"non-blocker"}}`) {
			t.Errorf("aspirin, a training compound, is not its own nearest compound with its label: %s", n.Results[0])
		}
		long, _ := json.Marshal(map[string]any{"smiles": strings.Repeat("C", 4000), "nearest_compounds": true})
		if code, _, out := postJSON(t, g, route, string(long), tok.Clone()); code != 200 || !bytes.Contains(out, []byte("nearest_compounds")) {
			t.Fatalf("%s: the longest SMILES with nearest_compounds: %d %.300s", route, code, out)
		}
		h := tok.Clone()
		h.Set("Accept", "text/csv")
		_, _, pc := postJSON(t, g, route, string(plainBody), h.Clone())
		_, _, nc := postJSON(t, g, route, string(nearBody), h.Clone())
		precs, err1 := csv.NewReader(bytes.NewReader(pc)).ReadAll()
		nrecs, err2 := csv.NewReader(bytes.NewReader(nc)).ReadAll()
		if err1 != nil || err2 != nil || len(precs) != len(list)+1 || strings.Join(precs[0], ",") != strings.Join(nrecs[0], ",") {
			t.Fatalf("%s CSV header with the flag %v, without %v (%v %v)", route, nrecs[0], precs[0], err1, err2)
		}
	}
}

// TestModelPageShowsNearestCompounds runs hERG from its page in headless
// Chromium: the form asks for the nearest compounds by default, and under
// the result table a table lists, for each input, its three nearest
// training compounds with the similarities of its nearest_similarities
// cell and their experimental labels; the result table has no column for
// them, and the page still fits a phone.
func TestModelPageShowsNearestCompounds(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+modulesDir(t, "herg")))
	admin := adminToken(t, g)
	provision(t, g, admin, "mia", "mia-password-1", true, "models")
	b := newBrowser(t)
	mia := b.tab(g, "member")
	mia.login("mia", "mia-password-1")
	mia.open("/models/herg")
	if v := eval[string](mia, `document.querySelector("#f-0-nearest_compounds").value`); v != "true" {
		t.Errorf("nearest_compounds preset to %q, want true", v)
	}
	mia.do("run hERG on a batch", chromedp.Clear(chromedp.CSS("#smiles-list")),
		chromedp.SendKeys(chromedp.CSS("#smiles-list"), "CC(=O)Oc1ccccc1C(=O)O\nCN1CCC(CC1)c1ccccc1\nc1ccccc1O"),
		chromedp.Click(chromedp.CSS("#run-0")), chromedp.WaitVisible(chromedp.CSS("#result-nearest")))
	head := mia.text("#result-table tr")
	if strings.Contains(head, "nearest_compounds") || !strings.Contains(head, "nearest_similarities") {
		t.Errorf("result table header %q", head)
	}
	// The similarities per input, from the result table and from the nearest table.
	table := eval[map[string]string](mia, `(() => {
		const cols = Array.from(document.querySelectorAll("#result-table tr:first-child th")).map(th => th.textContent);
		const s = cols.indexOf("smiles"), n = cols.indexOf("nearest_similarities");
		const out = {};
		for (const tr of Array.from(document.querySelectorAll("#result-table tr")).slice(1)) {
			const td = tr.querySelectorAll("td");
			out[td[s].textContent] = td[n].textContent;
		}
		return out;
	})()`)
	listed := eval[[][]string](mia, `Array.from(document.querySelectorAll("#result-nearest tr.nearest-compound")).map(tr => Array.from(tr.querySelectorAll("td")).map(td => td.textContent))`)
	if len(table) != 3 || len(listed) != 9 {
		t.Fatalf("result table %v; nearest table rows %v", table, listed)
	}
	got := map[string][]string{}
	for _, r := range listed {
		if len(r) != 4 || r[2] == "" || (r[3] != "blocker" && r[3] != "non-blocker") {
			t.Fatalf("nearest row %v: want input, similarity, training SMILES, label", r)
		}
		got[r[0]] = append(got[r[0]], r[1])
	}
	for smi, sims := range table {
		if strings.Join(got[smi], ", ") != sims {
			t.Errorf("%s: nearest table similarities %v, result table %q", smi, got[smi], sims)
		}
	}
	if listed[0][0] != "CC(=O)Oc1ccccc1C(=O)O" || listed[0][2] != "CC(=O)Oc1ccccc1C(=O)O" || listed[0][1] != "1" || listed[0][3] != "non-blocker" {
		t.Errorf("aspirin's nearest training compound: %v", listed[0])
	}
	if out := mia.spills(); len(out) > 0 {
		t.Errorf("hERG result page at 1280 px: elements past the content column: %v", out)
	}
	mia.shot("herg-nearest", 1280)
	mia.shot("herg-nearest", 390)
	if !mia.fitsPhone() {
		t.Errorf("the hERG result page with nearest compounds is wider than a 390 px phone: %v", mia.overflowing())
	}
}
