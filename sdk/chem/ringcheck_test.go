package chem

import "testing"

// TestSymmetrisedRings checks ring counts chemists expect from RDKit's
// symmetrised SSSR on cage molecules.
func TestSymmetrisedRings(t *testing.T) {
	for _, c := range []struct {
		smiles string
		rings  int
	}{
		{"C1C2CC3CC1CC(C2)C3", 4}, // adamantane
		{"C12C3C4C1C5C2C3C45", 6}, // cubane
		{"CC1(C)C2CCC(C)C1C2", 3}, // pinane
		{"C1CN2CCC1CC2", 3},       // quinuclidine
		{"c1ccc2ccccc2c1", 2},     // naphthalene: no envelope ring
		{"C1CCC2(CC1)CCCC2", 2},   // spiro
	} {
		m, err := ParseSMILES(c.smiles)
		if err != nil {
			t.Fatalf("%s: %v", c.smiles, err)
		}
		if m.NumRings() != c.rings {
			t.Errorf("%s: %d rings, want %d", c.smiles, m.NumRings(), c.rings)
		}
	}
}
