package ml

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
)

// ADSet is an applicability-domain reference set: the packed Morgan radius-3
// 1024-bit fingerprints of the training molecules, sorted by bit count so
// that a query only scans the references whose count can beat its current
// neighbours (Dice ≤ 2·min(a,b)/(a+b)).
type ADSet struct {
	// Words is the number of 64-bit words per fingerprint.
	Words int
	// FP holds the fingerprints back to back; Pop their bit counts, ascending.
	FP  []uint64
	Pop []uint16
	// Threshold and MinNeighbours define the domain: a query is in domain when
	// at least MinNeighbours references have Dice similarity above Threshold.
	Threshold     float64
	MinNeighbours int
	// SMILES names the training compound of each reference, in the order of
	// FP and Pop (the SMILES of the training data); nil in a bundle that
	// carries none. Task.ADLabels holds their experimental labels.
	SMILES []string

	// rest8 is the bit count of words 8-15 of each 16-word reference (see
	// prepare); nil when the set is not prepared.
	rest8 []uint16
	// sliced is the transposed set that Check searches (see ad_sliced.go);
	// nil when the set is not prepared.
	sliced *slicedIndex
}

// NewADSet builds a reference set from fingerprints of equal length.
func NewADSet(fps [][]uint64, threshold float64, minNeighbours int) *ADSet {
	if len(fps) > 1<<16 {
		panic(fmt.Sprintf("ml: an AD set holds at most %d references, got %d", 1<<16, len(fps)))
	}
	a := &ADSet{Threshold: threshold, MinNeighbours: minNeighbours}
	if len(fps) == 0 {
		return a
	}
	a.Words = len(fps[0])
	idx, pops := adOrder(fps)
	a.FP = make([]uint64, 0, len(fps)*a.Words)
	a.Pop = make([]uint16, len(fps))
	for k, i := range idx {
		a.FP = append(a.FP, fps[i]...)
		a.Pop[k] = pops[i]
	}
	a.prepare()
	return a
}

// adOrder returns the reference order of fps (the input indices sorted
// stably by bit count) and their bit counts.
func adOrder(fps [][]uint64) (idx []int, pops []uint16) {
	idx = make([]int, len(fps))
	pops = make([]uint16, len(fps))
	for i, fp := range fps {
		idx[i] = i
		pops[i] = uint16(popcount(fp))
	}
	sort.SliceStable(idx, func(x, y int) bool { return pops[idx[x]] < pops[idx[y]] })
	return idx, pops
}

// ReferenceOrder returns, for each reference of the set in its order, the
// index in fps of its fingerprint, where fps are the fingerprints the set
// was built from (NewADSet), in the same order; it fails when they are not
// (another number, or another fingerprint at any position), so that names
// attached by that order are the references' own.
func (a *ADSet) ReferenceOrder(fps [][]uint64) ([]int, error) {
	if len(fps) != a.Len() {
		return nil, fmt.Errorf("ml: AD set has %d references, given %d fingerprints", a.Len(), len(fps))
	}
	idx, _ := adOrder(fps)
	for k, i := range idx {
		if len(fps[i]) != a.Words || !slices.Equal(fps[i], a.FP[k*a.Words:(k+1)*a.Words]) {
			return nil, fmt.Errorf("ml: AD reference %d differs from fingerprint %d of the given set", k, i)
		}
	}
	return idx, nil
}

// prepare computes the partial bit counts that the 1024-bit scan bounds with.
// NewADSet and DecodeBundle call it; a set whose counts are not ascending
// (not built by NewADSet) stays unprepared and is scanned linearly.
func (a *ADSet) prepare() {
	a.rest8 = nil
	a.buildSliced()
	if a.Words != 16 || len(a.FP) != 16*len(a.Pop) {
		return
	}
	for i := 1; i < len(a.Pop); i++ {
		if a.Pop[i] < a.Pop[i-1] {
			return
		}
	}
	r8 := make([]uint16, len(a.Pop))
	for i := range a.Pop {
		r8[i] = uint16(popcount(a.FP[i*16+8 : i*16+16]))
	}
	a.rest8 = r8
}

// Len returns the number of reference molecules.
func (a *ADSet) Len() int { return len(a.Pop) }

