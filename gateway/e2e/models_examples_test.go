package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// Every model endpoint of the seed answers the original platform's example
// through the gateway, and bad input gets 422 naming the field.
func TestModelEndpointsAnswerTheOriginalExamples(t *testing.T) {
	bins := harness.Build(t)
	if _, err := os.Stat(filepath.Join(bins.Modules, "pbpk-httk.wasm")); err != nil {
		t.Fatalf("built modules missing (run make build): %v", err)
	}
	g := harness.Start(t, harness.WithAllModules(), harness.WithEnv("TOXGATE_MODULES_REQUIRE_TOKEN=false"))
	const smiles = `{"smiles":"C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C"}`
	examples := map[string]string{
		"/pbpk/doxorubicin":         `{"dose_mg":60,"age":50,"weight":70,"height":190}`,
		"/pbpk/httk":                `{"chem_name":"Bisphenol A","species":"human","daily_dose":1,"doses_per_day":1,"days":15}`,
		"/TK/2D/evaluate":           `{"compound":"DOX"}`,
		"/TK/3D/evaluate":           `{"compound":"DOX"}`,
		"/TD/lipidomics/evaluate":   `{"compound":"DOX"}`,
		"/TD/metabolomics/evaluate": `{"compound":"DOX"}`,
		"/TD/proteomics/evaluate":   `{"compound":"DOX","protein":"P16403"}`,
	}
	_, body := get(t, g, "/models", nil)
	for _, p := range []string{"/hERG/evaluate", "/AHR/evaluate", "/Multitask/evaluate", "/DICTrank/ML_apical_cardiotox/evaluate",
		"/AOP/ML_KEsMIEs/evaluate", "/AOP/AI_MitDys/evaluate", "/clinicaldata/ml/evaluate", "/clinicaldata/ai/evaluate", "/clinicaldata/aop/evaluate"} {
		if strings.Contains(string(body), `"`+p+`"`) {
			examples[p] = smiles
		} else {
			t.Logf("%s: not served by this build", p)
		}
	}
	for path, in := range examples {
		code, _, out := postJSON(t, g, path, in, nil)
		if code != 200 {
			t.Errorf("%s %s: %d %.300s", path, in, code, out)
		}
	}
	// The clinical-data ML answer is meant to be saved: CSV on request, with a file name.
	if _, ok := examples["/clinicaldata/ml/evaluate"]; ok {
		code, h, out := postJSON(t, g, "/clinicaldata/ml/evaluate", smiles, http.Header{"Accept": {"text/csv"}})
		if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") ||
			h.Get("Content-Disposition") != `attachment; filename="clinicaldata-ml.csv"` || !strings.Contains(string(out), "probability") {
			t.Errorf("clinicaldata/ml as CSV: %d %q %q %.200s", code, h.Get("Content-Type"), h.Get("Content-Disposition"), out)
		}
	}
	bad := []struct{ path, body, field string }{
		{"/pbpk/doxorubicin", `{"dose_mg":-60,"age":50,"weight":70,"height":190}`, "dose_mg"},
		{"/pbpk/httk", `{"chem_name":"Bisphenol A","species":"martian","daily_dose":1,"doses_per_day":1,"days":15}`, "species"},
		{"/pbpk/httk", `{"chem_name":"Bisphenol A","species":"human","daily_dose":1,"doses_per_day":1,"days":0}`, "days"},
		{"/pbpk/httk", `{"species":"human","daily_dose":1,"doses_per_day":1,"days":15}`, "chem_name"},
		{"/pbpk/doxorubicin", `{"dose_mg":"sixty","age":50,"weight":70,"height":190}`, "dose_mg"},
		{"/TK/2D/evaluate", `{"compound":"NOPE"}`, "compound"},
		{"/TD/proteomics/evaluate", `{"compound":"DOX","protein":"ZZZZZZ"}`, "protein"},
	}
	if _, ok := examples["/hERG/evaluate"]; ok {
		bad = append(bad, struct{ path, body, field string }{"/hERG/evaluate", `{"smiles":"C1CC(("}`, "smiles"})
	}
	for _, b := range bad {
		code, _, out := postJSON(t, g, b.path, b.body, nil)
		var e struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		_ = json.Unmarshal(out, &e)
		if code != 422 || e.Error.Field != b.field {
			t.Errorf("%s %s: %d field %q, want 422 naming %q (%s)", b.path, b.body, code, e.Error.Field, b.field, out)
		}
	}
}
