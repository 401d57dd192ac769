package chem

import (
	"math"
	"slices"
)

// MorganCountsAndBits returns MorganCounts(m, countRadius, countBits) and
// Morgan(m, bitRadius, nBits), identical to the two calls, from one growth
// of the atom environments up to the larger radius: the identifiers of
// radius r are those of the larger radius up to the end of shell r.
func MorganCountsAndBits(m *Mol, countRadius, countBits, bitRadius, nBits int) (*CountVec, *BitVec) {
	if nBits <= 0 {
		nBits = 2048
	}
	countRadius, bitRadius = max(countRadius, 0), max(bitRadius, 0)
	sc := morganPool.get()
	defer morganPool.put(sc)
	var endsBuf [8]int
	ids, ends := m.morganShells(max(countRadius, bitRadius), sc, endsBuf[:0])
	b := NewBitVec(nBits)
	for _, id := range ids[:ends[bitRadius]] {
		b.Set(int(id % uint32(nBits)))
	}
	return countVec(ids[:ends[countRadius]], countBits, sc), b
}

// morganShells is morganIDs that also returns, for each radius r ≤ radius,
// the number of identifiers up to the end of shell r (ends[0] = the atoms).
func (m *Mol) morganShells(radius int, s *morganScratch, ends []int) ([]uint32, []int) {
	n := len(m.atoms)
	ids := s.ids[:0]
	cur := grow(s.cur, n)
	next := grow(s.next, n)
	m.atomInvariants(cur)
	ids = append(ids, cur...)
	ends = append(ends, len(ids))
	s.cur, s.next = cur, next
	if radius <= 0 || n == 0 {
		for len(ends) <= radius {
			ends = append(ends, len(ids))
		}
		s.ids = ids
		return ids, ends
	}
	// Bond sets are w words per atom. w is 1 for molecules of up to 64 bonds
	// (nearly all), where a set is kept in a register while it grows and
	// compared as one word: memory accesses cost far more in a wasm module
	// than natively (each is bounds-checked), so the one-word case avoids them.
	w := (len(m.bonds) + 63) / 64
	if w == 0 {
		w = 1
	}
	// nbh holds each atom's bond set of the previous round, round the one
	// this round builds from it; they swap after each round. Every atom's
	// entry of round and next is written in every round (dead atoms keep
	// their set and get invariant 0, as RDKit's do), so only nbh and dead
	// start cleared: a clear or a copy of a slice is a call in a wasm module.
	nbh := grow(s.nbh, n*w)
	round := grow(s.round, n*w)
	dead := grow(s.dead, n)
	if w == 1 {
		for i := range n {
			nbh[i], dead[i] = 0, false
		}
	} else {
		clear(nbh)
		clear(dead)
	}
	envs := s.envs[:0]
	nbrs := s.nbrs[:0]
	seenHash, seenWords := s.seenHash[:0], s.seenWords[:0]
	start, nbr, nbrB, bonds := m.start[:n+1], m.nbr, m.nbrB, m.bonds
	// The loops below write these by index within capacity reserved here:
	// an append in a loop is a call there, and wazero keeps no value in a
	// register across a call, even one that never runs, so every value that
	// lives across it goes to the stack on each iteration (sdk/README.md).
	nbrs = grow(nbrs, len(m.nbr))
	envs = reserve(envs, n)
	ids = reserve(ids, n*radius)
	seenHash, seenWords = reserve(seenHash, n*radius), reserve(seenWords, n*radius*w)
	for layer := 0; layer < radius; layer++ {
		envs = envs[:0]
		for i := 0; i < n; i++ {
			lo, hi := start[i], start[i+1]
			if dead[i] || lo == hi {
				dead[i] = true
				next[i] = 0
				if w == 1 {
					round[i] = nbh[i]
				} else {
					rn, on := round[i*w:(i+1)*w], nbh[i*w:(i+1)*w]
					for y := range rn {
						rn[y] = on[y]
					}
				}
				continue
			}
			bs, js := nbrB[lo:hi], nbr[lo:hi]
			// The bond set grows by each neighbour's bond and set; the
			// neighbours, as bond type << 32 | invariant, are sorted and
			// hashed. Up to four (nearly every atom) stay in registers and
			// go through a sorting network: a slice would cost a
			// bounds-checked memory access per step in a wasm module.
			small := len(js) <= 4
			k0, k1, k2, k3 := uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64) // unused ones sort last
			if !small {
				nbrs = nbrs[:len(js)] // written by index: no call in the loop
			}
			put := func(x int, bi int32, j int32) {
				key := uint64(bonds[bi].order)<<32 | uint64(cur[j])
				switch {
				case !small:
					nbrs[x] = morganNbr{int32(key >> 32), uint32(key)}
				case x == 0:
					k0 = key
				case x == 1:
					k1 = key
				case x == 2:
					k2 = key
				default:
					k3 = key
				}
			}
			if w == 1 {
				r := nbh[i]
				for x, bi := range bs {
					j := js[x]
					r |= 1<<(uint(bi)%64) | nbh[j]
					put(x, bi, j)
				}
				round[i] = r
			} else {
				rn, ri := round[i*w:(i+1)*w], nbh[i*w:(i+1)*w]
				for y := range rn {
					rn[y] = ri[y]
				}
				for x, bi := range bs {
					j := js[x]
					rn[bi/64] |= 1 << (uint(bi) % 64)
					on := nbh[int(j)*w : (int(j)+1)*w]
					for y := range rn {
						rn[y] |= on[y]
					}
					put(x, bi, j)
				}
			}
			invar := hashCombine(uint32(layer), cur[i])
			if small {
				k0, k1 = min(k0, k1), max(k0, k1)
				k2, k3 = min(k2, k3), max(k2, k3)
				k0, k2 = min(k0, k2), max(k0, k2)
				k1, k3 = min(k1, k3), max(k1, k3)
				k1, k2 = min(k1, k2), max(k1, k2)
				n := len(js)
				invar = hashCombine(invar, hashCombine(hashCombine(0, uint32(k0>>32)), uint32(k0)))
				if n > 1 {
					invar = hashCombine(invar, hashCombine(hashCombine(0, uint32(k1>>32)), uint32(k1)))
				}
				if n > 2 {
					invar = hashCombine(invar, hashCombine(hashCombine(0, uint32(k2>>32)), uint32(k2)))
				}
				if n > 3 {
					invar = hashCombine(invar, hashCombine(hashCombine(0, uint32(k3>>32)), uint32(k3)))
				}
			} else {
				for a := 1; a < len(nbrs); a++ {
					for b := a; b > 0 && (nbrs[b].bt < nbrs[b-1].bt || (nbrs[b].bt == nbrs[b-1].bt && nbrs[b].inv < nbrs[b-1].inv)); b-- {
						nbrs[b], nbrs[b-1] = nbrs[b-1], nbrs[b]
					}
				}
				for _, p := range nbrs {
					invar = hashCombine(invar, hashCombine(hashCombine(0, uint32(p.bt)), p.inv))
				}
			}
			next[i] = invar
			envs = push(envs, morganEnv{invar: invar, atom: int32(i)})
		}
		s.sortScratch = sortEnvs(envs, round, w, s.sortScratch)
		// the bond sets seen so far, in an open-addressing table of indices
		// into seenHash (+1; 0 is empty) with room for every environment
		if layer == 0 {
			size := 16
			for size < 2*n*radius {
				size *= 2
			}
			s.seenTab = grow(s.seenTab, size)
			clear(s.seenTab)
		}
		tab := s.seenTab
		mask := uint64(len(tab) - 1)
		for _, e := range envs {
			nb := round[int(e.atom)*w : (int(e.atom)+1)*w]
			h := hashWords(nb)
			dup := false
			slot := h & mask
			for ; tab[slot] != 0; slot = (slot + 1) & mask {
				q := int(tab[slot] - 1)
				if seenHash[q] == h && (w == 1 && seenWords[q] == nb[0] || w > 1 && lessWords(seenWords[q*w:(q+1)*w], nb) == 0) {
					dup = true
					break
				}
			}
			if dup {
				dead[e.atom] = true
				continue
			}
			ids = push(ids, e.invar)
			seenHash = push(seenHash, h)
			k := len(seenWords)
			seenWords = seenWords[:k+w]
			for y, v := range nb {
				seenWords[k+y] = v
			}
			tab[slot] = int32(len(seenHash))
		}
		ends = append(ends, len(ids))
		cur, next = next, cur
		nbh, round = round, nbh
	}
	s.nbh, s.round, s.dead, s.envs, s.nbrs = nbh, round, dead, envs, nbrs
	s.seenHash, s.seenWords, s.ids = seenHash, seenWords, ids
	return ids, ends
}

// sortIDs sorts identifiers folded modulo nBits: for nBits ≤ 4096 by two
// passes of a 6-bit radix sort (loops without data-dependent branches, which
// cost much in Go's wasm), else with slices.Sort.
func sortIDs(ids []uint32, nBits int, sc *morganScratch) {
	if nBits <= 0 || nBits > 4096 || len(ids) < 16 {
		slices.Sort(ids)
		return
	}
	sc.radixTmp = grow(sc.radixTmp, len(ids))
	src, dst := ids, sc.radixTmp
	for shift := 0; shift < 12; shift += 6 {
		var count [65]int32
		for _, v := range src {
			count[(v>>shift)&63+1]++
		}
		for d := 1; d < 65; d++ {
			count[d] += count[d-1]
		}
		for _, v := range src {
			d := (v >> shift) & 63
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	// two passes: the result is back in ids
}
