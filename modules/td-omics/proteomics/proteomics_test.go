package proteomics

import (
	"math"
	"testing"
)

func TestHistoneH12Doxorubicin(t *testing.T) {
	g, err := Find("P16403")
	if err != nil {
		t.Fatal(err)
	}
	if g.ID != "sp|P10412|H14_HUMAN : sp|P16402|H13_HUMAN : sp|P16403|H12_HUMAN" && g.ID != "sp|P16403|H12_HUMAN" {
		t.Fatalf("group %q", g.ID)
	}
	rs, err := Series("DOX", g)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 14 {
		t.Fatalf("%d comparisons, want 2 doses × 7 times", len(rs))
	}
	for _, r := range rs {
		if r.Available && (r.P < 0 || r.P > 1 || r.Q < r.P-1e-12) { // p, q in [0, 1], q ≥ p
			t.Errorf("%+v: p or q out of range", r)
		}
	}
}

// The research notes report, for DOX toxic and the group P10412;P16402;P16403,
// log2FC = +2.38 at 24 h and −1.27 at 336 h (mean treated − mean vehicle).
func TestPublishedFoldChanges(t *testing.T) {
	d, err := load()
	if err != nil {
		t.Fatal(err)
	}
	var g Group
	for _, x := range d.groups {
		if x.ID == "sp|P10412|H14_HUMAN : sp|P16402|H13_HUMAN : sp|P16403|H12_HUMAN" {
			g = x
		}
	}
	rs, err := Series("DOX", g)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]float64{24: 2.38, 336: -1.27}
	for _, r := range rs {
		if w, ok := want[r.TimeH]; ok && r.Dose == "Toxic" && math.Abs(float64(r.Log2FC)-w) > 0.01 {
			t.Errorf("toxic %d h: log2FC %.3f, want %.2f", r.TimeH, r.Log2FC, w)
		}
	}
}

func TestUnknownAccessionSuggests(t *testing.T) {
	_, err := Find("B8ZZL8")
	nf, ok := err.(*NotFoundError)
	if !ok || len(nf.Closest) != 5 {
		t.Fatalf("err = %v", err)
	}
}
