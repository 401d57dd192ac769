package ml

import (
	"fmt"
	"math/bits"
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
	idx := make([]int, len(fps))
	pops := make([]uint16, len(fps))
	for i, fp := range fps {
		idx[i] = i
		pops[i] = uint16(popcount(fp))
	}
	sort.SliceStable(idx, func(x, y int) bool { return pops[idx[x]] < pops[idx[y]] })
	a.FP = make([]uint64, 0, len(fps)*a.Words)
	a.Pop = make([]uint16, len(fps))
	for k, i := range idx {
		a.FP = append(a.FP, fps[i]...)
		a.Pop[k] = pops[i]
	}
	return a
}

// Len returns the number of reference molecules.
func (a *ADSet) Len() int { return len(a.Pop) }

// Domain is the applicability-domain verdict for one query.
type Domain struct {
	// InDomain is true when at least MinNeighbours references have Dice > Threshold.
	InDomain bool `json:"in_domain"`
	// Nearest are the Dice similarities of the MinNeighbours nearest references, descending.
	Nearest []float64 `json:"nearest_similarities"`
}

// Check finds the nearest references of the query fingerprint q: a linear
// scan of AND-popcounts, skipping references whose bit count alone cannot beat
// the current k-th best (Dice ≤ 2·min(a,b)/(a+b)).
func (a *ADSet) Check(q []uint64) Domain {
	k := max(a.MinNeighbours, 1)
	top := make([]float64, k) // descending; -1 marks an empty slot
	for i := range top {
		top[i] = -1
	}
	nq := popcount(q)
	if a.Words == 16 && len(q) == 16 {
		a.scan16((*[16]uint64)(q), nq, top)
	} else {
		w := a.Words
		for i, p := range a.Pop {
			and := 0
			for j, x := range a.FP[i*w : (i+1)*w] {
				and += bits.OnesCount64(x & q[j])
			}
			insert(top, and, nq+int(p))
		}
	}
	dom := Domain{Nearest: make([]float64, 0, k)}
	for _, s := range top {
		if s >= 0 {
			dom.Nearest = append(dom.Nearest, round4(s))
		}
	}
	dom.InDomain = len(dom.Nearest) >= a.MinNeighbours && top[a.MinNeighbours-1] > a.Threshold
	return dom
}

// insert puts the Dice similarity 2·and/d into the descending top list if it beats the last.
func insert(top []float64, and, d int) {
	if d == 0 {
		return
	}
	k := len(top)
	if s := 2 * float64(and) / float64(d); s > top[k-1] {
		j := k - 1
		for j > 0 && top[j-1] < s {
			top[j] = top[j-1]
			j--
		}
		top[j] = s
	}
}

// scan16 is the 1024-bit scan with the query held in locals.
func (a *ADSet) scan16(q *[16]uint64, nq int, top []float64) {
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
			insert(top, and, nq+int(p))
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