// Domain is the applicability-domain verdict for one query.
type Domain struct {
	// InDomain is true when at least MinNeighbours references have Dice > Threshold.
	InDomain bool `json:"in_domain"`
	// Nearest are the Dice similarities of the MinNeighbours nearest references, descending.
	Nearest []float64 `json:"nearest_similarities"`
	// Refs are the indices of those references in the set (ADSet.SMILES),
	// aligned with Nearest; among equal similarities, the one the search met first.
	Refs []int `json:"-"`
}

// Check finds the nearest references of the query fingerprint q: the
// bit-sliced count of a prepared set (searchSliced), else a linear scan of
// AND-popcounts skipping references whose bit count alone cannot beat the
// current k-th best (Dice ≤ 2·min(a,b)/(a+b)). All give the same values.
func (a *ADSet) Check(q []uint64) Domain {
	k := max(a.MinNeighbours, 1)
	buf := make([]float64, 2*k)
	top := buf[:k:k] // descending; -1 marks an empty slot
	ids := buf[k:]   // the reference index of each slot of top
	for i := range top {
		top[i] = -1
	}
	tl := topList{top, ids}
	nq := popcount(q)
	if nq > 0 && a.sliced != nil && len(q) == a.Words {
		a.searchSliced(q, nq, tl)
	} else if a.Words == 16 && len(q) == 16 && nq > 0 && a.rest8 != nil {
		a.search16((*[16]uint64)(q), nq, tl)
	} else if a.Words == 16 && len(q) == 16 {
		a.scan16((*[16]uint64)(q), nq, tl)
	} else {
		w := a.Words
		for i, p := range a.Pop {
			and := 0
			for j, x := range a.FP[i*w : (i+1)*w] {
				and += bits.OnesCount64(x & q[j])
			}
			tl.insert(and, nq+int(p), i)
		}
	}
	dom := Domain{Nearest: make([]float64, 0, k), Refs: make([]int, 0, k)}
	for j, s := range top {
		if s >= 0 {
			dom.Nearest = append(dom.Nearest, round4(s))
			dom.Refs = append(dom.Refs, int(ids[j]))
		}
	}
	dom.InDomain = len(dom.Nearest) >= a.MinNeighbours && top[a.MinNeighbours-1] > a.Threshold
	return dom
}

// topList is the descending list of the best similarities found so far
// (sim, -1 in an empty slot) and the reference index of each (ref, as float64
// so that both share one allocation).
type topList struct {
	sim, ref []float64
}

// insert puts the Dice similarity 2·and/d of reference i into the descending
// top list if it beats the last.
func (t topList) insert(and, d, i int) {
	if d == 0 {
		return
	}
	top := t.sim
	k := len(top)
	if s := 2 * float64(and) / float64(d); s > top[k-1] {
		j := k - 1
		for j > 0 && top[j-1] < s {
			top[j] = top[j-1]
			t.ref[j] = t.ref[j-1]
			j--
		}
		top[j] = s
		t.ref[j] = float64(i)
	}
}

// scan16 is the 1024-bit scan with the query held in locals.
func (a *ADSet) scan16(q *[16]uint64, nq int, tl topList) {
	top := tl.sim
	q0, q1, q2, q3, q4, q5, q6, q7 := q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]
	q8, q9, q10, q11, q12, q13, q14, q15 := q[8], q[9], q[10], q[11], q[12], q[13], q[14], q[15]
	k := len(top)
	fp := a.FP
	for i, p := range a.Pop {
		d := float64(nq + int(p))
		// Prune on bit counts: 2·min(nq,p)/(nq+p) ≤ top[k-1] cannot improve.
		if float64(2*min(nq, int(p))) <= top[k-1]*d {
			continue
		}
		r := fp[i*16 : i*16+16 : i*16+16]
		_ = r[15]
		and := bits.OnesCount64(r[0]&q0) + bits.OnesCount64(r[1]&q1) + bits.OnesCount64(r[2]&q2) +
			bits.OnesCount64(r[3]&q3) + bits.OnesCount64(r[4]&q4) + bits.OnesCount64(r[5]&q5) +
			bits.OnesCount64(r[6]&q6) + bits.OnesCount64(r[7]&q7) + bits.OnesCount64(r[8]&q8) +
			bits.OnesCount64(r[9]&q9) + bits.OnesCount64(r[10]&q10) + bits.OnesCount64(r[11]&q11) +
			bits.OnesCount64(r[12]&q12) + bits.OnesCount64(r[13]&q13) + bits.OnesCount64(r[14]&q14) +
			bits.OnesCount64(r[15]&q15)
		if float64(2*and) > top[k-1]*d {
			tl.insert(and, nq+int(p), i)
		}
	}
}

