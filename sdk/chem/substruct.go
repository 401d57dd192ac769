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
	for i := range q.atoms {
		q.minDeg[i] = clamp8(len(q.adj[i]))
	}
	q.plan()
	q.feat = q.patternFeatures()
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
// binary form (MarshalBinary) for indexes that keep many.
type Target struct {
	at     []tatom
	start  []int32 // neighbours of atom i: nb[start[i]:start[i+1]]
	nb     []int32
	bt     []uint8 // bondIndex of the bond to that neighbour
	feat   Features
	featOK bool // feat is computed (on the first Features call)
	// bonds as stored: (a, b, bondIndex)
	ba, bb []int32
	bk     []uint8
}

// NewTarget prepares m for matching.
func NewTarget(m *Mol) *Target {
	t := &Target{}
	n := len(m.atoms)
	t.at = make([]tatom, n)
	rmin := make([]int, n)
	for _, r := range m.rings {
		for _, a := range r {
			if rmin[a] == 0 || len(r) < rmin[a] {
				rmin[a] = len(r)
			}
		}
	}
	for i := range m.atoms {
		a := &m.atoms[i]
		th := a.TotalHs()
		t.at[i] = tatom{z: a.z, arom: a.arom, ring: m.atomRingCt[i] > 0, chg: a.charge, iso: a.isotope,
			hs: clamp8(th + m.hNeighbors(i)), conn: clamp8(m.Degree(i) + th),
			val: clamp8(int(a.expVal) + int(a.implicitH)), rc: clamp8(int(m.atomRingCt[i])), rmin: clamp8(rmin[i])}
	}
	for _, b := range m.bonds {
		t.ba = append(t.ba, b.a)
		t.bb = append(t.bb, b.b)
		t.bk = append(t.bk, uint8(bondIndex(b.order, b.inRing)))
	}
	t.link()
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

// link builds the adjacency, degrees and ring connectivity from atoms and
// bonds.
func (t *Target) link() {
	t.featOK = false
	n := len(t.at)
	t.start = grow(t.start, n+1)
	clear(t.start)
	for i := range t.at {
		t.at[i].deg, t.at[i].x = 0, 0
	}
	for k := range t.ba {
		t.start[t.ba[k]]++
		t.start[t.bb[k]]++
	}
	for i := 1; i <= n; i++ {
		t.start[i] += t.start[i-1]
	}
	t.nb = grow(t.nb, 2*len(t.ba))
	t.bt = grow(t.bt, 2*len(t.ba))
	for k := len(t.ba) - 1; k >= 0; k-- {
		a, b, kind := t.ba[k], t.bb[k], t.bk[k]
		t.start[a]--
		t.nb[t.start[a]], t.bt[t.start[a]] = b, kind
		t.start[b]--
		t.nb[t.start[b]], t.bt[t.start[b]] = a, kind
	}
	for i := range t.at {
		t.at[i].deg = clamp8(int(t.start[i+1] - t.start[i]))
	}
	for k, kind := range t.bk {
		if kind&1 == 1 {
			t.at[t.ba[k]].x++
			t.at[t.bb[k]].x++
		}
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
	}
	for _, kind := range t.bk {
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

// MarshalBinary appends the compact form: atom and bond counts, per atom
// element, flags, charge, H count, connections, valence, ring count and
// smallest ring (isotope when set), per bond its atoms and kind. Degrees,
// ring connectivity and features are derived again when read.
func (t *Target) MarshalBinary() ([]byte, error) { return t.AppendBinary(nil), nil }

// AppendBinary appends the compact form (MarshalBinary) to b.
func (t *Target) AppendBinary(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(t.at)))
	b = binary.AppendUvarint(b, uint64(len(t.ba)))
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
		b = append(b, a.z, fl, byte(a.chg), a.hs, a.conn, a.val, a.rc, a.rmin)
		if a.iso != 0 {
			b = binary.AppendUvarint(b, uint64(a.iso))
		}
	}
	for k := range t.ba {
		b = binary.AppendUvarint(b, uint64(t.ba[k]))
		b = binary.AppendUvarint(b, uint64(t.bb[k]))
		b = append(b, t.bk[k])
	}
	return b
}

// UnmarshalBinary reads the compact form into t, reusing its memory.
func (t *Target) UnmarshalBinary(b []byte) error {
	bad := errors.New("chem: malformed target")
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return bad
	}
	b = b[k:]
	nb, k := binary.Uvarint(b)
	if k <= 0 || nb > uint64(len(b)) {
		return bad
	}
	b = b[k:]
	t.at = grow(t.at, int(n))
	for i := range t.at {
		if len(b) < 8 {
			return bad
		}
		fl := b[1]
		t.at[i] = tatom{z: b[0], arom: fl&tfArom != 0, ring: fl&tfRing != 0, chg: int8(b[2]), hs: b[3], conn: b[4], val: b[5], rc: b[6], rmin: b[7]}
		b = b[8:]
		if fl&tfIso != 0 {
			v, k := binary.Uvarint(b)
			if k <= 0 || v > 0xffff {
				return bad
			}
			t.at[i].iso = uint16(v)
			b = b[k:]
		}
	}
	t.ba, t.bb, t.bk = grow(t.ba, int(nb)), grow(t.bb, int(nb)), grow(t.bk, int(nb))
	for j := range t.ba {
		if len(b) >= 3 && b[0] < 0x80 && b[1] < 0x80 { // both atoms below 128: one byte each
			a, c := uint64(b[0]), uint64(b[1])
			if a >= n || c >= n || a == c {
				return bad
			}
			t.ba[j], t.bb[j], t.bk[j] = int32(a), int32(c), b[2]
			b = b[3:]
			continue
		}
		a, k1 := binary.Uvarint(b)
		if k1 <= 0 {
			return bad
		}
		c, k2 := binary.Uvarint(b[k1:])
		if k2 <= 0 || len(b) <= k1+k2 || a >= n || c >= n || a == c {
			return bad
		}
		t.ba[j], t.bb[j], t.bk[j] = int32(a), int32(c), b[k1+k2]
		b = b[k1+k2+1:]
	}
	if len(b) != 0 {
		return bad
	}
	t.link()
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
	if a := &t.at[j]; a.deg < q.minDeg[qa] || (q.needRing[qa] && !a.ring) {
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
