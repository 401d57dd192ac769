package chem

import (
	"math/bits"
	"sort"
)

// maxPathsPerBond bounds the equally short ring paths enumerated per bond.
const maxPathsPerBond = 8

// maxRingSystemRings bounds the number of rings in one fused ring system;
// larger systems are rejected to keep ring perception's cost bounded.
const maxRingSystemRings = 300

// perceiveRings marks ring bonds and atoms and computes the symmetrised
// SSSR: every cycle that is a shortest cycle through some bond and is not
// the GF(2) sum of strictly smaller cycles (the "relevant" cycles among
// those candidates). For ordinary molecules this is the SSSR; for cages
// such as adamantane or cubane it adds the symmetry-equivalent rings RDKit
// adds (4 and 6 rings respectively).
func (m *Mol) perceiveRings() error {
	n := len(m.atoms)
	m.atomRingCt = make([]uint8, n)
	if len(m.bonds) < 3 {
		return nil
	}
	m.markRingBonds()
	// ring systems = connected components over ring bonds
	comp := make([]int32, n)
	for i := range comp {
		comp[i] = -1
	}
	var queue []int32
	nComp := int32(0)
	for i := 0; i < n; i++ {
		if comp[i] >= 0 || !m.hasRingBond(i) {
			continue
		}
		var sysBonds []int32
		var sysAtoms []int32
		comp[i] = nComp
		queue = append(queue[:0], int32(i))
		for len(queue) > 0 {
			a := queue[0]
			queue = queue[1:]
			sysAtoms = append(sysAtoms, a)
			for k, nb := range m.Neighbors(int(a)) {
				bi := m.BondsOf(int(a))[k]
				if !m.bonds[bi].inRing {
					continue
				}
				if a < nb {
					sysBonds = append(sysBonds, bi)
				}
				if comp[nb] < 0 {
					comp[nb] = nComp
					queue = append(queue, nb)
				}
			}
		}
		nComp++
		if rings := len(sysBonds) - len(sysAtoms) + 1; rings > maxRingSystemRings {
			return perr(int(m.atoms[i].pos), "ring system with %d rings is too large (limit %d)", rings, maxRingSystemRings)
		}
		m.ringSystem(sysAtoms, sysBonds)
	}
	for _, r := range m.rings {
		for _, a := range r {
			if m.atomRingCt[a] < 255 {
				m.atomRingCt[a]++
			}
		}
	}
	return nil
}

func (m *Mol) hasRingBond(i int) bool {
	for _, bi := range m.BondsOf(i) {
		if m.bonds[bi].inRing {
			return true
		}
	}
	return false
}

// markRingBonds flags every bond that is not a bridge (iterative DFS with
// low-link values).
func (m *Mol) markRingBonds() {
	n := len(m.atoms)
	dl := make([]int32, 2*n)
	disc, low := dl[:n:n], dl[n:]
	for i := range disc {
		disc[i] = -1
	}
	type frame struct {
		v, parentBond int32
		k             int32
	}
	stack := make([]frame, 0, n)
	t := int32(0)
	for r := 0; r < n; r++ {
		if disc[r] >= 0 {
			continue
		}
		disc[r], low[r] = t, t
		t++
		stack = append(stack[:0], frame{int32(r), -1, 0})
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			v := f.v
			nbrs := m.Neighbors(int(v))
			if int(f.k) < len(nbrs) {
				k := f.k
				f.k++
				w := nbrs[k]
				bi := m.BondsOf(int(v))[k]
				if bi == f.parentBond {
					continue
				}
				if disc[w] < 0 {
					disc[w], low[w] = t, t
					t++
					stack = append(stack, frame{w, bi, 0})
				} else {
					// back edge: always on a cycle
					m.bonds[bi].inRing = true
					if disc[w] < low[v] {
						low[v] = disc[w]
					}
				}
				continue
			}
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				p := stack[len(stack)-1].v
				if low[v] < low[p] {
					low[p] = low[v]
				}
				if low[v] <= disc[p] {
					m.bonds[f.parentBond].inRing = true
				}
			}
		}
	}
}

type cycle struct {
	bits  []uint64 // over the system's local bond indices
	size  int
	order int
}