func popcount(w []uint64) int {
	c := 0
	for _, x := range w {
		c += bits.OnesCount64(x)
	}
	return c
}

func round4(x float64) float64 {
	return float64(int64(x*10000+0.5)) / 10000
}

// search16 finds the same neighbours as scan16 with less work. References
// are visited by bit count outward from the query's, the count with the
// higher Dice bound 2·min(nq,p)/(nq+p) first, so that the top list fills with
// close neighbours early; a direction stops once its bound cannot beat the
// k-th best (the bound only falls further out). Within a reference, the
// AND-count of the first 8 words plus the smaller of the query's and the
// reference's bit counts in words 8-15 bounds the full AND-count, and the
// reference is dropped when that bound cannot beat the k-th best. Every skip
// is a bound ≤ the k-th best, which insert would reject anyway, so the top
// list ends with exactly the values of a full scan. nq must be > 0.
//
// (Measured in wazero: the query read through the array pointer beats holding
// it in 16 locals, which the Go wasm backend spills, and one early exit beats
// two.)
func (a *ADSet) search16(q *[16]uint64, nq int, tl topList) {
	top := tl.sim
	qr8 := popcount(q[8:16])
	k := len(top)
	fp, pop, rest8 := a.FP, a.Pop, a.rest8
	n := len(pop)
	// up walks counts ≥ nq upwards, down counts < nq downwards
	up := sort.Search(n, func(i int) bool { return int(pop[i]) >= nq })
	down := up - 1
	for {
		// Dice bound 2·min(nq,p)/(nq+p) of the next group on each side, as nu/du and nd/dd
		var nu, du, nd, dd int
		if up < n {
			p := int(pop[up])
			nu, du = 2*min(nq, p), nq+p
			if float64(nu) <= top[k-1]*float64(du) {
				up = n
			}
		}
		if down >= 0 {
			p := int(pop[down])
			nd, dd = 2*min(nq, p), nq+p
			if float64(nd) <= top[k-1]*float64(dd) {
				down = -1
			}
		}
		var lo, hi int // the group to scan: pop[lo:hi] all equal
		switch {
		case up < n && (down < 0 || nu*dd >= nd*du):
			lo, hi = up, up+1
			for hi < n && pop[hi] == pop[lo] {
				hi++
			}
			up = hi
		case down >= 0:
			lo, hi = down, down+1
			for lo > 0 && pop[lo-1] == pop[hi-1] {
				lo--
			}
			down = lo - 1
		default:
			return
		}
		d := nq + int(pop[lo])
		flim := top[k-1] * float64(d) // 2·and must exceed top·d
		for i := lo; i < hi; i++ {
			r := (*[16]uint64)(fp[i*16 : i*16+16])
			and := bits.OnesCount64(r[0]&q[0]) + bits.OnesCount64(r[1]&q[1]) + bits.OnesCount64(r[2]&q[2]) +
				bits.OnesCount64(r[3]&q[3]) + bits.OnesCount64(r[4]&q[4]) + bits.OnesCount64(r[5]&q[5]) +
				bits.OnesCount64(r[6]&q[6]) + bits.OnesCount64(r[7]&q[7])
			if float64(2*(and+min(qr8, int(rest8[i])))) <= flim {
				continue
			}
			and += bits.OnesCount64(r[8]&q[8]) + bits.OnesCount64(r[9]&q[9]) + bits.OnesCount64(r[10]&q[10]) +
				bits.OnesCount64(r[11]&q[11]) + bits.OnesCount64(r[12]&q[12]) + bits.OnesCount64(r[13]&q[13]) +
				bits.OnesCount64(r[14]&q[14]) + bits.OnesCount64(r[15]&q[15])
			if float64(2*and) > flim {
				tl.insert(and, d, i)
				flim = top[k-1] * float64(d)
			}
		}
	}
}
