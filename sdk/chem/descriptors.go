package chem

import (
	"math/bits"
	"slices"
	"strings"
)

// Descriptors holds the standard physico-chemical descriptors of a
// molecule, each computed as RDKit 2022.09 does (function named in the
// comment).
type Descriptors struct {
	Formula        string  `json:"formula"`           // CalcMolFormula (Hill order, charge suffix)
	MolWt          float64 `json:"mol_wt"`            // Descriptors.MolWt, average mass
	ExactMass      float64 `json:"exact_mass"`        // Descriptors.ExactMolWt, monoisotopic
	HeavyAtoms     int     `json:"heavy_atoms"`       // GetNumHeavyAtoms
	FormalCharge   int     `json:"formal_charge"`     // GetFormalCharge
	HBD            int     `json:"hbd"`               // rdMolDescriptors.CalcNumHBD
	HBA            int     `json:"hba"`               // rdMolDescriptors.CalcNumHBA
	NHOHCount      int     `json:"nhoh_count"`        // CalcNumLipinskiHBD: hydrogens on N and O
	NOCount        int     `json:"no_count"`          // CalcNumLipinskiHBA: N and O atoms
	RotatableBonds int     `json:"rotatable_bonds"`   // CalcNumRotatableBonds (default)
	RingCount      int     `json:"ring_count"`        // CalcNumRings
	AromaticRings  int     `json:"aromatic_rings"`    // CalcNumAromaticRings
	TPSA           float64 `json:"tpsa"`              // CalcTPSA (N and O only)
	CLogP          float64 `json:"clogp"`             // Crippen MolLogP
	MR             float64 `json:"mr"`                // Crippen MolMR
	FractionCSP3   float64 `json:"fraction_csp3"`     // CalcFractionCSP3
	NumAtomsWithHs int     `json:"num_atoms_with_hs"` // all atoms including hydrogens
}

// Describe computes all descriptors of m.
func Describe(m *Mol) Descriptors {
	d := Descriptors{
		Formula:        m.Formula(),
		MolWt:          m.MolWt(),
		ExactMass:      m.ExactMass(),
		HeavyAtoms:     m.NumHeavyAtoms(),
		FormalCharge:   m.FormalCharge(),
		NHOHCount:      m.NHOHCount(),
		NOCount:        m.NOCount(),
		RingCount:      m.NumRings(),
		AromaticRings:  m.NumAromaticRings(),
		TPSA:           m.TPSA(),
		FractionCSP3:   m.FractionCSP3(),
		NumAtomsWithHs: m.numAtomsWithHs(),
	}
	// RDKit's Lipinski SMARTS (patHBD, patHBA, patRotatableStrict), written out
	d.HBD = m.numHBD()
	d.HBA = m.numHBA()
	d.RotatableBonds = m.numRotatableStrict()
	d.CLogP, d.MR = m.crippenWith(nil)
	return d
}

func (m *Mol) numAtomsWithHs() int {
	n := len(m.atoms)
	for i := range m.atoms {
		n += m.atoms[i].TotalHs()
	}
	return n
}

// TotalHs is the number of implicit plus bracket hydrogens on the atom.
func (a *atom) TotalHs() int { return int(a.implicitH) + int(a.explicitH) }

// Formula returns the molecular formula as RDKit's CalcMolFormula writes
// it: C first, then H, then the other elements alphabetically (RDKit puts H
// second even without carbon: "HFO3S"), with the net
// charge appended as RDKit's CalcMolFormula writes it ("+", "-2", ...).
// Isotopes are counted with their element.
func (m *Mol) Formula() string {
	// counts by element, and the elements other than C and H that are
	// present as bits of their alphabetical rank, read back in order: no
	// sort and no string comparisons per molecule
	var counts [len(elements)]int32
	var present [(len(elements) + 63) / 64]uint64
	for i := range m.atoms {
		a := &m.atoms[i]
		counts[a.z]++
		counts[1] += int32(a.TotalHs())
		if a.z != 1 && a.z != 6 {
			r := elementRank[a.z]
			present[r/64] |= 1 << (r % 64)
		}
	}
	buf := make([]byte, 0, 32)
	write := func(z int) {
		// byte by byte: appending a slice is a memmove call in Go's wasm code
		sym := elements[z].symbol
		for k := 0; k < len(sym); k++ {
			buf = append(buf, sym[k])
		}
		if c := counts[z]; c > 1 {
			buf = appendSmallInt(buf, int(c))
		}
	}
	if counts[6] > 0 {
		write(6)
	}
	if counts[1] > 0 {
		write(1)
	}
	for w, bitsLeft := range present {
		for bitsLeft != 0 {
			r := w*64 + bits.TrailingZeros64(bitsLeft)
			bitsLeft &= bitsLeft - 1
			write(int(elementsByName[r]))
		}
	}
	if q := m.FormalCharge(); q > 0 {
		buf = append(buf, '+')
		if q > 1 {
			buf = appendSmallInt(buf, q)
		}
	} else if q < 0 {
		buf = append(buf, '-')
		if q < -1 {
			buf = appendSmallInt(buf, -q)
		}
	}
	return string(buf)
}

