package chem

import "testing"

// TestHBondsMatchSMARTS compares the written-out donor and acceptor counts
// with the SMARTS patterns they replace, on the reference molecules and on
// structures aimed at each alternative.
func TestHBondsMatchSMARTS(t *testing.T) {
	var smiles []string
	for _, r := range loadReference(t) {
		smiles = append(smiles, r.smiles)
	}
	smiles = append(smiles, hbondEdgeCases...)
	smiles = append(smiles, rotatableEdgeCases...)
	n := 0
	for _, s := range smiles {
		m, err := ParseSMILES(s)
		if err != nil {
			continue
		}
		g := newMatchGraph(m, false)
		hbd, hba := g.countAtoms(patHBD), g.countAtoms(patHBA)
		g.release()
		if got := m.numHBD(); got != hbd {
			t.Errorf("%s: %d donors, the SMARTS pattern counts %d", s, got, hbd)
		}
		if got := m.numHBA(); got != hba {
			t.Errorf("%s: %d acceptors, the SMARTS pattern counts %d", s, got, hba)
		}
		n++
	}
	if n < 3000 {
		t.Fatalf("only %d molecules compared", n)
	}
}

var hbondEdgeCases = []string{
	"CO", "CS", "COC", "CSC", "C[O-]", "C[S-]", "CC(=O)O", "CC(=O)[O-]", "OP(=O)(O)O", "CS(=O)(=O)O",
	"CN", "CNC", "CN(C)C", "C[NH3+]", "C[NH2+]C", "C[N+](C)(C)C", "CC(=O)N", "CC(=S)N", "CN=O", "C=NN",
	"c1ccncc1", "c1cc[nH]c1", "c1ccoc1", "c1ccsc1", "c1cc[n+]([O-])cc1", "c1cc[nH+]cc1", "[O-][n+]1ccccc1",
	"OO", "[OH2]", "[OH3+]", "[SH2]", "N#N", "C#N", "O=C1NC=CC=C1", "NC1=NC=CC1", "CP(=O)(N)N",
	"[H]OC", "[H]N([H])C", "CN([H])C", "OC1=CC=CC1=O", "NC1CC(=O)C1", "C[N+]([O-])=O", "CON", "NO",
	"c1ccc2[nH]ccc2c1", "Cn1ccnc1", "O=c1cc[nH]cc1", "S=C(N)N", "C[S](C)=O", "CS(C)(=O)=O",
}
