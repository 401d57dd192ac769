package ml

import (
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

// Check finds the nearest references of the query fingerprint q.
func (a *ADSet) Check(q []uint64) Domain {
	k := max(a.MinNeighbours, 1)
	top := make([]float64, k) // descending; -1 marks an empty slot
	for i := range top {
		top[i] = -1
	}
	nq := popcount(q)
	w := a.Words
	start := sort.Search(len(a.Pop), func(i int) bool { return int(a.Pop[i]) >= nq })
	lo, hi := start-1, start
	for lo >= 0 || hi < len(a.Pop) {
		// Take the side whose Dice upper bound is larger; stop when neither
		// side can beat the k-th best similarity.
		bLo, bHi := -1.0, -1.0
		if lo >= 0 {
			bLo = diceBound(nq, int(a.Pop[lo]))
		}
		if hi < len(a.Pop) {
			bHi = diceBound(nq, int(a.Pop[hi]))
		}
		var i int
		if bHi >= bLo {
			if bHi <= top[k-1] {
				break
			}
			i = hi
			hi++
		} else {
			if bLo <= top[k-1] {
				break
			}
			i = lo
			lo--
		}
		var and int
		if w == 16 {
			and = and16((*[16]uint64)(q), (*[16]uint64)(a.FP[i*16:i*16+16]))
		} else {
			for j, x := range a.FP[i*w : (i+1)*w] {
				and += bits.OnesCount64(x & q[j])
			}
		}
		d := nq + int(a.Pop[i])
		if d == 0 {
			continue
		}
		if s := 2 * float64(and) / float64(d); s > top[k-1] {
			j := k - 1
			for j > 0 && top[j-1] < s {
				top[j] = top[j-1]
				j--
			}
			top[j] = s
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

func and16(q, r *[16]uint64) int {
	return bits.OnesCount64(q[0]&r[0]) + bits.OnesCount64(q[1]&r[1]) + bits.OnesCount64(q[2]&r[2]) +
		bits.OnesCount64(q[3]&r[3]) + bits.OnesCount64(q[4]&r[4]) + bits.OnesCount64(q[5]&r[5]) +
		bits.OnesCount64(q[6]&r[6]) + bits.OnesCount64(q[7]&r[7]) + bits.OnesCount64(q[8]&r[8]) +
		bits.OnesCount64(q[9]&r[9]) + bits.OnesCount64(q[10]&r[10]) + bits.OnesCount64(q[11]&r[11]) +
		bits.OnesCount64(q[12]&r[12]) + bits.OnesCount64(q[13]&r[13]) + bits.OnesCount64(q[14]&r[14]) +
		bits.OnesCount64(q[15]&r[15])
}

func diceBound(a, b int) float64 {
	if a+b == 0 {
		return 0
	}
	return 2 * float64(min(a, b)) / float64(a+b)
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
