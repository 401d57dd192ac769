// Package chem is a small, dependency-free cheminformatics toolkit for
// toxgate model authors: a SMILES reader (OpenSMILES), RDKit-compatible
// sanitisation (implicit hydrogens, kekulisation, aromaticity, SSSR rings),
// descriptors (formula, weights, H-bond donors/acceptors, TPSA, Crippen
// logP/MR, ...) and Morgan fingerprints that aim at bit-for-bit agreement
// with RDKit. It is pure Go and builds for GOOS=wasip1 GOARCH=wasm.
package chem

// BondOrder is the type of a bond. The numeric values equal RDKit's
// Bond::BondType enumeration because Morgan fingerprints hash them.
type BondOrder uint8

// Bond orders.
const (
	BondSingle    BondOrder = 1
	BondDouble    BondOrder = 2
	BondTriple    BondOrder = 3
	BondQuadruple BondOrder = 4
	BondAromatic  BondOrder = 12
)

// Chirality is the tetrahedral (or other) chirality tag read from SMILES.
type Chirality uint8

// Chirality tags. ChiralOther covers @TH, @AL, @SP, @TB and @OH classes,
// which are kept as written (see Atom.ChiralText) but not interpreted.
const (
	ChiralNone Chirality = iota
	ChiralCCW            // @
	ChiralCW             // @@
	ChiralOther
)

// Atom is a read-only view of one atom of a Mol.
type Atom struct {
	AtomicNum  int       // 0 for the wildcard '*'
	Isotope    int       // 0 if unspecified
	Charge     int       // formal charge
	Aromatic   bool      // aromatic after RDKit-style perception
	ImplicitHs int       // hydrogens implied by valence rules (organic subset)
	ExplicitHs int       // hydrogens written in a bracket atom ([NH2+] has 2)
	Radicals   int       // unpaired electrons (bracket atoms below their valence)
	Chiral     Chirality // chirality tag as written
	ChiralText string    // raw chirality text ("@", "@@", "@TH1", ...)
	Class      int       // atom class (":n" in a bracket atom), 0 if none
	Pos        int       // 0-based offset of the atom in the input SMILES
	Bracket    bool      // written as a bracket atom
}

// TotalHs is the number of hydrogens on the atom that are not graph atoms
// (implicit plus bracket H count).
func (a Atom) TotalHs() int { return a.ImplicitHs + a.ExplicitHs }

// Symbol returns the element symbol ("*" for the wildcard).
func (a Atom) Symbol() string { return ElementSymbol(a.AtomicNum) }

// Bond is a read-only view of one bond of a Mol.
type Bond struct {
	Begin, End int       // atom indices
	Order      BondOrder // after kekulisation and aromaticity perception
	Dir        byte      // '/' or '\\' if written with a directional bond, else 0
	InRing     bool      // bond is part of a ring
}

// Other returns the atom at the other end of the bond.
func (b Bond) Other(i int) int {
	if b.Begin == i {
		return b.End
	}
	return b.Begin
}

// Mol is a sanitised molecule graph. Hydrogens are implicit (counted on
// their heavy atom) unless written as their own bracket atoms (e.g. [2H]).
// A Mol is immutable after ParseSMILES returns and safe for concurrent reads.
type Mol struct {
	atoms []atom
	bonds []bond
	// adjacency in CSR form: neighbours of atom i are nbr[start[i]:start[i+1]]
	start []int32
	nbr   []int32 // neighbour atom
	nbrB  []int32 // bond to that neighbour
	// ring information (symmetrised SSSR, as RDKit stores it)
	rings      [][]int32 // atom indices per ring
	ringBonds  [][]int32 // bond indices per ring
	atomRingCt []int32   // number of rings each atom is in (part of the adjacency's allocation)
	smiles     string
}

type atom struct {
	z          uint8
	arom       bool
	bracket    bool
	noImplicit bool
	chiral     Chirality
	charge     int8
	implicitH  uint8
	explicitH  uint8
	radicals   uint8
	expVal     uint8 // explicit valence of the Kekulé form (bond orders + bracket H)
	isotope    uint16
	class      int32
	pos        int32
	chiralAt   int32 // chirality text as written: smiles[chiralAt:chiralAt+chiralLen]
	chiralLen  int32 // (offsets keep atom free of pointers: not scanned by the GC)
}

type bond struct {
	a, b   int32
	order  BondOrder
	arom   bool // aromatic flag (input or perceived)
	inRing bool
	dir    byte
	pos    int32 // offset of the bond symbol or of the second atom
}

// SMILES returns the input string the molecule was parsed from.
func (m *Mol) SMILES() string { return m.smiles }

// NumAtoms returns the number of graph atoms (implicit hydrogens excluded).
func (m *Mol) NumAtoms() int { return len(m.atoms) }

