package chem

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrStepBudget is returned by a Matcher whose step budget ran out.
var ErrStepBudget = errors.New("chem: substructure search exceeded its step budget")

// compile builds the adjacency, the search plan and the features.
// A bond on a cycle of the pattern can only map to a ring bond (the images
// of a cycle's atoms are distinct, so they form a cycle), so its mask keeps
// ring bonds only and its atoms need ring atoms; an atom needs at least as
// many neighbours as it has in the pattern.
func (q *Query) compile() {
	q.adj = make([][]int, len(q.atoms))
	for k, b := range q.bonds {
		q.adj[b.a] = append(q.adj[b.a], k)
		q.adj[b.b] = append(q.adj[b.b], k)
	}
	q.needRing = make([]bool, len(q.atoms))
	q.minDeg = make([]uint8, len(q.atoms))
	for k, c := range q.cycleBonds() {
		if c {
			b := &q.bonds[k]
			b.mask &= maskRingOnly
			q.needRing[b.a], q.needRing[b.b] = true, true
		}
	}
	q.needZ = make([]int16, len(q.atoms))
	q.needArom = make([]int8, len(q.atoms))
	q.simple = make([]bool, len(q.atoms))
	for i, e := range q.atoms {
		q.minDeg[i] = clamp8(len(q.adj[i]))
		f := exprFacts(e)
		q.needZ[i], q.needArom[i] = int16(f.z), int8(f.arom)
		q.simple[i] = isSimple(e)
	}
	q.plan()
	q.feat = q.patternFeatures()
}

// isSimple reports whether e tests nothing but an element and
// aromaticity (what the facts pre-check in fits already decides).
func isSimple(e *qexpr) bool {
	switch e.op {
	case 'p':
		return e.prim == qTrue || e.prim == qZ && e.val > 0 || e.prim == qArom
	case '&':
		z, ar := 0, 0
		for _, k := range e.kids {
			if k.op != 'p' {
				return false
			}
			switch {
			case k.prim == qZ && k.val > 0:
				z++
			case k.prim == qArom:
				ar++
			default:
				return false
			}
		}
		return z <= 1 && ar <= 1
	}
	return false
}

// selectivity ranks how few atoms an expression is likely to accept.
func selectivity(e *qexpr) int {
	f := exprFacts(e)
	switch {
	case f.z > 1 && f.z != 6:
		return 4
	case f.chg != 0:
		return 3
	case f.z == 6 && f.arom >= 0:
		return 2
	case f.z != 0 || f.arom >= 0 || f.ring:
		return 1
	}
	return 0
}

// plan orders the pattern atoms for the search, as VF2++ does: a component
// starts at its most selective atom (the anchor, for a recursive pattern),
// then the next atom is the one with the most bonds to atoms already
// placed (ties: more selective, then higher degree), so every atom after a
// component's first is reached from a placed neighbour and its other bonds
// to placed atoms (ring closures) are checked as soon as it is placed.
func (q *Query) plan() {
	n := len(q.atoms)
	sel := make([]int, n)
	for i, e := range q.atoms {
		sel[i] = selectivity(e)
	}
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = -1
	}
	placedNb := make([]int, n)
	q.order = q.order[:0]
	for len(q.order) < n {
		best := -1
		better := func(i int) bool {
			if best < 0 {
				return true
			}
			if placedNb[i] != placedNb[best] {
				return placedNb[i] > placedNb[best]
			}
			if sel[i] != sel[best] {
				return sel[i] > sel[best]
			}
			return len(q.adj[i]) > len(q.adj[best])
		}
		if q.anchor && len(q.order) == 0 {
			best = 0
		} else {
			for i := 0; i < n; i++ {
				if pos[i] < 0 && better(i) {
					best = i
				}
			}
		}
		pos[best] = int32(len(q.order))
		q.order = append(q.order, int32(best))
		from, fmask := int32(-1), uint64(0)
		var checks []qcheck
		for _, bi := range q.adj[best] {
			b := q.bonds[bi]
			o := b.a
			if o == best {
				o = b.b
			}
			placedNb[o]++
			if pos[o] < 0 || int(pos[o]) == len(q.order)-1 {
				continue
			}
			if from < 0 {
				from, fmask = pos[o], b.mask
			} else {
				checks = append(checks, qcheck{pos: pos[o], mask: b.mask})
			}
		}
		q.fromPos = append(q.fromPos, from)
		q.fromMsk = append(q.fromMsk, fmask)
		q.checks = append(q.checks, checks)
	}
}

