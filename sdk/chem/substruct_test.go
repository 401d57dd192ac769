package chem

import (
	"errors"
	"strings"
	"testing"
)

// subMatch parses pattern (SMARTS, or with smiles a molecule used as a
// query) and molecule and reports whether the pattern matches.
func subMatch(t testing.TB, pattern, mol string, smiles bool) bool {
	t.Helper()
	var q *Query
	if smiles {
		pm, err := ParseSMILES(pattern)
		if err != nil {
			t.Fatalf("pattern %q: %v", pattern, err)
		}
		q = QueryFromMol(pm)
	} else {
		var err error
		if q, err = ParseSMARTS(pattern); err != nil {
			t.Fatalf("pattern %q: %v", pattern, err)
		}
	}
	m, err := ParseSMILES(mol)
	if err != nil {
		t.Fatalf("molecule %q: %v", mol, err)
	}
	tg := NewTarget(m)
	ok, err := NewMatcher(1<<30).Match(q, tg)
	if err != nil {
		t.Fatalf("%q in %q: %v", pattern, mol, err)
	}
	// the screen never refuses a match
	f, qf := tg.Features(), q.Features()
	if ok && !f.Covers(&qf) {
		t.Fatalf("%q in %q: matches but the screen refuses it (%v vs %v)", pattern, mol, f, qf)
	}
	return ok
}

// TestSubstructureCases checks matches whose answers RDKit gives
// (Chem.MolFromSmarts / MolFromSmiles and HasSubstructMatch): ring
// closures, aromatic against aliphatic, charges, ring-only bonds,
// recursive patterns and disconnected patterns.
func TestSubstructureCases(t *testing.T) {
	const toluene, benzene, cyclohexane, hexane = "Cc1ccccc1", "c1ccccc1", "C1CCCCC1", "CCCCCC"
	cases := []struct {
		pattern, mol string
		smiles, want bool
	}{
		{"c1ccccc1", toluene, false, true},
		{"c1ccccc1", cyclohexane, false, false},
		{"C1CCCCC1", benzene, false, false}, // aliphatic pattern, aromatic ring
		{"C1CCCCC1", cyclohexane, false, true},
		{"C1CCCCC1", hexane, false, false}, // the ring closure is needed
		{"CCCCCC", cyclohexane, false, true},
		{"[#6]1~[#6]~[#6]~[#6]~[#6]~[#6]~1", benzene, false, true},
		{"[#6]1~[#6]~[#6]~[#6]~[#6]~[#6]~1", cyclohexane, false, true},
		{"[#6]1~[#6]~[#6]~[#6]~[#6]~1", cyclohexane, false, false},
		{"[CH3]c", toluene, false, true},
		{"CC", toluene, false, false}, // one aliphatic carbon only
		{"Cc", toluene, false, true},
		{"C1=CC=CC=C1", toluene, true, true},   // a SMILES query is aromatised
		{"C1=CC=CC=C1", toluene, false, false}, // as SMARTS it is Kekulé, aliphatic
		{"C1CCCCC1", benzene, true, false},     // single bonds do not match aromatic ones
		{"C", benzene, true, true},             // a SMILES atom does not test aromaticity (RDKit)
		{"c1ccc2ccccc2c1", "c1ccc2cc3ccccc3cc2c1", false, true},
		{"c1ccc2ccccc2c1", "c1ccc(cc1)-c1ccccc1", false, false},
		{"C1CC1", "C1CC1C", false, true},
		{"C1CC1", "CCC", false, false},
		{"*1**1", "C1CO1", false, true},
		{"C@C", "C1CCCC1", false, true},
		{"C@C", "CCCC", false, false}, // matches only via a ring bond
		{"C!@C", "C1CCCC1", false, false},
		{"C!@C", "CC1CCCC1", false, true},
		{"[N+](=O)[O-]", "O=[N+]([O-])c1ccccc1", false, true},
		{"[N+](=O)[O-]", "CN(=O)=O", false, true}, // normalised to the charged form
		{"[O-]", "CC(=O)O", false, false},
		{"[O-]", "CC(=O)[O-]", false, true},
		{"C(=O)[OH]", "CC(=O)O", false, true},
		{"C(=O)[OH]", "CC(=O)OC", false, false},
		{"[NH4+]", "[NH4+].[Cl-]", false, true},
		{"[+]", "C[N+](C)(C)C", false, true},
		{"[+]", "CN(C)C", false, false},
		{"[Na+]", "OC(=O)c1ccccc1OC(C)=O.[Na+]", true, true},
		{"[R2]", "c1ccc2ccccc2c1", false, true},
		{"[R2]", benzene, false, false},
		{"[r5]", "c1ccc2[nH]ccc2c1", false, true},
		{"[r5]", benzene, false, false},
		{"[nH]", "c1ccc2[nH]ccc2c1", false, true},
		{"[x3]", "c1ccc2ccccc2c1", false, true},
		{"[x3]", benzene, false, false},
		{"[$(C=O)]O", "CC(=O)O", false, true},
		{"[$(C=O)]O", "CCO", false, false},
		{"[$([OH]-c)]", "Oc1ccccc1", false, true},
		{"[$([OH]-c)]", "OCc1ccccc1", false, false},
		{"[$(C-[$(C=O)])]", "CC(C)=O", false, true},
		{"C.C", "CC", false, true},
		{"C.C", "C", false, false},
		{"[C,N;!R]", "C1CCCC1N", false, true},
		{"[C,N;!R]", "C1CCCC1", false, false},
		{"[#7;D3]", "CN(C)C", false, true},
		{"[#7;D3]", "CNC", false, false},
		{"[CX4]", "CC", false, true},
		{"[CX4]", "C=C", false, false},
		{"[v4N+]", "C[N+](C)(C)C", false, true},
		{"[2H]", "[2H]C", false, true},
		{"[2H]", "[3H]C", false, false},
		{"C=,#C", "C#C", false, true},
		{"C-;!@C", "CC1CC1", false, true},
		{"Cl", "ClCCl", false, true},
		{"[Cl]", "CCBr", false, false},
		{"c1ccccc1-c1ccccc1", "c1ccc(cc1)-c1ccccc1", false, true},
		{"C1CCC2CCCCC2C1", "C1CCC2CCCCC2C1", false, true}, // decalin: two ring closures
		{"[#6]12~[#6]~[#6]~[#6]~[#6]~1~[#6]~[#6]~[#6]~2", "C1CCC2CCCC2C1", false, false},
		{"O=C1NC(=O)c2ccccc12", "O=C1NC(=O)c2ccccc12", false, true},
	}
	for _, c := range cases {
		if got := subMatch(t, c.pattern, c.mol, c.smiles); got != c.want {
			kind := "SMARTS"
			if c.smiles {
				kind = "SMILES"
			}
			t.Errorf("%s %q in %q: %v, want %v", kind, c.pattern, c.mol, got, c.want)
		}
	}
}

