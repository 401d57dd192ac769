package chemindex

import "testing"

func mustStructure(t testing.TB, s string) *Structure {
	t.Helper()
	st, err := Standardize(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestIndexExactAndSimilarity(t *testing.T) {
	ix := NewIndex()
	rowsA, bad := Prepare([]Row{{1, "CC(=O)Oc1ccccc1C(=O)O"}, {2, "CC(=O)Nc1ccc(O)cc1"}, {3, "not smiles"}, {4, "Oc1ccc(NC(C)=O)cc1.Cl"}})
	if bad != 1 {
		t.Fatalf("bad = %d", bad)
	}
	ix.SetTable("A", "smiles", rowsA, bad)
	rowsB, _ := Prepare([]Row{{1, "CC(=O)Nc1ccc(OC)cc1"}, {2, "CCCCCCCC"}})
	ix.SetTable("B", "SMILES", rowsB, 0)
	q := mustStructure(t, "CC(=O)Nc1ccc(O)cc1")

	res := ix.Search(Query{Structure: q, Mode: ModeExact, Limit: 10})
	if res.Total != 2 || res.Hits[0].Resource != "A" || res.Hits[0].RowID != 2 || res.Hits[1].RowID != 4 {
		t.Fatalf("exact: %+v", res)
	}
	res = ix.Search(Query{Structure: q, Mode: ModeSimilarity, Threshold: 0.3, Limit: 10})
	if res.Total != 3 || res.Hits[2].Resource != "B" || res.Hits[2].Similarity >= 1 {
		t.Fatalf("similarity: %+v", res)
	}
	// the count prefilter answers what a full scan answers
	for _, th := range []float64{0.05, 0.2, 0.5, 0.9, 1} {
		a := ix.Search(Query{Structure: q, Mode: ModeSimilarity, Threshold: th, Limit: 10})
		b := ix.Search(Query{Structure: q, Mode: ModeSimilarity, Threshold: th, Limit: 10, NoPrefilter: true})
		if a.Total != b.Total || len(a.Hits) != len(b.Hits) {
			t.Fatalf("threshold %v: prefilter %d, scan %d", th, a.Total, b.Total)
		}
	}
	res = ix.Search(Query{Structure: q, Mode: ModeSimilarity, Threshold: 0.3, Limit: 10, Allow: func(r string) bool { return r == "B" }})
	if res.Total != 1 || res.Hits[0].Resource != "B" {
		t.Fatalf("allow: %+v", res)
	}
	res = ix.Search(Query{Structure: q, Mode: ModeSimilarity, Threshold: 0.3, Limit: 1})
	if res.Total != 3 || len(res.Hits) != 1 || res.Hits[0].Similarity != 1 {
		t.Fatalf("limit: %+v", res)
	}
	ix.DropTable("A")
	if ix.Rows() != 2 {
		t.Fatalf("rows = %d", ix.Rows())
	}
}