func (m *Mol) ringSystem(atoms, bonds []int32) {
	nb := len(bonds)
	words := (nb + 63) / 64
	local := make([]int, len(m.bonds))
	for i := range local {
		local[i] = -1
	}
	for i, b := range bonds {
		local[b] = i
	}
	// cyclomatic number of this system
	want := nb - len(atoms) + 1
	if want <= 0 {
		return
	}
	// shortest cycle through each ring bond
	var cands []cycle
	var candHash []uint64
	n := len(m.atoms)
	prevB := make([]int32, n)
	dist := make([]int32, n)
	for i := range dist {
		dist[i] = -1
	}
	var touched []int32
	add := func(bits []uint64) {
		h := hashWords(bits)
		for q, ch := range candHash {
			if ch == h && lessWords(cands[q].bits, bits) == 0 {
				return
			}
		}
		candHash = append(candHash, h)
		c := cycle{bits: bits, order: len(cands)}
		for _, w := range bits {
			c.size += popcount(w)
		}
		cands = append(cands, c)
	}
	queue := make([]int32, 0, len(atoms))
	for li, bi := range bonds {
		b := m.bonds[bi]
		src, dst := b.a, b.b
		for _, t := range touched {
			dist[t] = -1
		}
		touched = touched[:0]
		dist[src] = 0
		touched = append(touched, src)
		queue = append(queue[:0], src)
		found := false
		for qi := 0; qi < len(queue) && !found; qi++ {
			v := queue[qi]
			for k, w := range m.Neighbors(int(v)) {
				wb := m.BondsOf(int(v))[k]
				if wb == bi || !m.bonds[wb].inRing || dist[w] >= 0 {
					continue
				}
				dist[w] = dist[v] + 1
				prevB[w] = wb
				touched = append(touched, w)
				if w == dst {
					found = true
					break
				}
				queue = append(queue, w)
			}
		}
		if !found {
			continue
		}
		// enumerate up to maxPathsPerBond shortest dst->src paths through the
		// BFS layers (all of them in ordinary molecules), each closing a ring
		// with the bond itself
		nPaths := 0
		bits := make([]uint64, words)
		bits[li/64] |= 1 << (li % 64)
		var walk func(v int32)
		walk = func(v int32) {
			if nPaths >= maxPathsPerBond {
				return
			}
			if v == src {
				add(append([]uint64(nil), bits...))
				nPaths++
				return
			}
			for k, w := range m.Neighbors(int(v)) {
				wb := m.BondsOf(int(v))[k]
				if wb == bi || !m.bonds[wb].inRing || dist[w] < 0 || dist[w] != dist[v]-1 {
					continue
				}
				l := local[wb]
				bits[l/64] ^= 1 << (l % 64)
				walk(w)
				bits[l/64] ^= 1 << (l % 64)
			}
		}
		walk(dst)
	}
	rank, chosen := selectRings(cands, words)
	if rank < want {
		// rare: add Horton candidates (cycles through a root and an edge)
		for _, r := range atoms {
			m.hortonCycles(r, local, words, add)
		}
		rank, chosen = selectRings(cands, words)
	}
	_ = rank
	for _, c := range chosen {
		var rb []int32
		for li := 0; li < nb; li++ {
			if c.bits[li/64]&(1<<(li%64)) != 0 {
				rb = append(rb, bonds[li])
			}
		}
		m.ringBonds = append(m.ringBonds, rb)
		m.rings = append(m.rings, m.orderRingAtoms(rb))
	}
}

