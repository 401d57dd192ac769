package chem

// Features are counts of a molecule (each capped at 127) that a
// substructure pattern's counts can only be at most of: a molecule whose
// Features do not cover a pattern's (Covers) cannot match it. A match maps
// pattern atoms to distinct atoms and pattern bonds to distinct bonds, and
// every count below is of atoms or bonds with a property every image of a
// counted pattern atom or bond must have, so the molecule has at least as
// many. Capping both sides at 127 keeps the test sound (a capped pattern
// count asks less).
type Features [NumFeatures]uint8

// The counted features, indices into Features.
const (
	FeatHeavy    = iota // atoms other than hydrogen (pattern: of a known element other than H)
	FeatC               // carbon atoms
	FeatCArom           // aromatic carbon
	FeatN               // nitrogen
	FeatNArom           // aromatic nitrogen
	FeatO               // oxygen
	FeatOArom           // aromatic oxygen
	FeatS               // sulfur
	FeatSArom           // aromatic sulfur
	FeatP               // phosphorus
	FeatF               // fluorine
	FeatCl              // chlorine
	FeatBr              // bromine
	FeatI               // iodine
	FeatOther           // other elements but hydrogen
	FeatArom            // aromatic atoms
	FeatRingAtom        // atoms in a ring
	FeatRingBond        // bonds in a ring (pattern: on a cycle of the pattern, or required by @)
	FeatDouble          // double bonds
	FeatTriple          // triple bonds
	FeatAromBond        // aromatic bonds
	FeatPos             // atoms with a positive charge
	FeatNeg             // atoms with a negative charge
	FeatHydrogen        // hydrogen graph atoms
	NumFeatures
)

// featureCap is the largest count kept: small enough that a byte-wise
// comparison of packed words needs no carry between bytes.
const featureCap = 127

func (f *Features) inc(k int) {
	if f[k] < featureCap {
		f[k]++
	}
}

// Covers reports whether every count of f is at least that of q.
func (f *Features) Covers(q *Features) bool {
	for i := range f {
		if f[i] < q[i] {
			return false
		}
	}
	return true
}

// addAtom counts an atom of element z (0 or negative: unknown), aromatic
// (1), aliphatic (0) or unknown (-1), in a ring or not, charged with the
// sign of chg.
func (f *Features) addAtom(z int, arom int, ring bool, chg int) {
	switch {
	case z == 1:
		f.inc(FeatHydrogen)
	case z > 1:
		f.inc(FeatHeavy)
		k := FeatOther
		switch z {
		case 6:
			k = FeatC
		case 7:
			k = FeatN
		case 8:
			k = FeatO
		case 16:
			k = FeatS
		case 15:
			k = FeatP
		case 9:
			k = FeatF
		case 17:
			k = FeatCl
		case 35:
			k = FeatBr
		case 53:
			k = FeatI
		}
		f.inc(k)
		if arom == 1 {
			switch z {
			case 6:
				f.inc(FeatCArom)
			case 7:
				f.inc(FeatNArom)
			case 8:
				f.inc(FeatOArom)
			case 16:
				f.inc(FeatSArom)
			}
		}
	}
	if arom == 1 {
		f.inc(FeatArom)
	}
	if ring {
		f.inc(FeatRingAtom)
	}
	if chg > 0 {
		f.inc(FeatPos)
	} else if chg < 0 {
		f.inc(FeatNeg)
	}
}

// facts is what every atom an expression accepts has in common.
type facts struct {
	z    int  // atomic number, 0 unknown
	arom int  // 1 aromatic, 0 aliphatic, -1 unknown
	ring bool // in a ring
	chg  int  // sign of the charge, 0 unknown
}

var noFacts = facts{arom: -1}