// tatom holds the features of a molecule atom that patterns test.
type tatom struct {
	z, hs, deg, conn, val, rc, rmin, x uint8
	arom, ring                         bool
	chg                                int8
	iso                                uint16
}

// Target is a molecule prepared for substructure matching, with a compact
// binary form (AppendBinary) for indexes that keep many.
type Target struct {
	at     []tatom
	start  []int32 // neighbours of atom i: nb[start[i]:start[i+1]]
	nb     []int32
	bt     []uint8 // bondIndex of the bond to that neighbour
	feat   Features
	featOK bool // feat is computed (on the first Features call)
}

// maxTargetAtoms bounds the atoms of a target (indices are 16-bit in the
// compact form); NewTarget leaves the atoms beyond it out.
const maxTargetAtoms = 65535

// NewTarget prepares m for matching.
func NewTarget(m *Mol) *Target {
	t := &Target{}
	n := min(len(m.atoms), maxTargetAtoms)
	t.at = make([]tatom, n)
	rmin := make([]int, n)
	for _, r := range m.rings {
		for _, a := range r {
			if int(a) < n && (rmin[a] == 0 || len(r) < rmin[a]) {
				rmin[a] = len(r)
			}
		}
	}
	t.start = make([]int32, n+1)
	for i := 0; i < n; i++ {
		a := &m.atoms[i]
		th := a.TotalHs()
		t.at[i] = tatom{z: a.z, arom: a.arom, ring: m.atomRingCt[i] > 0, chg: a.charge, iso: a.isotope,
			hs: clamp8(th + m.hNeighbors(i)), conn: clamp8(m.Degree(i) + th),
			val: clamp8(int(a.expVal) + int(a.implicitH)), rc: clamp8(int(m.atomRingCt[i])), rmin: clamp8(rmin[i])}
		for k, j := range m.Neighbors(i) {
			if int(j) >= n || len(t.nb)-int(t.start[i]) == 255 {
				continue // beyond the form's bounds (no real molecule)
			}
			b := &m.bonds[m.BondsOf(i)[k]]
			t.nb = append(t.nb, j)
			t.bt = append(t.bt, uint8(bondIndex(b.order, b.inRing)))
		}
		t.start[i+1] = int32(len(t.nb))
	}
	t.derive()
	return t
}

func clamp8(v int) uint8 {
	if v > 255 {
		return 255
	}
	if v < 0 {
		return 0
	}
	return uint8(v)
}

// derive sets the degrees and ring connectivities from the adjacency.
func (t *Target) derive() {
	t.featOK = false
	for i := range t.at {
		a := &t.at[i]
		a.deg = clamp8(int(t.start[i+1] - t.start[i]))
		x := 0
		for _, k := range t.bt[t.start[i]:t.start[i+1]] {
			x += int(k & 1)
		}
		a.x = clamp8(x)
	}
}

// features counts the target's features.
func (t *Target) features() Features {
	var f Features
	for i := range t.at {
		a := &t.at[i]
		arom := 0
		if a.arom {
			arom = 1
		}
		f.addAtom(int(a.z), arom, a.ring, int(a.chg))
		for x := t.start[i]; x < t.start[i+1]; x++ {
			if t.nb[x] < int32(i) {
				continue // each bond once
			}
			kind := t.bt[x]
			if kind&1 == 1 {
				f.inc(FeatRingBond)
			}
			switch BondOrder(kind >> 1) {
			case BondDouble:
				f.inc(FeatDouble)
			case BondTriple:
				f.inc(FeatTriple)
			case BondAromatic:
				f.inc(FeatAromBond)
			}
		}
	}
	return f
}

// NumAtoms is the number of atoms of the target.
func (t *Target) NumAtoms() int { return len(t.at) }

// Features returns the target's counts (see Features).
func (t *Target) Features() Features {
	if !t.featOK {
		t.feat, t.featOK = t.features(), true
	}
	return t.feat
}

// Target flags in the binary form.
const (
	tfArom = 1 << iota
	tfRing
	tfIso
)