// TestSMARTSRejects checks clear errors with positions for malformed or
// unsupported patterns and patterns beyond the limits.
func TestSMARTSRejects(t *testing.T) {
	for _, s := range []string{
		"", "C1CC", "C(C", "C)", "[C", "[Q]", "C=", "=C", "C..C", "[$(C]", "[$(C)", "[h1]", "[^2C]",
		"C%1C", "C11", "[#]", "(C)", "C(=)C", "[C&]", "[!]",
		strings.Repeat("C", MaxPatternAtoms+1), strings.Repeat("C", MaxPatternLength+1),
		"[$([$([$([$([$(C)])])])])]",
	} {
		_, err := ParseSMARTS(s)
		var pe *PatternError
		if !errors.As(err, &pe) || pe.Pos < 0 || pe.Pos > len(s) {
			t.Errorf("%q: %v, want a *PatternError in range", s, err)
		}
	}
}

// TestSubstructureBudget checks that a search beyond its step budget
// stops with ErrStepBudget and that the budget is shared by matches.
func TestSubstructureBudget(t *testing.T) {
	// a 12-ring of any atoms against a molecule of many 6-rings: many
	// partial paths, no match
	q, err := ParseSMARTS("*1~*~*~*~*~*~*~*~*~*~*~*~1")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseSMILES("c1ccc2cc3cc4cc5cc6ccccc6cc5cc4cc3cc2c1")
	if err != nil {
		t.Fatal(err)
	}
	tg := NewTarget(m)
	if _, err := NewMatcher(1000).Match(q, tg); !errors.Is(err, ErrStepBudget) {
		t.Fatalf("small budget: %v", err)
	}
	mt := NewMatcher(1 << 40)
	ok, err := mt.Match(q, tg)
	if err != nil {
		t.Fatal(err)
	}
	if ok { // the cycles of a linear acene have 6, 10, 14, ... atoms
		t.Fatal("a 12-ring in pentacene")
	}
	if mt.Remaining() >= 1<<40 {
		t.Fatal("no steps counted")
	}
}

// TestTargetBinary checks that the compact form reads back to the same
// matching behaviour and features, and that truncated input is refused.
func TestTargetBinary(t *testing.T) {
	for _, s := range []string{"Cc1ccccc1", "[2H]C([2H])([2H])O", "O=[N+]([O-])c1ccccc1", "C1CCC2CCCCC2C1", "[Na+].[Cl-]"} {
		m, err := ParseSMILES(s)
		if err != nil {
			t.Fatal(err)
		}
		a := NewTarget(m)
		b := a.AppendBinary(nil)
		var c Target
		if err := c.UnmarshalBinary(b); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if c.Features() != a.Features() || len(c.at) != len(a.at) {
			t.Fatalf("%s: features %v vs %v", s, c.Features(), a.Features())
		}
		for i := range a.at {
			if a.at[i] != c.at[i] {
				t.Fatalf("%s: atom %d %+v vs %+v", s, i, a.at[i], c.at[i])
			}
		}
		for n := 0; n < len(b); n++ {
			var d Target
			if d.UnmarshalBinary(b[:n]) == nil {
				t.Fatalf("%s: %d of %d bytes accepted", s, n, len(b))
			}
		}
	}
}

