package serve

import (
	"encoding/json"
	"testing"
)

// FuzzNearestCompounds: any request asking for the nearest compounds is
// answered by both encoders alike (same bytes or same error), without a
// panic, with at most MaxNearestCompounds compounds per row, each carrying
// the similarity at its position in nearest_similarities.
func FuzzNearestCompounds(f *testing.F) {
	for _, seed := range []string{
		`{"smiles":"CCO"}`, `{"smiles":["CCO","c1ccccc1O","CC(C)Xx",""]}`, `{"smiles":"c1ccncc1","confidence":0.5}`,
		`{"smiles":"[Na+].[O-]C(=O)c1ccccc1"}`, `{"smiles":"C<N&"}`, `{"smiles":["CCO","CCO"],"nearest_compounds":false}`,
	} {
		f.Add(seed)
	}
	s := newTestServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		var in Input
		if json.Unmarshal([]byte(body), &in) != nil {
			return
		}
		in.NearestCompounds = true
		out, werr := s.Evaluate(in)
		got, err := s.EvaluateJSON(in)
		if (werr == nil) != (err == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("%s: EvaluateJSON error %v, Evaluate error %v", body, err, werr)
		}
		if err != nil {
			return
		}
		want, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%s:\nEvaluateJSON  %s\nencoding/json %s", body, got, want)
		}
		for _, r := range out.Results {
			if _, bad := r.Get("error"); bad {
				continue
			}
			near, _ := r.Get("nearest_similarities")
			comps, _ := r.Get("nearest_compounds")
			sims, _ := near.([]float64)
			cs, ok := comps.([]NearestCompound)
			if !ok || len(cs) > MaxNearestCompounds || len(cs) != min(len(sims), MaxNearestCompounds) {
				t.Fatalf("%s: nearest_compounds %v for similarities %v", body, comps, near)
			}
			for j, c := range cs {
				if c.Similarity != sims[j] || c.SMILES == "" {
					t.Fatalf("%s: compound %d %+v, similarities %v", body, j, c, sims)
				}
			}
		}
	})
}
