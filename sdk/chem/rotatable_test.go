package chem

import "testing"

// TestRotatableMatchesSMARTS compares the written-out strict rotatable-bond
// count with the SMARTS pattern it replaces, on the reference molecules and
// on structures aimed at each exclusion.
func TestRotatableMatchesSMARTS(t *testing.T) {
	var smiles []string
	for _, r := range loadReference(t) {
		smiles = append(smiles, r.smiles)
	}
	smiles = append(smiles, rotatableEdgeCases...)
	n := 0
	for _, s := range smiles {
		m, err := ParseSMILES(s)
		if err != nil {
			continue
		}
		g := newMatchGraph(m, false)
		want := g.countBonds(patRotatableStrict)
		g.release()
		if got := m.numRotatableStrict(); got != want {
			t.Errorf("%s: %d rotatable bonds, the SMARTS pattern counts %d", s, got, want)
		}
		n++
	}
	if n < 3000 {
		t.Fatalf("only %d molecules compared", n)
	}
}

var rotatableEdgeCases = []string{
	"CC(F)(F)F", "CCC(F)(F)F", "CCC(Cl)(Cl)Cl", "CCC(Br)(Br)Br", "CCC(C)(C)C", "CC(C)(C)C(C)(C)C",
	"CC(=O)NC", "CC(=O)N(C)C", "CC(=O)OC", "CC(=S)SC", "CC(=O)S", "CC(=O)[S-]", "CC(=N)NC", "CC(=[NH2+])NC",
	"CC(=[NH2+])N", "CNC(=O)c1ccccc1", "O=C(Nc1ccccc1)c1ccccc1", "CC#CC", "CC#N", "CCC#CCC",
	"C[N+](C)=C(C)NCC", "CC(=O)N1CCCC1", "CCOC(=O)C(C)(C)C", "c1ccccc1-c1ccccc1", "CC[2H]",
	"[2H]C([2H])([2H])C(C([2H])([2H])[2H])(C)CC", "CSC(=O)CC", "NC(=O)C(N)=O", "CN=C(C)NC",
	"C1CC1C(F)(F)F", "FC(F)(F)c1ccccc1", "CC(C)(C)c1ccccc1", "CC(=O)C(C)=O", "OC(=O)CC(=O)O",
}
