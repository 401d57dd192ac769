package chem

import (
	"errors"
	"testing"
)

// FuzzParseSMILES checks that the reader never panics or hangs, that every
// rejection is a *ParseError with an in-range position, and that every
// accepted molecule can be described and fingerprinted.
// Run: go test -fuzz=FuzzParseSMILES -fuzztime=60s ./sdk/chem/
func FuzzParseSMILES(f *testing.F) {
	for _, c := range invalidSMILES {
		f.Add(c.smiles)
	}
	for _, s := range []string{
		"c1ccccc1", "C1=CC=CC=C1", "O=c1cccc[nH]1", "[O-][n+]1ccccc1", "[cH-]1cccc1",
		"C%(123)CC%(123)", "[2H]C([2H])([2H])O", "F/C=C/F", "N[C@@H](C)C(=O)O", "[CH3:1]C",
		"C12C3C4C1C5C2C3C45", "c1ccc2c(c1)[nH]c1ccccc12", "CN(=O)=O", "[Cu+2].[O-]S(=O)(=O)[O-]",
		"C1CC2CC3CC1CC(C2)C3", "OC[C@H]1OC(O)[C@H](O)[C@@H](O)[C@@H]1O", "*c1ccccc1", "[se]1cccc1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseSMILES(s)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %T is not *ParseError", s, err)
			}
			if pe.Pos < 0 || pe.Pos > len(s) {
				t.Fatalf("%q: position %d outside input", s, pe.Pos)
			}
			return
		}
		d := Describe(m)
		if d.HeavyAtoms > m.NumAtoms() || d.MolWt < 0 {
			t.Fatalf("%q: inconsistent descriptors %+v", s, d)
		}
		fp := Morgan(m, 2, 1024)
		if fp.Count() > 3*m.NumAtoms() {
			t.Fatalf("%q: %d bits from %d atoms", s, fp.Count(), m.NumAtoms())
		}
	})
}
