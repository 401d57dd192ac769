package ml

import (
	"math/bits"
	"slices"
	"sort"
	"sync"
)

// The sliced search counts the common bits of the query with every reference
// at once, 64 references per machine word: the reference set is transposed
// (for each block of 64 references and each fingerprint bit, one word telling
// which of them have the bit), and for each bit of the query its word is added
// into a bit-sliced counter (counter bit s of the 64 references in one word
// per s). That costs one word per query bit per block of 64 references,
// instead of every fingerprint word of every reference. The counts are then
// read out in descending ranges: a reference with AND-count a has Dice
// 2a/(nq+p) ≤ 2a/(nq+a) (its bit count p ≥ a), so once the k-th best beats
// that bound for every count below the range, the rest cannot enter the top
// list. The top list receives exactly the values a full scan computes
// (insert, 2·and/d in float64), for every reference that could change it, so
// it ends with the same values.

// slicedIndex is the transposed set: cols[w*(nbits+1)+b] holds bit j when
// reference 64·w+j has bit b; cols[w*(nbits+1)+nbits] is zero (padding).
type slicedIndex struct {
	nbits, blocks int
	cols          []uint64
	last          uint64   // valid references in the last block
	pmin, pmax    []uint16 // smallest and largest bit count in each block
}

// buildSliced transposes the set (called by prepare).
func (a *ADSet) buildSliced() {
	a.sliced = nil
	n := len(a.Pop)
	if a.Words == 0 || n == 0 || len(a.FP) != a.Words*n {
		return
	}
	nbits := a.Words * 64
	blocks := (n + 63) / 64
	x := &slicedIndex{nbits: nbits, blocks: blocks, cols: make([]uint64, blocks*(nbits+1)), last: ^uint64(0)}
	if r := n % 64; r != 0 {
		x.last = 1<<r - 1
	}
	x.pmin, x.pmax = make([]uint16, blocks), make([]uint16, blocks)
	for w := range x.pmin {
		x.pmin[w] = slices.Min(a.Pop[w*64 : min(w*64+64, n)])
		x.pmax[w] = slices.Max(a.Pop[w*64 : min(w*64+64, n)])
	}
	for i := 0; i < n; i++ {
		col := x.cols[(i/64)*(nbits+1):]
		bit := uint64(1) << (i % 64)
		for wi, v := range a.FP[i*a.Words : (i+1)*a.Words] {
			for v != 0 {
				col[wi*64+bits.TrailingZeros64(v)] |= bit
				v &= v - 1
			}
		}
	}
	a.sliced = x
}

// slicedScratch is the per-query memory of searchSliced.
type slicedScratch struct {
	qbits []uint16
	cnt   []uint64
}

var slicedPool = sync.Pool{New: func() any { return new(slicedScratch) }}

// searchSliced fills top as a full scan would, for a query with nq > 0 bits.
func (a *ADSet) searchSliced(q []uint64, nq int, tl topList) {
	top := tl.sim
	x := a.sliced
	sc := slicedPool.Get().(*slicedScratch)
	defer slicedPool.Put(sc)
	qb := sc.qbits[:0]
	for wi, v := range q {
		for v != 0 {
			qb = append(qb, uint16(wi*64+bits.TrailingZeros64(v)))
			v &= v - 1
		}
	}
	sc.qbits = qb
	// Pad the query to whole groups of 16 with the always-zero column.
	for len(qb)%16 != 0 {
		qb = append(qb, uint16(x.nbits))
	}
	S := max(bits.Len(uint(nq)), 4) // counts ≤ nq < 2^S
	if cap(sc.cnt) < S {
		sc.cnt = make([]uint64, S)
	}
	c := sc.cnt[:S]
	// Visit the blocks outward from the one whose bit counts are nearest the
	// query's (with the set sorted by bit count, the likely neighbours), read
	// whole while the top list is not full. A block whose bit counts cannot
	// give a Dice above the k-th best is skipped; otherwise its counts are
	// computed, and as every bit count in it is ≥ pmin, a reference with
	// count a has Dice ≤ 2a/(nq+max(a,pmin)), which grows with a: the
	// block's candidates are the counts ≥ the smallest a whose bound beats
	// the k-th best.
	k := len(top)
	seed := min(sort.Search(len(a.Pop), func(i int) bool { return int(a.Pop[i]) >= nq })/64, x.blocks-1)
	for i := 0; i < 2*x.blocks; i++ {
		w := seed + (i+1)/2
		if i%2 == 0 {
			w = seed - i/2
		}
		if w < 0 || w >= x.blocks {
			continue
		}
		kth := top[k-1]
		if kth >= 0 {
			// skip the block when no bit count in it allows Dice above the
			// k-th best: 2·min(nq,p)/(nq+p) peaks at p = nq
			pmin, pmax := int(x.pmin[w]), int(x.pmax[w])
			var bound float64
			switch {
			case pmax <= nq:
				bound = 2 * float64(pmax) / float64(nq+pmax)
			case pmin >= nq:
				bound = 2 * float64(nq) / float64(nq+pmin)
			default:
				bound = 1
			}
			if bound <= kth {
				continue
			}
		}
		x.count(w, qb, c)
		if kth < 0 {
			a.insertMask(w, c, ^uint64(0), nq, tl)
			continue
		}
		pmin := int(x.pmin[w])
		t := min(max(int(kth*float64(nq+pmin)/2), 0), nq+1)
		for t > 0 && 2*float64(t-1)/float64(nq+max(t-1, pmin)) > kth {
			t--
		}
		for t <= nq && 2*float64(t)/float64(nq+max(t, pmin)) <= kth {
			t++
		}
		if m := geMask(c, t); m != 0 {
			a.insertMask(w, c, m, nq, tl)
		}
	}
}

