package chembench

import "testing"

func TestRunCountsAndChecksums(t *testing.T) {
	in := []string{"CCO", "c1ccccc1", "C1CC(("}
	full := Run(in, "all")
	if full.N != 3 || full.Failed != 1 || full.Bits == 0 || full.Sum == 0 {
		t.Fatalf("full = %+v", full)
	}
	if again := Run(in, "all"); again != full {
		t.Fatalf("not deterministic: %+v vs %+v", again, full)
	}
	if p := Run(in, "parse"); p.Bits != 3+6 {
		t.Fatalf("parse stage counts atoms: %+v", p)
	}
}
