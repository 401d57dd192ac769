package chem

import (
	"slices"
	"testing"
)

// TestCrippenTypeCacheExact compares the Crippen types found through the
// environment cache (cold, then warm) with those of the patterns alone, on
// the reference molecules and the Lipinski edge cases.
func TestCrippenTypeCacheExact(t *testing.T) {
	var mols []*Mol
	for _, r := range loadReference(t) {
		if m, err := ParseSMILES(r.smiles); err == nil {
			mols = append(mols, m)
		}
	}
	for _, s := range append(slices.Clone(hbondEdgeCases), rotatableEdgeCases...) {
		if m, err := ParseSMILES(s); err == nil {
			mols = append(mols, m)
		}
	}
	want := make([][]string, len(mols))
	crippenTypeCacheOff = true
	for i, m := range mols {
		want[i] = m.CrippenTypes()
	}
	crippenTypeCacheOff = false
	for pass := 0; pass < 2; pass++ {
		for i, m := range mols {
			if got := m.CrippenTypes(); !slices.Equal(got, want[i]) {
				t.Fatalf("pass %d, %s: types %v through the cache, %v by the patterns", pass, m.SMILES(), got, want[i])
			}
		}
	}
}
