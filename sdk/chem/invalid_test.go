package chem

import (
	"errors"
	"strings"
	"testing"
)

// invalidSMILES lists inputs RDKit also rejects (or that are malformed
// OpenSMILES), why they are invalid, the reported position and a word the
// message must contain.
var invalidSMILES = []struct {
	smiles, why string
	pos         int
	want        string
}{
	{"", "empty input", 0, "empty"},
	{"C1CC", "ring bond 1 opened but never closed", 1, "ring closure 1 not closed"},
	{"C1CCC2CC", "ring bond 2 never closed (1 also open)", 1, "not closed"},
	{"C1CC1C1", "ring number 1 reused after closing and left open", 6, "ring closure 1 not closed"},
	{"C(C", "branch never closed", 1, "not closed"},
	{"CC)", "')' without '('", 2, "without matching"},
	{"C()", "empty branch", 1, "empty branch"},
	{"(C)C", "branch before any atom", 0, "before any atom"},
	{"Xx", "unknown element", 0, "unknown element"},
	{"[Xx]", "unknown element in brackets", 1, "unknown element"},
	{"CQ", "unknown element symbol", 1, "unknown element"},
	{"Na", "element outside the organic subset must be bracketed", 0, "brackets"},
	{"C(C)(C)(C)(C)C", "carbon with five bonds", 0, "greater than permitted"},
	{"CN(C)(C)C", "neutral nitrogen with four bonds", 1, "greater than permitted"},
	{"CO(C)C", "neutral oxygen with three bonds", 1, "greater than permitted"},
	{"F(F)F", "fluorine with two bonds", 0, "greater than permitted"},
	{"Cl=C", "chlorine with a double bond", 0, "greater than permitted"},
	{"[CH5]", "carbon with five hydrogens", 0, "greater than permitted"},
	{"[NH4]", "neutral nitrogen with four hydrogens", 0, "greater than permitted"},
	{"B(C)(C)(C)C", "neutral boron with four bonds", 0, "greater than permitted"},
	{"CS(=O)(=O)(=O)(=O)C", "sulfur with valence 10", 1, "greater than permitted"},
	{"O=O=O", "oxygen with valence 4", 2, "greater than permitted"},
	{"c1cccc1", "cyclopentadienyl written aromatic without charge or H", 0, "kekulize"},
	{"c1ccnc1", "pyrrole written without [nH]", 0, "kekulize"},
	{"n1cccc1", "pyrrole nitrogen without H", 0, "kekulize"},
	{"cc", "aromatic atoms outside a ring", 0, "non-ring atom marked aromatic"},
	{"c1ccccc1c", "trailing aromatic atom outside the ring", 8, "non-ring atom marked aromatic"},
	{"C==C", "two bond symbols in a row", 2, "two bond symbols"},
	{"=CC", "bond symbol before any atom", 0, "before any atom"},
	{"CC=", "bond symbol at the end", 2, "end of input"},
	{"C-(C)C", "bond symbol before a branch", 1, "before '('"},
	{"C..C", "two dots in a row", 2, "'.'"},
	{".C", "leading dot", 0, "'.'"},
	{"C.", "trailing dot", 1, "'.'"},
	{"C11", "ring closure bonding an atom to itself", 2, "itself"},
	{"C12CC12", "two ring closures making the same bond twice", 6, "duplicates"},
	{"C=1CCC-1", "conflicting ring-closure bond symbols", 7, "conflicting"},
	{"[C", "bracket atom not closed", 0, "not closed"},
	{"[]", "bracket atom without element", 1, "without element"},
	{"[13C", "bracket atom with isotope not closed", 0, "not closed"},
	{"[C@TH]", "chirality class without number", 2, "needs a number"},
	{"[C+99]", "absurd formal charge", 4, "charge"},
	{"[CH3:]", "atom class without number", 4, "atom class"},
	{"C%1C", "'%' ring number needs two digits", 1, "two digits"},
	{"C%(12C", "'%(' ring number not closed", 1, "malformed"},
	{"C1CC%(123456)CC1", "ring number above 99999", 4, "too large"},
	{"C(C(C(C(C(C(C(C", "several unclosed branches", 13, "not closed"},
}

