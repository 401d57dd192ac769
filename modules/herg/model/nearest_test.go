package model

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"testing"

	"toxgate/sdk/ml/serve"
)

// TestNearestCompoundsCarryTheirTrainingLabels: the nearest compounds of
// training structures and of other molecules are compounds of
// herg_karim.csv with that file's label (1 = blocker), and a training
// structure of the AD set (one not dropped as a conflicting duplicate)
// finds itself at similarity 1.
func TestNearestCompoundsCarryTheirTrainingLabels(t *testing.T) {
	f, err := os.Open("../../internal/data/herg_karim.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	label := map[string]string{}
	var queries []string
	for i, r := range rows[1:] {
		label[r[0]] = map[string]string{"1": "blocker", "0": "non-blocker"}[r[1]]
		if i%97 == 0 {
			queries = append(queries, r[0])
		}
	}
	inSet := map[string]bool{}
	for _, s := range Server.Bundle.AD[0].SMILES {
		inSet[s] = true
	}
	queries = append(queries, benchSMILES...)
	body, _ := json.Marshal(map[string]any{"smiles": queries, "nearest_compounds": true})
	var in serve.Input
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatal(err)
	}
	raw, err := Server.EvaluateJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Results []struct {
			Nearest []float64 `json:"nearest_similarities"`
			Raw     []struct {
				SMILES     string            `json:"smiles"`
				Similarity float64           `json:"similarity"`
				Labels     map[string]string `json:"labels"`
			} `json:"nearest_compounds"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	for i, r := range out.Results {
		if len(r.Raw) != 3 || len(r.Nearest) != 3 {
			t.Fatalf("%s: %d compounds, %d similarities", queries[i], len(r.Raw), len(r.Nearest))
		}
		for j, c := range r.Raw {
			want, ok := label[c.SMILES]
			if !ok || c.Labels["hERG"] != want || len(c.Labels) != 1 || c.Similarity != r.Nearest[j] {
				t.Fatalf("%s: compound %+v; training label %q (in the data: %v), similarity %v", queries[i], c, want, ok, r.Nearest[j])
			}
		}
		if inSet[queries[i]] && r.Raw[0].Similarity != 1 {
			t.Fatalf("training structure %s: nearest similarity %v", queries[i], r.Raw[0].Similarity)
		}
	}
}
