package ml

import (
	"fmt"
	"hash/fnv"
	"sort"

	"toxgate/sdk/chem"
)

// ScaffoldKey returns an identity key of the Bemis–Murcko scaffold of m: ring
// systems plus the linkers between them, with atoms double-bonded to them
// kept, side chains removed. Acyclic molecules have the empty key. The key is
// a Weisfeiler–Lehman hash of the scaffold graph (element, aromaticity, bond
// orders), so equal scaffolds get equal keys whatever the atom order.
func ScaffoldKey(m *chem.Mol) string {
	n := m.NumAtoms()
	if m.NumRings() == 0 || n == 0 {
		return ""
	}
	keep := make([]bool, n)
	deg := make([]int, n)
	for i := 0; i < n; i++ {
		keep[i] = true
		deg[i] = m.Degree(i)
	}
	// Repeatedly strip terminal atoms that are not in a ring, except an atom
	// double-bonded to a ring or linker atom (exocyclic =O, =N).
	for changed := true; changed; {
		changed = false
		for i := 0; i < n; i++ {
			if !keep[i] || m.IsAtomInRing(i) || deg[i] > 1 {
				continue
			}
			if deg[i] == 1 && exoDouble(m, i, keep, deg) {
				continue
			}
			keep[i] = false
			changed = true
			for _, j := range m.Neighbors(i) {
				if keep[j] {
					deg[j]--
				}
			}
		}
	}
	return wlHash(m, keep)
}

// exoDouble reports whether terminal atom i hangs by a double bond on an atom
// that itself stays in the scaffold (a ring atom or an atom with degree ≥ 2).
func exoDouble(m *chem.Mol, i int, keep []bool, deg []int) bool {
	nb, bs := m.Neighbors(i), m.BondsOf(i)
	for k, j := range nb {
		if keep[j] && m.Bond(int(bs[k])).Order == chem.BondDouble {
			return m.IsAtomInRing(int(j)) || deg[j] >= 2
		}
	}
	return false
}

// wlHash hashes the subgraph of kept atoms with Weisfeiler–Lehman refinement.
func wlHash(m *chem.Mol, keep []bool) string {
	n := m.NumAtoms()
	lab := make([]uint64, n)
	count := 0
	for i := 0; i < n; i++ {
		if !keep[i] {
			continue
		}
		count++
		a := m.Atom(i)
		ar := uint64(0)
		if a.Aromatic {
			ar = 1
		}
		lab[i] = uint64(a.AtomicNum)<<8 | ar<<4 | boolBit(m.IsAtomInRing(i))
	}
	next := make([]uint64, n)
	var nbr []uint64
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		for k := 0; k < 8; k++ {
			b[k] = byte(v >> (8 * k))
		}
		h.Write(b[:])
	}
	rounds := min(count, 8)
	for r := 0; r < rounds; r++ {
		for i := 0; i < n; i++ {
			if !keep[i] {
				continue
			}
			nbr = nbr[:0]
			bs := m.BondsOf(i)
			for k, j := range m.Neighbors(i) {
				if keep[j] {
					nbr = append(nbr, lab[j]*31+uint64(m.Bond(int(bs[k])).Order))
				}
			}
			sort.Slice(nbr, func(x, y int) bool { return nbr[x] < nbr[y] })
			h.Reset()
			put(lab[i])
			for _, v := range nbr {
				put(v)
			}
			next[i] = h.Sum64()
		}
		copy(lab, next)
	}
	all := make([]uint64, 0, count)
	for i := 0; i < n; i++ {
		if keep[i] {
			all = append(all, lab[i])
		}
	}
	sort.Slice(all, func(x, y int) bool { return all[x] < all[y] })
	h.Reset()
	for _, v := range all {
		put(v)
	}
	return fmt.Sprintf("%d/%016x", count, h.Sum64())
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