// insertMask inserts the references of block w selected by m, with
// bit-sliced counts c.
func (a *ADSet) insertMask(w int, c []uint64, m uint64, nq int, tl topList) {
	if w == a.sliced.blocks-1 {
		m &= a.sliced.last
	}
	pop := a.Pop[w*64:]
	for m != 0 {
		j := bits.TrailingZeros64(m)
		m &= m - 1
		and := 0
		for s, cs := range c {
			and |= int(cs>>j&1) << s
		}
		tl.insert(and, nq+int(pop[j]), w*64+j)
	}
}

// count computes the bit-sliced AND-counts of block w with the query bits
// qb (padded to groups of 16 with the zero column) into c: 16 query bits at
// a time through a carry-save adder tree (Harley–Seal), where ones, twos,
// fours and eights are the low four counter bits and the sixteens ripple
// into the higher ones.
func (x *slicedIndex) count(w int, qb []uint16, c []uint64) {
	stride := x.nbits + 1
	col := x.cols[w*stride : (w+1)*stride]
	for s := 4; s < len(c); s++ { // not clear(c): a call in wasm; c[:4] are set below
		c[s] = 0
	}
	var ones, twos, fours, eights uint64
	for g := 0; g+16 <= len(qb); g += 16 {
		in := qb[g : g+16 : g+16]
		var twosA, twosB, foursA, foursB, eightsA, eightsB, sixteens uint64
		twosA, ones = csa(ones, col[in[0]], col[in[1]])
		twosB, ones = csa(ones, col[in[2]], col[in[3]])
		foursA, twos = csa(twos, twosA, twosB)
		twosA, ones = csa(ones, col[in[4]], col[in[5]])
		twosB, ones = csa(ones, col[in[6]], col[in[7]])
		foursB, twos = csa(twos, twosA, twosB)
		eightsA, fours = csa(fours, foursA, foursB)
		twosA, ones = csa(ones, col[in[8]], col[in[9]])
		twosB, ones = csa(ones, col[in[10]], col[in[11]])
		foursA, twos = csa(twos, twosA, twosB)
		twosA, ones = csa(ones, col[in[12]], col[in[13]])
		twosB, ones = csa(ones, col[in[14]], col[in[15]])
		foursB, twos = csa(twos, twosA, twosB)
		eightsB, fours = csa(fours, foursA, foursB)
		sixteens, eights = csa(eights, eightsA, eightsB)
		for s := 4; sixteens != 0 && s < len(c); s++ {
			t := c[s] & sixteens
			c[s] ^= sixteens
			sixteens = t
		}
	}
	c[0], c[1], c[2], c[3] = ones, twos, fours, eights
}

// geMask returns the references of a block whose bit-sliced count c is ≥ t.
func geMask(c []uint64, t int) uint64 {
	if t <= 0 {
		return ^uint64(0)
	}
	if t >= 1<<len(c) {
		return 0
	}
	var gt uint64
	eq := ^uint64(0)
	for s := len(c) - 1; s >= 0; s-- {
		// without a branch (taken branches are costly in Go's wasm): where
		// bit s of t is 1 the count must have it too (eq &= c[s]); where it
		// is 0, a count with it is greater (gt |= eq&c[s], eq &^= c[s])
		tb := -(uint64(t>>s) & 1)
		gt |= eq & c[s] &^ tb
		eq &^= c[s] ^ tb
	}
	return gt | eq
}

// csa is a carry-save adder: the bitwise sum of a, b and c as carry and sum bits.
func csa(a, b, c uint64) (carry, sum uint64) {
	u := a ^ b
	return (a & b) | (u & c), u ^ c
}