// appendSmallInt appends the decimal digits of n ≥ 0 (strconv.AppendInt
// without its calls, which cost much in Go's wasm code).
func appendSmallInt(buf []byte, n int) []byte {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	for ; i < len(d); i++ {
		buf = append(buf, d[i])
	}
	return buf
}

// elementsByName lists the atomic numbers in alphabetical order of their
// symbols; elementRank[z] is the position of z in it.
var elementsByName, elementRank = func() ([]uint8, []uint8) {
	byName := make([]uint8, len(elements))
	for z := range byName {
		byName[z] = uint8(z)
	}
	slices.SortStableFunc(byName, func(a, b uint8) int { return strings.Compare(elements[a].symbol, elements[b].symbol) })
	rank := make([]uint8, len(elements))
	for r, z := range byName {
		rank[z] = uint8(r)
	}
	return byName, rank
}()

// MolWt returns the average molecular weight (isotope-labelled atoms use
// their isotope mass).
func (m *Mol) MolWt() float64 {
	w := 0.0
	hw := elements[1].weight
	for i := range m.atoms {
		a := &m.atoms[i]
		if a.isotope > 0 {
			w += isotopeMass(int(a.z), int(a.isotope))
		} else {
			w += elements[a.z].weight
		}
		w += float64(a.TotalHs()) * hw
	}
	return w
}

// electronMass in u (NIST), subtracted per unit of positive charge by
// RDKit's ExactMolWt.
const electronMass = 0.00054857991

// ExactMass returns the monoisotopic mass (most common isotope of each
// element, or the labelled isotope), corrected for the electrons lost or
// gained by charged species as RDKit's ExactMolWt does.
func (m *Mol) ExactMass() float64 {
	w := 0.0
	hm := elements[1].isoMass
	for i := range m.atoms {
		a := &m.atoms[i]
		if a.isotope > 0 {
			w += isotopeMass(int(a.z), int(a.isotope))
		} else {
			w += elements[a.z].isoMass
		}
		w += float64(a.TotalHs()) * hm
	}
	return w - float64(m.FormalCharge())*electronMass
}

// NumHeavyAtoms counts atoms other than hydrogen.
func (m *Mol) NumHeavyAtoms() int {
	n := 0
	for i := range m.atoms {
		if m.atoms[i].z > 1 {
			n++
		}
	}
	return n
}

// FormalCharge returns the net formal charge.
func (m *Mol) FormalCharge() int {
	q := 0
	for i := range m.atoms {
		q += int(m.atoms[i].charge)
	}
	return q
}

// NHOHCount counts hydrogens on N and O (RDKit NHOHCount, the original
// rule-of-five donor count).
func (m *Mol) NHOHCount() int {
	n := 0
	for i := range m.atoms {
		if z := m.atoms[i].z; z == 7 || z == 8 {
			n += m.atoms[i].TotalHs() + m.hNeighbors(i)
		}
	}
	return n
}

// NOCount counts N and O atoms (RDKit NOCount, the original rule-of-five
// acceptor count).
func (m *Mol) NOCount() int {
	n := 0
	for i := range m.atoms {
		if z := m.atoms[i].z; z == 7 || z == 8 {
			n++
		}
	}
	return n
}