// exprFacts derives the facts of an atom expression: '&' joins what its
// parts imply, ',' keeps what all alternatives imply, '!' implies nothing.
// A contradiction (an expression no atom satisfies) keeps the first part's
// facts, which is sound since such an atom matches nothing.
func exprFacts(e *qexpr) facts {
	switch e.op {
	case '!':
		return noFacts
	case '&':
		f := noFacts
		for _, k := range e.kids {
			g := exprFacts(k)
			if f.z == 0 {
				f.z = g.z
			}
			if f.arom < 0 {
				f.arom = g.arom
			}
			f.ring = f.ring || g.ring
			if f.chg == 0 {
				f.chg = g.chg
			}
		}
		return f
	case ',':
		f := exprFacts(e.kids[0])
		for _, k := range e.kids[1:] {
			g := exprFacts(k)
			if g.z != f.z {
				f.z = 0
			}
			if g.arom != f.arom {
				f.arom = -1
			}
			f.ring = f.ring && g.ring
			if g.chg != f.chg {
				f.chg = 0
			}
		}
		return f
	}
	f := noFacts
	switch e.prim {
	case qZ:
		f.z = e.val
	case qArom:
		f.arom = e.val
	case qRingCount, qRingSize, qRingConn:
		f.ring = e.val != 0
	case qCharge:
		switch {
		case e.val > 0:
			f.chg = 1
		case e.val < 0:
			f.chg = -1
		}
	case qRec:
		return exprFacts(e.sub.atoms[0])
	}
	return f
}

// Bond masks of the bond kinds a bond feature counts.
var (
	maskRingOnly = func() uint64 {
		var m uint64
		for o := BondOrder(0); o < 32; o++ {
			m |= 1 << bondIndex(o, true)
		}
		return m
	}()
	maskDouble uint64 = 1<<bondIndex(BondDouble, false) | 1<<bondIndex(BondDouble, true)
	maskTriple uint64 = 1<<bondIndex(BondTriple, false) | 1<<bondIndex(BondTriple, true)
	maskArom   uint64 = 1<<bondIndex(BondAromatic, false) | 1<<bondIndex(BondAromatic, true)
)

// patternFeatures counts what the pattern requires of a molecule. A bond
// on a cycle of the pattern maps to a bond on a cycle of the molecule (the
// images of a cycle's atoms are distinct), so it is a ring bond and its
// atoms ring atoms.
func (q *Query) patternFeatures() Features {
	var f Features
	cyc := q.cycleBonds()
	ringAtom := make([]bool, len(q.atoms))
	for k, b := range q.bonds {
		ring := cyc[k] || b.mask&^maskRingOnly == 0
		if ring {
			f.inc(FeatRingBond)
			ringAtom[b.a], ringAtom[b.b] = true, true
		}
		switch {
		case b.mask&^maskDouble == 0:
			f.inc(FeatDouble)
		case b.mask&^maskTriple == 0:
			f.inc(FeatTriple)
		case b.mask&^maskArom == 0:
			f.inc(FeatAromBond)
		}
	}
	for i, e := range q.atoms {
		fa := exprFacts(e)
		f.addAtom(fa.z, fa.arom, fa.ring || ringAtom[i], fa.chg)
	}
	return f
}

// cycleBonds reports for each bond whether it lies on a cycle of the
// pattern (it is not a bridge): its ends stay connected without it.
func (q *Query) cycleBonds() []bool {
	out := make([]bool, len(q.bonds))
	seen := make([]bool, len(q.atoms))
	var stack []int
	for k, b := range q.bonds {
		clear(seen)
		stack = append(stack[:0], b.a)
		seen[b.a] = true
		for len(stack) > 0 && !seen[b.b] {
			a := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, bi := range q.adj[a] {
				if bi == k {
					continue
				}
				o := q.bonds[bi].a
				if o == a {
					o = q.bonds[bi].b
				}
				if !seen[o] {
					seen[o] = true
					stack = append(stack, o)
				}
			}
		}
		out[k] = seen[b.b]
	}
	return out
}
