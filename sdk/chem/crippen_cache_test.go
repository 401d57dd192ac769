package chem

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestCrippenTypeCacheExact compares the Crippen types found through the
// environment cache (cold, then warm) with those of the patterns alone, on
// the reference molecules and the Lipinski edge cases.
func TestCrippenTypeCacheExact(t *testing.T) {
	mols := referenceMols(t)
	for _, s := range append(slices.Clone(hbondEdgeCases), rotatableEdgeCases...) {
		if m, err := ParseSMILES(s); err == nil {
			mols = append(mols, m)
		}
	}
	want := patternTypes(mols)
	for pass := 0; pass < 2; pass++ {
		for i, m := range mols {
			if got := m.CrippenTypes(); !slices.Equal(got, want[i]) {
				t.Fatalf("pass %d, %s: types %v through the cache, %v by the patterns", pass, m.SMILES(), got, want[i])
			}
		}
	}
}

// TestCrippenTypeCacheConcurrent types the reference molecules from four
// goroutines at once, each in its own order, through the shared cache (run
// with -race to check its sequence lock), and compares with the patterns.
func TestCrippenTypeCacheConcurrent(t *testing.T) {
	mols := referenceMols(t)
	want := patternTypes(mols)
	clear(crippenTypeCache[:])
	var wg sync.WaitGroup
	errs := make([]string, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range mols {
				i := (j*(2*w+1) + w*997) % len(mols)
				if got := mols[i].CrippenTypes(); !slices.Equal(got, want[i]) {
					errs[w] = mols[i].SMILES() + ": " + strings.Join(got, " ") + " through the cache, " + strings.Join(want[i], " ") + " by the patterns"
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
}

// referenceMols parses the reference SMILES (those that parse).
func referenceMols(t *testing.T) []*Mol {
	var mols []*Mol
	for _, r := range loadReference(t) {
		if m, err := ParseSMILES(r.smiles); err == nil {
			mols = append(mols, m)
		}
	}
	return mols
}

// patternTypes returns the Crippen types of mols found by the patterns alone,
// without the cache.
func patternTypes(mols []*Mol) [][]string {
	want := make([][]string, len(mols))
	crippenTypeCacheOff = true
	defer func() { crippenTypeCacheOff = false }()
	for i, m := range mols {
		want[i] = m.CrippenTypes()
	}
	return want
}