// AppendBinary appends the compact form to b: the atom count, then per
// atom its element, flags, charge, H count, connections, valence, ring
// count, smallest ring, degree and ring bonds (and isotope when set), then
// each atom's neighbours in order as (atom, bond kind), atoms in one byte
// when the molecule has at most 256 of them, else two. Features are
// counted again when asked for.
func (t *Target) AppendBinary(b []byte) []byte {
	n := len(t.at)
	b = binary.AppendUvarint(b, uint64(n))
	for _, a := range t.at {
		fl := byte(0)
		if a.arom {
			fl |= tfArom
		}
		if a.ring {
			fl |= tfRing
		}
		if a.iso != 0 {
			fl |= tfIso
		}
		b = append(b, a.z, fl, byte(a.chg), a.hs, a.conn, a.val, a.rc, a.rmin, a.deg, a.x)
		if a.iso != 0 {
			b = binary.AppendUvarint(b, uint64(a.iso))
		}
	}
	for x, j := range t.nb {
		if n > 256 {
			b = append(b, byte(j>>8))
		}
		b = append(b, byte(j), t.bt[x])
	}
	return b
}

// errBadTarget is the error of malformed compact input.
var errBadTarget = errors.New("chem: malformed target")

// UnmarshalBinary reads the compact form into t, reusing its memory.
func (t *Target) UnmarshalBinary(b []byte) error {
	bad := errBadTarget
	n64, k := uint64(0), 1
	if len(b) > 0 && b[0] < 0x80 {
		n64 = uint64(b[0])
	} else {
		n64, k = binary.Uvarint(b)
	}
	if k <= 0 || n64 > uint64(len(b)) || n64 > maxTargetAtoms {
		return bad
	}
	n := int(n64)
	b = b[k:]
	t.at = grow(t.at, n)
	t.start = grow(t.start, n+1)
	t.start[0] = 0
	for i := range t.at {
		if len(b) < 10 {
			return bad
		}
		fl := b[1]
		t.at[i] = tatom{z: b[0], arom: fl&tfArom != 0, ring: fl&tfRing != 0, chg: int8(b[2]), hs: b[3], conn: b[4], val: b[5], rc: b[6], rmin: b[7], deg: b[8], x: b[9]}
		t.start[i+1] = t.start[i] + int32(b[8])
		b = b[10:]
		if fl&tfIso != 0 {
			v, k := binary.Uvarint(b)
			if k <= 0 || v > 0xffff {
				return bad
			}
			t.at[i].iso = uint16(v)
			b = b[k:]
		}
	}
	m := int(t.start[n])
	w := 2
	if n > 256 {
		w = 3
	}
	if len(b) != m*w {
		return bad
	}
	t.nb = grow(t.nb, m)
	t.bt = grow(t.bt, m)
	for x := 0; x < m; x++ {
		j := int32(b[0])
		if w == 3 {
			j = j<<8 | int32(b[1])
		}
		if int(j) >= n {
			return bad
		}
		t.nb[x], t.bt[x] = j, b[w-1]
		b = b[w:]
	}
	t.featOK = false
	return nil
}

// Matcher matches patterns against targets within a budget of search
// steps (candidate atoms tried, over every match it runs). A Matcher is
// not safe for concurrent use; it keeps its scratch memory between calls.
type Matcher struct {
	left int64
	memo []int8 // per recursive pattern and atom: 0 unknown, 1 match, 2 no match
	lv   [MaxRecursionDepth + 1]mlevel
}

type mlevel struct {
	img, cur []int32
	used     []bool
}

// NewMatcher returns a matcher allowed budget steps in all.
func NewMatcher(budget int64) *Matcher { return &Matcher{left: budget} }

// Remaining is the number of steps left.
func (mt *Matcher) Remaining() int64 { return mt.left }

// Match reports whether q matches a substructure of t (atoms mapped to
// distinct atoms, bonds to bonds; stereochemistry not considered). It
// returns ErrStepBudget when the matcher's budget runs out.
func (mt *Matcher) Match(q *Query, t *Target) (bool, error) {
	if len(q.atoms) > len(t.at) {
		return false, nil
	}
	if q.nrec > 0 {
		mt.memo = grow(mt.memo, q.nrec*len(t.at))
		clear(mt.memo)
	}
	return mt.search(q, t, 0, -1)
}