// selectRings returns the rank of the candidate set and the relevant
// cycles (independent of all strictly smaller candidates), sorted by size.
func selectRings(in []cycle, words int) (int, []cycle) {
	cands := append([]cycle(nil), in...)
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].size != cands[j].size {
			return cands[i].size < cands[j].size
		}
		return cands[i].order < cands[j].order
	})
	var basis [][]uint64 // reduced rows with distinct leading bits
	var lead []int
	reduce := func(v []uint64, upto int) []uint64 {
		r := append([]uint64(nil), v...)
		for k := 0; k < upto; k++ {
			l := lead[k]
			if r[l/64]&(1<<(l%64)) != 0 {
				for w := range r {
					r[w] ^= basis[k][w]
				}
			}
		}
		return r
	}
	var sssr []cycle
	var extra []cycle
	for _, c := range cands {
		r := reduce(c.bits, len(basis))
		l := lowestBit(r)
		if l < 0 {
			extra = append(extra, c)
			continue
		}
		for q := range basis {
			if basis[q][l/64]&(1<<(l%64)) != 0 {
				for w := range r {
					basis[q][w] ^= r[w]
				}
			}
		}
		basis = append(basis, r)
		lead = append(lead, l)
		sssr = append(sssr, c)
	}
	// RDKit's symmetrisation: an extra ring joins if it could replace an SSSR
	// ring of the same size without losing a bond only that ring provides.
	out := append([]cycle(nil), sssr...)
	if len(extra) == 0 {
		return len(basis), out
	}
	uniq := make([][]uint64, len(sssr))
	for si, s := range sssr {
		u := append([]uint64(nil), s.bits...)
		for sj, o := range sssr {
			if sj != si {
				for w := range u {
					u[w] &^= o.bits[w]
				}
			}
		}
		uniq[si] = u
	}
	for _, c := range extra {
		for si, s := range sssr {
			if s.size != c.size {
				continue
			}
			ok := true
			for w, u := range uniq[si] {
				if u&^c.bits[w] != 0 {
					ok = false
					break
				}
			}
			if ok {
				out = append(out, c)
				break
			}
		}
	}
	return len(basis), out
}

func (m *Mol) hortonCycles(r int32, local []int, words int, add func([]uint64)) {
	n := len(m.atoms)
	dist := make([]int32, n)
	prevB := make([]int32, n)
	for i := range dist {
		dist[i] = -1
	}
	dist[r] = 0
	prevB[r] = -1
	queue := []int32{r}
	for qi := 0; qi < len(queue); qi++ {
		v := queue[qi]
		for k, w := range m.Neighbors(int(v)) {
			wb := m.BondsOf(int(v))[k]
			if !m.bonds[wb].inRing || dist[w] >= 0 {
				continue
			}
			dist[w] = dist[v] + 1
			prevB[w] = wb
			queue = append(queue, w)
		}
	}
	pathBits := func(v int32, bits []uint64, atoms map[int32]bool) {
		for v != r {
			atoms[v] = true
			pb := prevB[v]
			l := local[pb]
			bits[l/64] ^= 1 << (l % 64)
			v = m.bonds[pb].a + m.bonds[pb].b - v
		}
	}
	for bi := range m.bonds {
		b := m.bonds[bi]
		if !b.inRing || dist[b.a] < 0 || dist[b.b] < 0 || prevB[b.a] == int32(bi) || prevB[b.b] == int32(bi) {
			continue
		}
		if local[bi] < 0 {
			continue
		}
		bits := make([]uint64, words)
		pa, pb := map[int32]bool{}, map[int32]bool{}
		pathBits(b.a, bits, pa)
		pathBits(b.b, bits, pb)
		disjoint := true
		for v := range pa {
			if pb[v] {
				disjoint = false
				break
			}
		}
		if !disjoint {
			continue
		}
		l := local[bi]
		bits[l/64] ^= 1 << (l % 64)
		add(bits)
	}
}

// orderRingAtoms walks a ring given as bonds and returns its atoms in order.
func (m *Mol) orderRingAtoms(rb []int32) []int32 {
	inRing := func(b int32) bool {
		for _, x := range rb {
			if x == b {
				return true
			}
		}
		return false
	}
	start := m.bonds[rb[0]].a
	atoms := make([]int32, 1, len(rb))
	atoms[0] = start
	prevBond := int32(-1)
	cur := start
	for len(atoms) <= len(rb) {
		next := int32(-1)
		for k, w := range m.Neighbors(int(cur)) {
			b := m.BondsOf(int(cur))[k]
			if b != prevBond && inRing(b) {
				next, prevBond = w, b
				break
			}
		}
		if next < 0 || next == start {
			break
		}
		atoms = append(atoms, next)
		cur = next
	}
	return atoms
}

func isZero(b []uint64) bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

func lowestBit(b []uint64) int {
	for i, w := range b {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

func popcount(w uint64) int { return bits.OnesCount64(w) }
