package metabolomics

import (
	"math"
	"testing"
)

func TestPanelAndTests(t *testing.T) {
	ms, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 200 {
		t.Errorf("%d metabolites, want 200", len(ms))
	}
	for _, m := range ms {
		for _, r := range m.Results {
			if p, q := float64(r.P), float64(r.Q); !math.IsNaN(p) && (p < 0 || p > 1 || q < p-1e-12 || q > 1) {
				t.Fatalf("%s: p %g q %g", m.Name, r.P, r.Q)
			}
		}
	}
}