// NumBonds returns the number of bonds between graph atoms.
func (m *Mol) NumBonds() int { return len(m.bonds) }

// Atom returns a view of atom i.
func (m *Mol) Atom(i int) Atom {
	a := &m.atoms[i]
	return Atom{
		AtomicNum: int(a.z), Isotope: int(a.isotope), Charge: int(a.charge), Aromatic: a.arom,
		ImplicitHs: int(a.implicitH), ExplicitHs: int(a.explicitH), Radicals: int(a.radicals),
		Chiral: a.chiral, ChiralText: m.smiles[a.chiralAt : a.chiralAt+a.chiralLen], Class: int(a.class), Pos: int(a.pos), Bracket: a.bracket,
	}
}

// AtomicNum returns the atomic number of atom i (Atom(i).AtomicNum, without
// building the whole view).
func (m *Mol) AtomicNum(i int) int { return int(m.atoms[i].z) }

// AtomCharge returns the formal charge of atom i (Atom(i).Charge).
func (m *Mol) AtomCharge(i int) int { return int(m.atoms[i].charge) }

// AtomAromatic reports whether atom i is aromatic (Atom(i).Aromatic).
func (m *Mol) AtomAromatic(i int) bool { return m.atoms[i].arom }

// Bond returns a view of bond i.
func (m *Mol) Bond(i int) Bond {
	b := &m.bonds[i]
	return Bond{Begin: int(b.a), End: int(b.b), Order: b.order, Dir: b.dir, InRing: b.inRing}
}

// Neighbors returns the indices of the atoms bonded to atom i. The slice
// is shared with the molecule and must not be modified.
func (m *Mol) Neighbors(i int) []int32 { return m.nbr[m.start[i]:m.start[i+1]] }

// BondsOf returns the indices of the bonds of atom i, parallel to
// Neighbors(i). The slice must not be modified.
func (m *Mol) BondsOf(i int) []int32 { return m.nbrB[m.start[i]:m.start[i+1]] }

// Degree returns the number of graph neighbours of atom i.
func (m *Mol) Degree(i int) int { return int(m.start[i+1] - m.start[i]) }

// NumRings returns the number of rings in RDKit's symmetrised SSSR.
func (m *Mol) NumRings() int { return len(m.rings) }

// Rings returns the rings as lists of atom indices (symmetrised SSSR).
// The slices must not be modified.
func (m *Mol) Rings() [][]int32 { return m.rings }

// IsAtomInRing reports whether atom i belongs to a ring.
func (m *Mol) IsAtomInRing(i int) bool { return m.atomRingCt[i] > 0 }

func (m *Mol) buildAdjacency() {
	n, nb := len(m.atoms), len(m.bonds)
	// one allocation: start (n+1), nbr and nbrB (2·nb each), and the ring
	// counts perceiveRings fills in (n)
	slab := make([]int32, n+1+4*nb+n)
	start := slab[: n+1 : n+1]
	m.nbr = slab[n+1 : n+1+2*nb : n+1+2*nb]
	m.nbrB = slab[n+1+2*nb : n+1+4*nb : n+1+4*nb]
	m.atomRingCt = slab[n+1+4*nb:]
	// start[i] counts up to the end of atom i, then the bonds are placed
	// from the last one down, which leaves start[i] at the beginning of atom
	// i and each atom's entries in bond order
	for _, b := range m.bonds {
		start[b.a]++
		start[b.b]++
	}
	for i := 1; i <= n; i++ {
		start[i] += start[i-1]
	}
	for bi := nb - 1; bi >= 0; bi-- {
		b := m.bonds[bi]
		start[b.b]--
		m.nbr[start[b.b]], m.nbrB[start[b.b]] = b.a, int32(bi)
		start[b.a]--
		m.nbr[start[b.a]], m.nbrB[start[b.a]] = b.b, int32(bi)
	}
	m.start = start
}

// valenceContrib returns twice the bond's contribution to an atom's valence
// (aromatic bonds count 1.5, so doubled values stay integral).
func (b *bond) valence2() int {
	if b.order == BondAromatic {
		return 3
	}
	return 2 * int(b.order)
}

// hNeighbors counts graph hydrogen atoms bonded to atom i.
func (m *Mol) hNeighbors(i int) int {
	n := 0
	for _, j := range m.Neighbors(i) {
		if m.atoms[j].z == 1 {
			n++
		}
	}
	return n
}

// explicitValence is the integer sum of bond orders plus bracket hydrogens
// (valid once bonds are kekulised or perceived aromatic bonds are counted
// as in RDKit).
func (m *Mol) explicitValence(i int) int {
	v2 := 0
	for _, bi := range m.BondsOf(i) {
		v2 += m.bonds[bi].valence2()
	}
	return (v2+1)/2 + int(m.atoms[i].explicitH)
}
