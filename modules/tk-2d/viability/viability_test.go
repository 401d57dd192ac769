package viability

import (
	"math"
	"testing"
)

func TestDoxorubicinEC50WithinDonorLD50s(t *testing.T) {
	f, err := ForCAS("23214-92-8")
	if err != nil || f == nil {
		t.Fatalf("no doxorubicin fit: %v", err)
	}
	lo, hi := f.Range()
	if len(f.DonorLD50) != 6 || math.Abs(lo-1.026) > 0.001 || math.Abs(hi-21.05) > 0.01 {
		t.Errorf("donor LD50s %v, want 6 from 1.026 to 21.05 µM", f.DonorLD50)
	}
	if f.Hill.EC50 < lo || f.Hill.EC50 > hi {
		t.Errorf("pooled EC50 %.3g µM outside the donor LD50 range %.3g–%.3g", f.Hill.EC50, lo, hi)
	}
	// Reference: the pooled two-parameter fit reported in the team's research
	// notes (R nls on the same rows): EC50 ≈ 2.57 µM, slope ≈ 0.67.
	if math.Abs(f.Hill.EC50-2.57) > 0.15 || math.Abs(f.Hill.Slope-0.67) > 0.05 {
		t.Errorf("pooled fit EC50 %.3g slope %.3g, want ≈2.57 and ≈0.67", f.Hill.EC50, f.Hill.Slope)
	}
	t.Logf("DOX 48 h: EC50 %.3f µM (SE log10 %.3f), slope %.3f (SE %.3f), n %d",
		f.Hill.EC50, f.Hill.SELog10EC50, f.Hill.Slope, f.Hill.SESlope, f.Hill.N)
}

func TestUntestedDrugHasNoFit(t *testing.T) {
	if f, err := ForCAS("1951-25-3"); err != nil || f != nil {
		t.Errorf("amiodarone fit = %v, %v; want none", f, err)
	}
}