// search runs the plan of q on t at nesting level depth, anchored on atom
// anchor when it is not negative: a depth-first search with one candidate
// cursor per plan position, iterative (recursion only into $(...)
// patterns, at most MaxRecursionDepth deep).
func (mt *Matcher) search(q *Query, t *Target, depth int, anchor int32) (bool, error) {
	L := &mt.lv[depth]
	na, n := len(q.order), int32(len(t.at))
	L.img = grow(L.img, na)
	L.cur = grow(L.cur, na)
	L.used = grow(L.used, int(n))
	clear(L.used)
	img, cur, used := L.img, L.cur, L.used
	cur[0] = 0
	if anchor >= 0 {
		cur[0] = anchor
	}
	k := 0
	for {
		qa := int(q.order[k])
		cand := int32(-1)
		if fp := q.fromPos[k]; fp < 0 {
			end := n
			if k == 0 && anchor >= 0 {
				end = anchor + 1
			}
			for x := cur[k]; x < end; x++ {
				if mt.left--; mt.left < 0 {
					return false, ErrStepBudget
				}
				if used[x] {
					continue
				}
				ok, err := mt.fits(q, t, depth, k, qa, x)
				if err != nil {
					return false, err
				}
				if ok {
					cand, cur[k] = x, x+1
					break
				}
			}
		} else {
			mask := q.fromMsk[k]
			end := t.start[img[fp]+1]
			for x := cur[k]; x < end; x++ {
				if mt.left--; mt.left < 0 {
					return false, ErrStepBudget
				}
				j := t.nb[x]
				if used[j] || mask>>t.bt[x]&1 == 0 {
					continue
				}
				ok, err := mt.fits(q, t, depth, k, qa, j)
				if err != nil {
					return false, err
				}
				if ok {
					cand, cur[k] = j, x+1
					break
				}
			}
		}
		if cand < 0 {
			k--
			if k < 0 {
				return false, nil
			}
			used[img[k]] = false
			continue
		}
		img[k], used[cand] = cand, true
		k++
		if k == na {
			return true, nil
		}
		if fp := q.fromPos[k]; fp < 0 {
			cur[k] = 0
		} else {
			cur[k] = t.start[img[fp]]
		}
	}
}

// fits reports whether target atom j can take plan position k (pattern
// atom qa): its bonds to the images of earlier neighbours exist and match,
// and the atom expression holds.
func (mt *Matcher) fits(q *Query, t *Target, depth, k, qa int, j int32) (bool, error) {
	a := &t.at[j]
	if a.deg < q.minDeg[qa] || (q.needRing[qa] && !a.ring) ||
		(q.needZ[qa] > 0 && int16(a.z) != q.needZ[qa]) || (q.needArom[qa] >= 0 && a.arom != (q.needArom[qa] == 1)) {
		return false, nil
	}
	img := mt.lv[depth].img
	for _, c := range q.checks[k] {
		o := img[c.pos]
		found := false
		for x := t.start[j]; x < t.start[j+1]; x++ {
			if t.nb[x] == o {
				found = c.mask>>t.bt[x]&1 == 1
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	if q.simple[qa] {
		return true, nil
	}
	return mt.eval(q.atoms[qa], t, depth, j)
}

// eval evaluates an atom expression on target atom j. Expressions are at
// most four levels deep (';', ',', '&', '!' over primitives).
func (mt *Matcher) eval(e *qexpr, t *Target, depth int, j int32) (bool, error) {
	switch e.op {
	case '!':
		r, err := mt.eval(e.kids[0], t, depth, j)
		return !r, err
	case '&':
		for _, k := range e.kids {
			if r, err := mt.eval(k, t, depth, j); err != nil || !r {
				return false, err
			}
		}
		return true, nil
	case ',':
		for _, k := range e.kids {
			if r, err := mt.eval(k, t, depth, j); err != nil || r {
				return r, err
			}
		}
		return false, nil
	}
	a := &t.at[j]
	v := e.val
	switch e.prim {
	case qTrue:
		return true, nil
	case qZ:
		return int(a.z) == v, nil
	case qArom:
		return a.arom == (v == 1), nil
	case qHs:
		return int(a.hs) == v, nil
	case qDeg:
		return int(a.deg) == v, nil
	case qConn:
		return int(a.conn) == v, nil
	case qVal:
		return int(a.val) == v, nil
	case qRingCount:
		if v < 0 {
			return a.ring, nil
		}
		return int(a.rc) == v, nil
	case qRingSize:
		if v < 0 {
			return a.ring, nil
		}
		return int(a.rmin) == v, nil
	case qRingConn:
		if v < 0 {
			return a.x > 0, nil
		}
		return int(a.x) == v, nil
	case qCharge:
		return int(a.chg) == v, nil
	case qIso:
		return int(a.iso) == v, nil
	case qRec:
		m := &mt.memo[e.sub.recID*len(t.at)+int(j)]
		if *m == 0 {
			if depth+1 > MaxRecursionDepth {
				return false, fmt.Errorf("chem: $(...) nested deeper than %d", MaxRecursionDepth)
			}
			r, err := mt.search(e.sub, t, depth+1, j)
			if err != nil {
				return false, err
			}
			*m = 2
			if r {
				*m = 1
			}
		}
		return *m == 1, nil
	}
	return false, nil
}
