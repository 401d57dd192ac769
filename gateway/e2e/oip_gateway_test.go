package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

type oipTensor struct {
	Name     string  `json:"name"`
	Shape    []int64 `json:"shape"`
	Datatype string  `json:"datatype"`
	Data     []any   `json:"data"`
}

func infer(t *testing.T, f *jobFixture, path string, body string) (int, map[string]any, []oipTensor) {
	t.Helper()
	resp, out, err := f.g.Do(context.Background(), http.MethodPost, path, http.Header{"Authorization": {f.editor}, "Content-Type": {"application/json"}}, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s: %d, not JSON: %.300s", path, resp.StatusCode, out)
	}
	var r struct {
		Outputs []oipTensor `json:"outputs"`
	}
	json.Unmarshal(out, &r)
	return resp.StatusCode, m, r.Outputs
}

// KServe/Triton clients call a classifier and a simulation with the Open
// Inference Protocol's REST shapes.
func TestOpenInferenceProtocol(t *testing.T) {
	f := newJobFixture(t, []string{"herg", "pbpk-doxorubicin"})
	resp, body := get(t, f.g, "/v2", nil)
	var meta map[string]any
	json.Unmarshal(body, &meta)
	if resp.StatusCode != 200 || meta["name"] != "toxgate" {
		t.Fatalf("GET /v2: %d %s", resp.StatusCode, body)
	}
	resp, body = get(t, f.g, "/v2/models/herg", nil)
	var md struct {
		Versions []string `json:"versions"`
		Routes   []struct {
			Route  string `json:"route"`
			Inputs []struct {
				Name string `json:"name"`
			} `json:"inputs"`
		} `json:"routes"`
	}
	json.Unmarshal(body, &md)
	if resp.StatusCode != 200 || len(md.Routes) != 1 || md.Routes[0].Route != "/hERG/evaluate" || len(md.Versions) != 1 {
		t.Fatalf("model metadata: %d %s", resp.StatusCode, body)
	}

	// The request shape of KServe's documentation (BYTES input).
	code, out, ts := infer(t, f, "/v2/models/herg/infer", `{"id":"42","inputs":[{"name":"smiles","shape":[2],"datatype":"BYTES","data":["CC(C)(C)c1ccc(C(O)CCCN2CCC(C(O)(c3ccccc3)c3ccccc3)CC2)cc1","CC(=O)Oc1ccccc1C(=O)O"]}]}`)
	if code != 200 || out["model_name"] != "herg" || out["id"] != "42" || out["parameters"].(map[string]any)["module_sha256"] == "" {
		t.Fatalf("infer herg: %d %v", code, out)
	}
	var pred *oipTensor
	for i := range ts {
		switch ts[i].Name {
		case "prediction", "probability", "applicability_domain":
			if len(ts[i].Shape) != 1 || ts[i].Shape[0] != 2 || len(ts[i].Data) != 2 {
				t.Errorf("tensor %s: shape %v, %d elements", ts[i].Name, ts[i].Shape, len(ts[i].Data))
			}
		}
		if ts[i].Name == "prediction" {
			pred = &ts[i]
		}
	}
	if pred == nil || pred.Datatype != "INT64" || pred.Data[0] != 1.0 || pred.Data[1] != 0.0 {
		t.Fatalf("prediction tensor %+v of %v", pred, ts)
	}
	version := out["model_version"].(string)
	if code, _, ts := infer(t, f, "/v2/models/herg/versions/"+version+"/infer", `{"inputs":[{"name":"smiles","shape":[1],"datatype":"BYTES","data":["CCO"]}],"outputs":[{"name":"probability"}]}`); code != 200 || len(ts) != 1 || ts[0].Datatype != "FP64" {
		t.Errorf("versioned infer with one output: %d %v", code, ts)
	}
	for _, c := range []struct {
		path, body string
		status     int
	}{
		{"/v2/models/herg/versions/0.0.0-none/infer", `{"inputs":[{"name":"smiles","shape":[1],"datatype":"BYTES","data":["CCO"]}]}`, 404},
		{"/v2/models/nope/infer", `{"inputs":[]}`, 404},
		{"/v2/models/herg/infer", `{"inputs":[{"name":"smile","shape":[1],"datatype":"BYTES","data":["CCO"]}]}`, 400},
		{"/v2/models/herg/infer", `{"inputs":[{"name":"smiles","shape":[3],"datatype":"BYTES","data":["CCO"]}]}`, 400},
		{"/v2/models/herg/infer", `{"inputs":[{"name":"smiles","shape":[1],"datatype":"BYTES","data":["C1CC(x"]}]}`, 422},
		{"/v2/models/herg/infer", `not json`, 400},
	} {
		code, out, _ := infer(t, f, c.path, c.body)
		if msg, _ := out["error"].(string); code != c.status || msg == "" {
			t.Errorf("%s %s: %d %v, want %d {\"error\": ...}", c.path, c.body, code, out, c.status)
		}
	}

	// A simulation with numeric inputs: outputs are named tensors with shapes.
	code, out, ts = infer(t, f, "/v2/models/pbpk-doxorubicin/infer", `{"inputs":[
		{"name":"dose_mg","shape":[1],"datatype":"FP64","data":[60]},
		{"name":"age","shape":[1],"datatype":"FP64","data":[50]},
		{"name":"weight","shape":[1],"datatype":"FP64","data":[70]},
		{"name":"height","shape":[1],"datatype":"FP64","data":[190]}]}`)
	if code != 200 || len(ts) == 0 {
		t.Fatalf("infer pbpk-doxorubicin: %d %v", code, out)
	}
	series := 0
	for _, tn := range ts {
		n := int64(1)
		for _, d := range tn.Shape {
			n *= d
		}
		if tn.Name == "" || tn.Datatype == "" || n != int64(len(tn.Data)) {
			t.Errorf("tensor %s %s %v with %d elements", tn.Name, tn.Datatype, tn.Shape, len(tn.Data))
		}
		if tn.Datatype == "FP64" && tn.Shape[0] > 10 && strings.HasPrefix(tn.Name, "time_series.") {
			series++
		}
	}
	if series == 0 {
		t.Errorf("no time series among the simulation's tensors: %v", names(ts))
	}
}

func names(ts []oipTensor) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}
