package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// A list of SMILES with invalid ones is scored: each bad row keeps its place
// with its own error (message, field, position in the whole list, across
// the host's batch slices) and the others are scored, in JSON and CSV; a
// single bad SMILES and a list over the limit are refused with messages
// about them.
func TestBatchRowErrors(t *testing.T) {
	g, _ := modelsGateway(t, []string{"herg", "ahr"},
		harness.WithEnv("TOXGATE_MODULES_BATCH_SLICE_ITEMS=2", "TOXGATE_CATALOG_PUBLISH_MODELS=false"))
	admin := adminToken(t, g)
	provision(t, g, admin, "screener", "screener-password-1", true, "models")
	tok := http.Header{"Authorization": {"Bearer " + tokenFor(t, g, admin, "screener", nil)}}
	list := []string{"CCO", "CC(C)Xx", "c1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "CCN", "C1CC", "CCCl", "", strings.Repeat("C", 4001), "O"}
	bad := map[int]bool{1: true, 5: true, 7: true, 8: true}
	body, _ := json.Marshal(map[string]any{"smiles": list})

	for _, route := range []string{"/hERG/evaluate", "/AHR/evaluate"} {
		code, _, out := postJSON(t, g, route, string(body), tok)
		if code != 200 {
			t.Fatalf("%s with bad rows: %d %s", route, code, out)
		}
		var o struct {
			Results []map[string]any `json:"results"`
		}
		if err := json.Unmarshal(out, &o); err != nil || len(o.Results) != len(list) {
			t.Fatalf("%s: %v %s", route, err, out)
		}
		for i, r := range o.Results {
			if r["smiles"] != list[i] {
				t.Fatalf("%s row %d is %v, want %s", route, i, r["smiles"], list[i])
			}
			e, hasErr := r["error"].(map[string]any)
			_, scored := r["prediction"]
			if bad[i] != hasErr || bad[i] == scored {
				t.Fatalf("%s row %d (bad %v): %v", route, i, bad[i], r)
			}
			if hasErr && (e["field"] != fmt.Sprintf("smiles[%d]", i) || e["position"] != float64(i) || !strings.Contains(e["message"].(string), "smiles")) {
				t.Fatalf("%s row %d error: %v", route, i, e)
			}
		}

		h := tok.Clone()
		h.Set("Accept", "text/csv")
		code, _, out = postJSON(t, g, route, string(body), h)
		recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
		if code != 200 || err != nil || len(recs) != len(list)+1 || recs[0][len(recs[0])-1] != "error" {
			t.Fatalf("%s as CSV: %d %v %s", route, code, err, out)
		}
		for i, r := range recs[1:] {
			if msg := r[len(r)-1]; bad[i] != (msg != "") || (bad[i] && !strings.HasPrefix(msg, "smiles")) {
				t.Fatalf("%s CSV row %d (bad %v): %v", route, i, bad[i], r)
			}
		}
	}

	code, _, out := postJSON(t, g, "/hERG/evaluate", `{"smiles":["CCO","CCN",42]}`, tok)
	if code != 422 || !strings.Contains(string(out), `"field":"smiles.2"`) {
		t.Fatalf("a number in the list: %d %s", code, out)
	}
	code, _, out = postJSON(t, g, "/hERG/evaluate", `{"smiles":"CC(C)Xx"}`, tok)
	if code != 422 || !strings.Contains(string(out), `"field":"smiles"`) {
		t.Fatalf("single bad SMILES: %d %s", code, out)
	}
	long, _ := json.Marshal(map[string]any{"smiles": make([]string, 1001)})
	long = []byte(strings.ReplaceAll(string(long), `""`, `"C"`))
	code, _, out = postJSON(t, g, "/hERG/evaluate", string(long), tok)
	if code != 422 || !strings.Contains(string(out), "at most 1000 SMILES per call") || strings.Contains(string(out), "want string") {
		t.Fatalf("1001 SMILES: %d %s", code, out)
	}
}

// A simulation's time series comes as CSV on Accept: text/csv: the time
// column, then one column per compartment, as many rows as time points.
func TestSimulationTimeSeriesAsCSV(t *testing.T) {
	g, _ := modelsGateway(t, []string{"pbpk-doxorubicin", "tk-2d"}, harness.WithEnv("TOXGATE_CATALOG_PUBLISH_MODELS=false"))
	admin := adminToken(t, g)
	provision(t, g, admin, "modeler", "modeler-password-1", true, "models")
	tok := "Bearer " + tokenFor(t, g, admin, "modeler", nil)
	for _, c := range []struct{ path, body, time, series string }{
		{"/pbpk/doxorubicin", `{"dose_mg":60,"age":50,"weight":70,"height":190}`, "time_h", "time_series"},
		{"/TK/2D/evaluate", `{"compound":"DOX"}`, "time_h", ""},
	} {
		code, _, js := postJSON(t, g, c.path, c.body, http.Header{"Authorization": {tok}})
		var o map[string]any
		if code != 200 || json.Unmarshal(js, &o) != nil {
			t.Fatalf("%s JSON: %d %.300s", c.path, code, js)
		}
		holder := o
		if c.series != "" {
			holder = o[c.series].(map[string]any)
		}
		times := holder[c.time].([]any)
		code, h, out := postJSON(t, g, c.path, c.body, http.Header{"Authorization": {tok}, "Accept": {"text/csv"}})
		recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
		if code != 200 || err != nil || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") || len(recs) != len(times)+1 || recs[0][0] != c.time || len(recs[0]) < 3 {
			t.Fatalf("%s CSV: %d %s %v %.300s", c.path, code, h.Get("Content-Type"), err, out)
		}
		if last := recs[len(recs)-1][0]; last != fmt.Sprint(times[len(times)-1]) {
			t.Fatalf("%s CSV: last time %s, JSON %v", c.path, last, times[len(times)-1])
		}
		t.Logf("%s CSV columns: %v", c.path, recs[0])
	}
}