// TestSubstructureRDKitCounts counts the atoms matched by RDKit's H-bond
// donor and acceptor SMARTS (recursive patterns, charges, H counts,
// valences, negation) with the general matcher, anchored on each atom, and
// compares them with RDKit's values on the 3000 Tox21 molecules.
func TestSubstructureRDKitCounts(t *testing.T) {
	const hbd = "[N&!H0&v3,N&!H0&+1&v4,O&H1&+0,S&H1&+0,n&H1&+0]"
	const hba = "[$([O,S;H1;v2]-[!$(*=[O,N,P,S])]),$([O,S;H0;v2]),$([O,S;-]),$([N;v3;!$(N-*=!@[O,N,P,S])]),$([nH0,o,s;+0])]"
	qd, err := ParseSMARTS(hbd)
	if err != nil {
		t.Fatal(err)
	}
	qa, err := ParseSMARTS(hba)
	if err != nil {
		t.Fatal(err)
	}
	count := func(q *Query, tg *Target) int {
		mt := NewMatcher(1 << 40)
		mt.memo = grow(mt.memo, q.nrec*len(tg.at))
		clear(mt.memo)
		n := 0
		for i := range tg.at {
			ok, err := mt.search(q, tg, 0, int32(i))
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				n++
			}
		}
		return n
	}
	// anchored on atom 0 like a recursive pattern
	qd.anchor, qa.anchor = true, true
	qd.order, qd.fromPos, qd.fromMsk, qd.checks = nil, nil, nil, nil
	qa.order, qa.fromPos, qa.fromMsk, qa.checks = nil, nil, nil, nil
	qd.plan()
	qa.plan()
	bad := 0
	rows := loadReference(t)
	for _, r := range rows {
		m, err := ParseSMILES(r.smiles)
		if err != nil {
			t.Fatal(err)
		}
		tg := NewTarget(m)
		if d, a := count(qd, tg), count(qa, tg); d != r.hbd || a != r.hba {
			bad++
			if bad < 10 {
				t.Errorf("%s: hbd %d hba %d, RDKit %d %d", r.smiles, d, a, r.hbd, r.hba)
			}
		}
	}
	t.Logf("H-bond donor/acceptor counts equal to RDKit's on %d of %d molecules", len(rows)-bad, len(rows))
}

// bruteMatch enumerates every injective map of the pattern's atoms (an
// independent oracle of the search's plan, cursors and ring checks; atom
// and bond tests are the matcher's).
func bruteMatch(q *Query, tg *Target) bool {
	mt := NewMatcher(1 << 40)
	if q.nrec > 0 {
		mt.memo = grow(mt.memo, q.nrec*len(tg.at))
	}
	n, k := len(tg.at), len(q.atoms)
	if k > n {
		return false
	}
	img := make([]int, k)
	var rec func(i int, used []bool) bool
	rec = func(i int, used []bool) bool {
		if i == k {
			for _, b := range q.bonds {
				a, c := int32(img[b.a]), int32(img[b.b])
				found := false
				for x := tg.start[a]; x < tg.start[a+1]; x++ {
					if tg.nb[x] == c && b.mask>>tg.bt[x]&1 == 1 {
						found = true
					}
				}
				if !found {
					return false
				}
			}
			return true
		}
		for j := 0; j < n; j++ {
			if used[j] {
				continue
			}
			if ok, _ := mt.eval(q.atoms[i], tg, 0, int32(j)); !ok {
				continue
			}
			used[j], img[i] = true, j
			if rec(i+1, used) {
				return true
			}
			used[j] = false
		}
		return false
	}
	return rec(0, make([]bool, n))
}

// TestSubstructureBruteForce compares the search with exhaustive
// enumeration on small patterns and molecules.
func TestSubstructureBruteForce(t *testing.T) {
	pats := []string{"C1CC1", "c1ccccc1", "C=O", "[#6]~[#7]", "*1****1", "C(C)(C)C", "[R2]~[R2]", "a:a-A", "C.N",
		"[#6]1~[#6]~[#6]~1", "O~*~*~O", "C@C@C", "[!#6]~[!#6]", "*=*-*=*", "n1cccc1", "C1CCC1", "c-C(=O)"}
	mols := []string{"CC1CC1", "Cc1ccccc1O", "O=CC(=O)N", "C1CCCC1N", "c1ccc2ccccc2c1", "C12CC1C2", "OCCO",
		"c1cc[nH]c1", "CC(C)(C)C", "C=CC=C", "C1CCC1C", "NCCO", "c1ccccc1C(=O)N", "C1CC2CC1C2"}
	for _, ps := range pats {
		q, err := ParseSMARTS(ps)
		if err != nil {
			t.Fatal(err)
		}
		for _, ms := range mols {
			m, err := ParseSMILES(ms)
			if err != nil {
				t.Fatal(err)
			}
			tg := NewTarget(m)
			got, err := NewMatcher(1<<40).Match(q, tg)
			if err != nil {
				t.Fatal(err)
			}
			if want := bruteMatch(q, tg); got != want {
				t.Errorf("%q in %q: %v, enumeration says %v", ps, ms, got, want)
			}
		}
	}
}
