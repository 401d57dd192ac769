package chemindex

import (
	"errors"
	"math/rand/v2"
	"testing"

	"toxgate/sdk/chem"
)

func mustPattern(t testing.TB, s string) *chem.Query {
	t.Helper()
	q, err := chem.ParseSMARTS(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestIndexSubstructure searches tables by SMARTS and by a molecule, with
// the screen and without (the same answers), follows table replacement
// and drops, keeps to the allowed tables and stops at its step budget.
func TestIndexSubstructure(t *testing.T) {
	ix := NewIndex()
	rowsA, _ := Prepare([]Row{{1, "Cc1ccccc1"}, {2, "C1CCCCC1"}, {3, "CCCCCC"}, {4, "OC(=O)c1ccccc1O.[Na+]"}})
	ix.SetTable("A", "smiles", rowsA, 0)
	rowsB, _ := Prepare([]Row{{1, "c1ccc2ccccc2c1"}, {2, "CCO"}, {3, "C1CC1"}})
	ix.SetTable("B", "smiles", rowsB, 0)
	ids := func(r Result) []string {
		var out []string
		for _, h := range r.Hits {
			out = append(out, h.Resource+string(rune('0'+h.RowID)))
		}
		return out
	}
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{"c1ccccc1", []string{"A1", "A4", "B1"}},
		{"C1CCCCC1", []string{"A2"}},
		{"[#6]1~[#6]~[#6]~[#6]~[#6]~[#6]~1", []string{"A1", "A2", "A4", "B1"}},
		{"[R2]", []string{"B1"}},
		{"C@C", []string{"A2", "B3"}},
		{"[Na+]", []string{"A4"}}, // every fragment is searched
		{"[OX2H]", []string{"A4", "B2"}},
		{"N", nil},
	} {
		for _, pre := range []bool{false, true} {
			r := ix.Search(Query{Mode: ModeSubstructure, Pattern: mustPattern(t, c.pattern), Limit: 10, Steps: SubstructureSteps, NoPrefilter: pre})
			if got := ids(r); r.Err != nil || r.Total != len(c.want) || len(got) != len(c.want) {
				t.Fatalf("%s (no prefilter %v): %v %v", c.pattern, pre, got, r.Err)
			} else {
				for i := range got {
					if got[i] != c.want[i] {
						t.Fatalf("%s: %v, want %v", c.pattern, got, c.want)
					}
				}
			}
		}
	}
	// a molecule as the pattern: hits carry their similarity, best first
	m, err := chem.ParseSMILES("c1ccccc1")
	if err != nil {
		t.Fatal(err)
	}
	r := ix.Search(Query{Mode: ModeSubstructure, Pattern: chem.QueryFromMol(m), Structure: mustStructure(t, "c1ccccc1"), Limit: 10, Steps: SubstructureSteps})
	if r.Total != 3 || r.Hits[0].Similarity < r.Hits[2].Similarity || r.Hits[0].Similarity == 0 {
		t.Fatalf("molecule pattern: %+v", r)
	}
	r = ix.Search(Query{Mode: ModeSubstructure, Pattern: mustPattern(t, "c1ccccc1"), Limit: 10, Steps: SubstructureSteps,
		Allow: func(id string) bool { return id == "B" }})
	if r.Total != 1 || r.Hits[0].Resource != "B" {
		t.Fatalf("allow: %+v", r)
	}
	// replacing a table and dropping one
	rowsA, _ = Prepare([]Row{{7, "CCCCCC"}})
	ix.SetTable("A", "smiles", rowsA, 0)
	ix.DropTable("B")
	if r := ix.Search(Query{Mode: ModeSubstructure, Pattern: mustPattern(t, "c1ccccc1"), Limit: 10, Steps: SubstructureSteps}); r.Total != 0 {
		t.Fatalf("after replace and drop: %+v", r)
	}
	r = ix.Search(Query{Mode: ModeSubstructure, Pattern: mustPattern(t, "CCCCCC"), Limit: 10, Steps: 3})
	if !errors.Is(r.Err, chem.ErrStepBudget) {
		t.Fatalf("budget: %+v", r)
	}
}

// TestCoversIsBytewise checks the packed screen test against the byte-wise
// one on random counts.
func TestCoversIsBytewise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 20000; n++ {
		var a, b chem.Features
		for i := range a {
			a[i] = uint8(rng.IntN(128))
			b[i] = uint8(rng.IntN(128))
			if rng.IntN(3) == 0 {
				b[i] = a[i]
			}
		}
		if n%2 == 0 { // often covering
			for i := range b {
				b[i] = min(b[i], a[i])
			}
		}
		if got, want := covers(appendFeatureWords(nil, &a), appendFeatureWords(nil, &b)), a.Covers(&b); got != want {
			t.Fatalf("%v vs %v: packed %v, bytes %v", a, b, got, want)
		}
	}
}