// NumAromaticRings counts rings whose bonds are all aromatic.
func (m *Mol) NumAromaticRings() int {
	n := 0
	for _, rb := range m.ringBonds {
		ok := true
		for _, b := range rb {
			if !m.bonds[b].arom {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// FractionCSP3 is the fraction of carbons with four total connections.
func (m *Mol) FractionCSP3() float64 {
	nc, n3 := 0, 0
	for i := range m.atoms {
		if m.atoms[i].z == 6 {
			nc++
			if m.Degree(i)+m.atoms[i].TotalHs() == 4 {
				n3++
			}
		}
	}
	if nc == 0 {
		return 0
	}
	return float64(n3) / float64(nc)
}

// TPSA returns the topological polar surface area (Ertl et al. 2000,
// J. Med. Chem. 43:3714) from N and O contributions, as RDKit's default.
func (m *Mol) TPSA() float64 {
	total := 0.0
	for i := range m.atoms {
		a := &m.atoms[i]
		if a.z != 7 && a.z != 8 {
			continue
		}
		var nNbr, nH, nSing, nDoub, nTrip, nArom int
		for k, bi := range m.BondsOf(i) {
			b := &m.bonds[bi]
			if m.atoms[m.Neighbors(i)[k]].z == 1 {
				nH++
				continue
			}
			nNbr++
			if b.arom {
				nArom++
				continue
			}
			switch b.order {
			case BondSingle:
				nSing++
			case BondDouble:
				nDoub++
			case BondTriple:
				nTrip++
			}
		}
		nH += a.TotalHs()
		chg := int(a.charge)
		in3 := m.inRingOfSize(i, 3)
		total += tpsaContrib(int(a.z), nNbr, nH, chg, nSing, nDoub, nTrip, nArom, in3)
	}
	return total
}

func (m *Mol) inRingOfSize(i, size int) bool {
	if m.atomRingCt[i] == 0 {
		return false
	}
	for _, r := range m.rings {
		if len(r) != size {
			continue
		}
		for _, a := range r {
			if int(a) == i {
				return true
			}
		}
	}
	return false
}

func tpsaContrib(z, nNbr, nH, chg, nSing, nDoub, nTrip, nArom int, in3 bool) float64 {
	t := -1.0
	if z == 7 {
		switch nNbr {
		case 1:
			switch {
			case nH == 0 && chg == 0 && nTrip == 1:
				t = 23.79
			case nH == 1 && chg == 0 && nDoub == 1:
				t = 23.85
			case nH == 2 && chg == 0 && nSing == 1:
				t = 26.02
			case nH == 2 && chg == 1 && nDoub == 1:
				t = 25.59
			case nH == 3 && chg == 1 && nSing == 1:
				t = 27.64
			}
		case 2:
			switch {
			case nH == 0 && chg == 0 && nSing == 1 && nDoub == 1:
				t = 12.36
			case nH == 0 && chg == 0 && nTrip == 1 && nDoub == 1:
				t = 13.60
			case nH == 1 && chg == 0 && nSing == 2 && in3:
				t = 21.94
			case nH == 1 && chg == 0 && nSing == 2 && !in3:
				t = 12.03
			case nH == 0 && chg == 1 && nTrip == 1 && nSing == 1:
				t = 4.36
			case nH == 1 && chg == 1 && nDoub == 1 && nSing == 1:
				t = 13.97
			case nH == 2 && chg == 1 && nSing == 2:
				t = 16.61
			case nH == 0 && chg == 0 && nArom == 2:
				t = 12.89
			case nH == 1 && chg == 0 && nArom == 2:
				t = 15.79
			case nH == 1 && chg == 1 && nArom == 2:
				t = 14.14
			}
		case 3:
			switch {
			case nH == 0 && chg == 0 && nSing == 3 && in3:
				t = 3.01
			case nH == 0 && chg == 0 && nSing == 3 && !in3:
				t = 3.24
			case nH == 0 && chg == 0 && nSing == 1 && nDoub == 2:
				t = 11.68
			case nH == 0 && chg == 1 && nSing == 2 && nDoub == 1:
				t = 3.01
			case nH == 1 && chg == 1 && nSing == 3:
				t = 4.44
			case nH == 0 && chg == 0 && nArom == 3:
				t = 4.41
			case nH == 0 && chg == 0 && nSing == 1 && nArom == 2:
				t = 4.93
			case nH == 0 && chg == 0 && nDoub == 1 && nArom == 2:
				t = 8.39
			case nH == 0 && chg == 1 && nArom == 3:
				t = 4.10
			case nH == 0 && chg == 1 && nSing == 1 && nArom == 2:
				t = 3.88
			}
		case 4:
			if nH == 0 && nSing == 4 && chg == 1 {
				t = 0
			}
		}
		if t < 0 {
			t = 30.5 - float64(nNbr)*8.2 + float64(nH)*1.5
			if t < 0 {
				t = 0
			}
		}
		return t
	}
	switch nNbr {
	case 1:
		switch {
		case nH == 0 && chg == 0 && nDoub == 1:
			t = 17.07
		case nH == 1 && chg == 0 && nSing == 1:
			t = 20.23
		case nH == 0 && chg == -1 && nSing == 1:
			t = 23.06
		}
	case 2:
		switch {
		case nH == 0 && chg == 0 && nSing == 2 && in3:
			t = 12.53
		case nH == 0 && chg == 0 && nSing == 2 && !in3:
			t = 9.23
		case nH == 0 && chg == 0 && nArom == 2:
			t = 13.14
		}
	}
	if t < 0 {
		t = 28.5 - float64(nNbr)*8.6 + float64(nH)*1.5
		if t < 0 {
			t = 0
		}
	}
	return t
}