func TestInvalidSMILESRejected(t *testing.T) {
	if len(invalidSMILES) < 30 {
		t.Fatalf("need at least 30 invalid cases, have %d", len(invalidSMILES))
	}
	for _, c := range invalidSMILES {
		m, err := ParseSMILES(c.smiles)
		if err == nil {
			t.Errorf("%q (%s) was accepted: %d atoms", c.smiles, c.why, m.NumAtoms())
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: error is %T, want *ParseError", c.smiles, err)
			continue
		}
		if pe.Pos != c.pos {
			t.Errorf("%q (%s): position %d, want %d (%v)", c.smiles, c.why, pe.Pos, c.pos, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q (%s): message %q lacks %q", c.smiles, c.why, err.Error(), c.want)
		}
		if !strings.HasPrefix(err.Error(), "smiles: position ") {
			t.Errorf("%q: message %q lacks the position prefix", c.smiles, err.Error())
		}
	}
}

// TestValidTrickySMILES checks inputs that must be accepted, with what a
// chemist would verify about them.
func TestValidTrickySMILES(t *testing.T) {
	cases := []struct {
		smiles  string
		formula string
		arom    int // aromatic rings
	}{
		{"c1ccccc1", "C6H6", 1},
		{"C1=CC=CC=C1", "C6H6", 1},                // Kekulé benzene perceived aromatic
		{"c1ccc2ccccc2c1", "C10H8", 2},            // naphthalene
		{"c1cc[nH]c1", "C4H5N", 1},                // pyrrole
		{"Cn1cccc1", "C5H7N", 1},                  // N-methylpyrrole
		{"c1ccoc1", "C4H4O", 1},                   // furan
		{"c1ccsc1", "C4H4S", 1},                   // thiophene
		{"O=c1cccc[nH]1", "C5H5NO", 1},            // 2-pyridone
		{"C[n+]1ccccc1", "C6H8N+", 1},             // N-methylpyridinium
		{"[O-][n+]1ccccc1", "C5H5NO", 1},          // pyridine N-oxide
		{"[cH-]1cccc1", "C5H5-", 1},               // cyclopentadienyl anion
		{"c1ccccc1-c1ccccc1", "C12H10", 2},        // biphenyl
		{"c1ccccc1c1ccccc1", "C12H10", 2},         // biphenyl without explicit single bond
		{"CC(=O)O.[Na+]", "C2H4NaO2+", 0},         // dot-separated components
		{"C%10CC%10", "C3H6", 0},                  // two-digit ring closure
		{"C%(123)CC%(123)", "C3H6", 0},            // RDKit-style %(n) ring closure
		{"[2H]C([2H])([2H])O", "CH4O", 0},         // isotopes counted with H
		{"[13CH4]", "CH4", 0},                     // isotope-labelled methane
		{"F/C=C/F", "C2H2F2", 0},                  // directional bonds
		{"N[C@@H](C)C(=O)O", "C3H7NO2", 0},        // chirality kept
		{"[CH3:1]C", "C2H6", 0},                   // atom class
		{"C1CC2CCC1C2", "C7H12", 0},               // bicyclic
		{"CN(=O)=O", "CH3NO2", 0},                 // nitro written pentavalent
		{"[Cu+2]", "Cu+2", 0},                     // metal ion
		{"c1ccc2c(c1)[nH]c1ccccc12", "C12H9N", 3}, // carbazole
		{"C1=CC=C2C=CC=CC2=C1", "C10H8", 2},       // Kekulé naphthalene
		{"*C", "CH3*", 0},                         // wildcard atom
		{"FC(Cl)(Br)I", "CBrClFI", 0},             // halogens in alphabetical order
		{"CCCCCCCCCCCC", "C12H26", 0},             // two-digit counts
		{"[O-]P([O-])([O-])=O", "O4P-3", 0},       // net charge with a count
		{"[O-]S(=O)(=O)[O-].[Na+].[Na+]", "Na2O4S", 0},
	}
	for _, c := range cases {
		m, err := ParseSMILES(c.smiles)
		if err != nil {
			t.Errorf("%q rejected: %v", c.smiles, err)
			continue
		}
		if f := m.Formula(); f != c.formula {
			t.Errorf("%q formula %s, want %s", c.smiles, f, c.formula)
		}
		if a := m.NumAromaticRings(); a != c.arom {
			t.Errorf("%q aromatic rings %d, want %d", c.smiles, a, c.arom)
		}
	}
	m, _ := ParseSMILES("N[C@@H](C)C(=O)O")
	if a := m.Atom(1); a.Chiral != ChiralCW || a.ChiralText != "@@" || a.ExplicitHs != 1 {
		t.Errorf("chiral atom read as %+v", a)
	}
	m, _ = ParseSMILES("[13CH3:7][NH3+]")
	if a := m.Atom(0); a.Isotope != 13 || a.Class != 7 || a.ExplicitHs != 3 {
		t.Errorf("bracket atom read as %+v", a)
	}
	if a := m.Atom(1); a.Charge != 1 || a.Pos != 9 {
		t.Errorf("charged atom read as %+v", a)
	}
}

func TestCrippenTypesPhenol(t *testing.T) {
	m, err := ParseSMILES("Oc1ccccc1")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(m.CrippenTypes(), " ")
	// O2 hydroxyl O, C23 aromatic C-O, C18 aromatic CH x5, H2 on O (alcohol), H1 x5 on C
	want := "O2 C23 C18 C18 C18 C18 C18 H2 H1 H1 H1 H1 H1"
	if got != want {
		t.Errorf("phenol types %q, want %q", got, want)
	}
	// Wildman–Crippen logP of phenol with RDKit's parameters: 1.3922
	if lp := m.CrippenLogP(); lp < 1.392 || lp > 1.3925 {
		t.Errorf("phenol logP %.4f, want 1.3922", lp)
	}
}

func TestFingerprintRoundTrip(t *testing.T) {
	a, _ := ParseSMILES("CCOc1ccccc1")
	b, _ := ParseSMILES("CCOc1ccccc1C")
	fa, fb := Morgan(a, 2, 2048), Morgan(b, 2, 2048)
	if s := Tanimoto(fa, fa); s != 1 {
		t.Errorf("self Tanimoto %v", s)
	}
	ts, ds := Tanimoto(fa, fb), Dice(fa, fb)
	if ts <= 0.3 || ts >= 1 || ds < ts {
		t.Errorf("Tanimoto %v Dice %v for close analogues", ts, ds)
	}
	raw, _ := fa.MarshalBinary()
	var back BitVec
	if err := back.UnmarshalBinary(raw); err != nil || Tanimoto(fa, &back) != 1 || back.Len() != 2048 {
		t.Errorf("binary round trip failed: %v", err)
	}
	txt, _ := fa.MarshalText()
	var back2 BitVec
	if err := back2.UnmarshalText(txt); err != nil || back2.String() != fa.String() {
		t.Errorf("text round trip failed: %v", err)
	}
	back3, err := ParseOnBits(2048, fa.String())
	if err != nil || Tanimoto(fa, back3) != 1 {
		t.Errorf("on-bit round trip failed: %v", err)
	}
	if _, err := ParseOnBits(2048, "1 2 4096"); err == nil {
		t.Error("out-of-range on-bit accepted")
	}
	if err := back.UnmarshalBinary(raw[:7]); err == nil {
		t.Error("truncated binary accepted")
	}
	ca, cb := MorganCounts(a, 2, 2048), MorganCounts(b, 2, 2048)
	total := 0
	for _, c := range ca.Counts {
		total += int(c)
	}
	// radius 0..2 environments: one per atom per radius, minus duplicates
	if total < a.NumAtoms() || total > 3*a.NumAtoms() {
		t.Errorf("count total %d for %d atoms", total, a.NumAtoms())
	}
	if s := TanimotoCounts(ca, ca); s != 1 {
		t.Errorf("self count Tanimoto %v", s)
	}
	if s := TanimotoCounts(ca, cb); s <= 0 || s >= 1 {
		t.Errorf("count Tanimoto %v", s)
	}
	// folded counts agree with the bit vector's on bits
	for _, i := range ca.Idx {
		if !fa.Get(int(i)) {
			t.Errorf("count index %d not set in bit vector", i)
		}
	}
	if len(ca.Idx) != fa.Count() {
		t.Errorf("%d count indices vs %d bits", len(ca.Idx), fa.Count())
	}
}
