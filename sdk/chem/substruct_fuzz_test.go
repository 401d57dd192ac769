package chem

import (
	"errors"
	"testing"
)

// FuzzSubstructure checks that the SMARTS reader never panics or hangs
// and rejects with an in-range *PatternError, that a match within a step
// budget ends with an answer or ErrStepBudget, that the feature screen
// never refuses a match, and that a molecule used as a query matches
// itself.
// Run: go test -fuzz=FuzzSubstructure -fuzztime=60s ./sdk/chem/
func FuzzSubstructure(f *testing.F) {
	for _, c := range [][2]string{
		{"c1ccccc1", "Cc1ccccc1"}, {"C1CCCCC1", "c1ccccc1"}, {"[#6]1~[#6]~[#6]~1", "C1CC1"},
		{"[$(C=O)]O", "CC(=O)O"}, {"[N+](=O)[O-]", "O=[N+]([O-])c1ccccc1"}, {"C@C", "C1CCCC1"},
		{"[C,N;!R]", "C1CCCC1N"}, {"C.C", "CC"}, {"[2H]", "[2H]C"}, {"*1****1", "C12CC1C2"},
		{"[$([$([$(C)])])]", "CCC"}, {"C%10CC%10", "C1CC1"}, {"C%(12)CC%(12)", "C1CC1"},
		{"[!#6;R2,x3&+0]", "c1ccc2ccccc2c1"}, {"C-,=;!@C", "CC=C"}, {"[H+]", "[H+]"},
		{"[C@@H](F)(Cl)Br", "F[C@H](Cl)Br"}, {"[CH3:1]C", "CC"}, {"(C)", "C"}, {"C1CC", "C"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, pattern, mol string) {
		if len(pattern) > 300 || len(mol) > 300 {
			return
		}
		q, err := ParseSMARTS(pattern)
		if err != nil {
			var pe *PatternError
			if !errors.As(err, &pe) || pe.Pos < 0 || pe.Pos > len(pattern) {
				t.Fatalf("%q: %v is not an in-range *PatternError", pattern, err)
			}
		}
		m, err := ParseSMILES(mol)
		if err != nil {
			return
		}
		tg := NewTarget(m)
		var back Target
		if err := back.UnmarshalBinary(tg.AppendBinary(nil)); err != nil || back.Features() != tg.Features() {
			t.Fatalf("%q: binary form: %v", mol, err)
		}
		if q != nil {
			ok, err := NewMatcher(200000).Match(q, tg)
			if err != nil && !errors.Is(err, ErrStepBudget) {
				t.Fatalf("%q in %q: %v", pattern, mol, err)
			}
			tf, qf := tg.Features(), q.Features()
			if ok && !tf.Covers(&qf) {
				t.Fatalf("%q in %q: match refused by the screen", pattern, mol)
			}
		}
		self := QueryFromMol(m)
		ok, err := NewMatcher(200000).Match(self, &back)
		if err == nil && !ok {
			t.Fatalf("%q does not match itself", mol)
		}
		if err != nil && !errors.Is(err, ErrStepBudget) {
			t.Fatalf("%q self: %v", mol, err)
		}
	})
}
