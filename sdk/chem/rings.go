package chem

import (
	"math/bits"
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
	// m.atomRingCt is zero: buildAdjacency allocated it
	if len(m.bonds) < 3 {
		return nil
	}
	rs := ringPool.get()
	defer ringPool.put(rs)
	m.markRingBonds(rs)
	rs.reset(n, len(m.bonds))
	// ring systems = connected components over ring bonds
	comp := rs.comp
	nComp := int32(0)
	for i := 0; i < n; i++ {
		if comp[i] >= 0 || !m.hasRingBond(i) {
			continue
		}
		// room for every atom and bond: the loop below adds them without a call
		sysBonds := reserve(rs.sysBonds[:0], len(m.bonds))
		sysAtoms := reserve(rs.sysAtoms[:0], n)
		comp[i] = nComp
		sysAtoms = append(sysAtoms, int32(i))
		// sysAtoms is the breadth-first queue
		for qi := 0; qi < len(sysAtoms); qi++ {
			a := sysAtoms[qi]
			bs := m.BondsOf(int(a))
			for k, nb := range m.Neighbors(int(a)) {
				bi := bs[k]
				if !m.bonds[bi].inRing {
					continue
				}
				if a < nb {
					sysBonds = push(sysBonds, bi)
				}
				if comp[nb] < 0 {
					comp[nb] = nComp
					sysAtoms = push(sysAtoms, nb)
				}
			}
		}
		rs.sysAtoms, rs.sysBonds = sysAtoms, sysBonds
		nComp++
		if rings := len(sysBonds) - len(sysAtoms) + 1; rings > maxRingSystemRings {
			return perr(int(m.atoms[i].pos), "ring system with %d rings is too large (limit %d)", rings, maxRingSystemRings)
		}
		m.ringSystem(rs, sysAtoms, sysBonds)
	}
	m.storeRings(rs)
	for _, r := range m.rings {
		for _, a := range r {
			m.atomRingCt[a]++
		}
	}
	return nil
}

type frame struct {
	v, parentBond int32
	k             int32
}

// ringScratch is the working memory of ring perception, pooled: the
// per-molecule results are copied out by storeRings.
type ringScratch struct {
	comp, sysAtoms, sysBonds []int32
	local, low, dist         []int32
	queue                    []int32
	frames                   []frame
	bondMark                 []bool   // all false between uses (orderRingAtoms)
	arena                    []uint64 // candidate cycle bits
	cands                    []cycle
	candHash                 []uint64
	path                     []uint64
	walk                     []walkFrame // walkPaths' stack
	// selectRings
	sorted, sssr, extra, out []cycle
	basis, uniq, red         []uint64
	lead                     []int
	// chosen rings of every system, as bond lists back to back
	ringBonds []int32
	ringEnds  []int32
}

var ringPool scratchPool[ringScratch]

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n, max(n, 2*cap(s)))
	}
	return s[:n]
}

func (rs *ringScratch) reset(nAtoms, nBonds int) {
	rs.comp = grow32(rs.comp, nAtoms)
	rs.low = grow32(rs.low, nAtoms)
	rs.dist = grow32(rs.dist, nAtoms)
	rs.local = grow32(rs.local, nBonds)
	for i := range rs.comp {
		rs.comp[i], rs.dist[i] = -1, -1
	}
	for i := range rs.local {
		rs.local[i] = -1
	}
	rs.ringBonds, rs.ringEnds = rs.ringBonds[:0], rs.ringEnds[:0]
}

// storeRings copies the chosen rings into the molecule: bond and atom lists
// sharing two allocations.
func (m *Mol) storeRings(rs *ringScratch) {
	nr := len(rs.ringEnds)
	if nr == 0 {
		return
	}
	total := len(rs.ringBonds)
	flat := make([]int32, 2*total)
	bondsFlat, atomsFlat := flat[:total:total], flat[total:]
	copy(bondsFlat, rs.ringBonds)
	lists := make([][]int32, 2*nr)
	m.ringBonds, m.rings = lists[:nr:nr], lists[nr:]
	if cap(rs.bondMark) < len(m.bonds) {
		rs.bondMark = make([]bool, len(m.bonds))
	}
	mark := rs.bondMark[:len(m.bonds)]
	start := int32(0)
	for r, end := range rs.ringEnds {
		rb := bondsFlat[start:end:end]
		m.ringBonds[r] = rb
		m.rings[r] = m.orderRingAtoms(rb, atomsFlat[start:start:end], mark)
		start = end
	}
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
func (m *Mol) markRingBonds(rs *ringScratch) {
	n := len(m.atoms)
	// dist serves as disc (reset sets it again)
	disc, low := grow32(rs.dist, n), grow32(rs.low, n)
	rs.dist, rs.low = disc, low
	for i := range disc {
		disc[i] = -1
	}
	// the depth-first stack holds an atom at most once: room for all of
	// them, so that the loop pushes without a call
	stack := reserve(rs.frames[:0], n)
	defer func() { rs.frames = stack[:0] }()
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
					stack = push(stack, frame{w, bi, 0})
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

// addCycle adds a copy of bits to the candidates unless already there.
func (rs *ringScratch) addCycle(bits []uint64) {
	h := hashWords(bits)
	for q, ch := range rs.candHash {
		if ch == h && lessWords(rs.cands[q].bits, bits) == 0 {
			return
		}
	}
	rs.candHash = append(rs.candHash, h)
	start := len(rs.arena)
	rs.arena = append(rs.arena, bits...)
	c := cycle{bits: rs.arena[start:len(rs.arena):len(rs.arena)], order: len(rs.cands)}
	for _, w := range bits {
		c.size += popcount(w)
	}
	rs.cands = append(rs.cands, c)
}

// walkFrame is one step of walkPaths: an atom of the path, the next of its
// neighbours to try, and the local index of the bond that led to it.
type walkFrame struct {
	v, k, l int32
}

// walkPaths enumerates, up to maxPathsPerBond, the shortest paths from dst
// back to src through the layers of bond bi's breadth-first search (rs.dist),
// adding each, closed by the bond, as a candidate cycle (rs.path holds the
// bond's bit on entry). A loop with its own stack rather than recursion: a
// call per step costs much in a wasm module.
func (m *Mol) walkPaths(rs *ringScratch, bi, src, dst int32) {
	nPaths := 0
	// a path visits an atom at most once (its distance falls at each step):
	// room for all of them, so that the loop pushes without a call
	stack := append(reserve(rs.walk[:0], len(m.atoms)+1), walkFrame{v: dst, l: -1})
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		v := f.v
		if v == src {
			rs.addCycle(rs.path)
			nPaths++
			if nPaths >= maxPathsPerBond {
				for _, g := range stack { // leave rs.path as it was
					if g.l >= 0 {
						rs.path[g.l/64] ^= 1 << (g.l % 64)
					}
				}
				stack = stack[:0]
				break
			}
		} else {
			lo, hi := m.start[v]+f.k, m.start[v+1]
			e := lo
			for ; e < hi; e++ {
				w, wb := m.nbr[e], m.nbrB[e]
				if wb != bi && m.bonds[wb].inRing && rs.dist[w] >= 0 && rs.dist[w] == rs.dist[v]-1 {
					break
				}
			}
			if e < hi {
				// go on to the next atom of a path
				f.k = e - m.start[v] + 1
				l := rs.local[m.nbrB[e]]
				rs.path[l/64] ^= 1 << (l % 64)
				stack = push(stack, walkFrame{v: m.nbr[e], l: l})
				continue
			}
		}
		// back to the previous atom
		if l := stack[len(stack)-1].l; l >= 0 {
			rs.path[l/64] ^= 1 << (l % 64)
		}
		stack = stack[:len(stack)-1]
	}
	rs.walk = stack[:0]
}

func (m *Mol) ringSystem(rs *ringScratch, atoms, bonds []int32) {
	nb := len(bonds)
	words := (nb + 63) / 64
	local := rs.local
	for i, b := range bonds {
		local[b] = int32(i)
	}
	defer func() {
		for _, b := range bonds {
			local[b] = -1
		}
	}()
	// cyclomatic number of this system
	want := nb - len(atoms) + 1
	if want <= 0 {
		return
	}
	if want == 1 {
		// an isolated ring: the system is one cycle, the only candidate the
		// search below would find, with its bonds in system order
		rs.ringBonds = append(rs.ringBonds, bonds...)
		rs.ringEnds = append(rs.ringEnds, int32(len(rs.ringBonds)))
		return
	}
	// shortest cycle through each ring bond
	rs.cands, rs.candHash, rs.arena = rs.cands[:0], rs.candHash[:0], rs.arena[:0]
	dist := rs.dist
	// queue holds every atom the search reached (dst included), whose dist
	// is reset before the next search; the walk below reads dist
	queue := rs.queue[:0]
	if cap(rs.path) < words {
		rs.path = make([]uint64, words)
	}
	rs.path = rs.path[:words]
	start, nbr, nbrB, mb := m.start, m.nbr, m.nbrB, m.bonds
	for li, bi := range bonds {
		for _, t := range queue {
			dist[t] = -1
		}
		src, dst := mb[bi].a, mb[bi].b
		dist[src] = 0
		queue = append(reserve(queue[:0], len(m.atoms)), src) // an atom enters once
		found := false
	search:
		for qi := 0; qi < len(queue); qi++ {
			v := queue[qi]
			dv := dist[v] + 1
			for e := start[v]; e < start[v+1]; e++ {
				w, wb := nbr[e], nbrB[e]
				if wb == bi || !mb[wb].inRing || dist[w] >= 0 {
					continue
				}
				dist[w] = dv
				queue = push(queue, w) // room reserved below: no call in the loop
				if w == dst {
					found = true
					break search
				}
			}
		}
		if !found {
			continue
		}
		// enumerate up to maxPathsPerBond shortest dst->src paths through the
		// BFS layers (all of them in ordinary molecules), each closing a ring
		// with the bond itself
		for i := 0; i < len(rs.path); i++ { // not clear: a call in wasm
			rs.path[i] = 0
		}
		rs.path[li/64] |= 1 << (li % 64)
		m.walkPaths(rs, bi, src, dst)
	}
	for _, t := range queue {
		dist[t] = -1
	}
	rs.queue = queue[:0]
	rank, chosen := rs.selectRings(words)
	if rank < want {
		// rare: add Horton candidates (cycles through a root and an edge)
		for _, r := range atoms {
			m.hortonCycles(r, local, words, rs.addCycle)
		}
		rank, chosen = rs.selectRings(words)
	}
	_ = rank
	for _, c := range chosen {
		for li := 0; li < nb; li++ {
			if c.bits[li/64]&(1<<(li%64)) != 0 {
				rs.ringBonds = append(rs.ringBonds, bonds[li])
			}
		}
		rs.ringEnds = append(rs.ringEnds, int32(len(rs.ringBonds)))
	}
}

// selectRings returns the rank of the candidate set and the relevant
// cycles (independent of all strictly smaller candidates), sorted by size;
// the result is valid until the next call.
func (rs *ringScratch) selectRings(words int) (int, []cycle) {
	cands := append(rs.sorted[:0], rs.cands...)
	rs.sorted = cands
	// stable insertion sort by size (then input order, which stability keeps)
	for i := 1; i < len(cands); i++ {
		c := cands[i]
		j := i
		for j > 0 && cands[j-1].size > c.size {
			cands[j] = cands[j-1]
			j--
		}
		cands[j] = c
	}
	basis := rs.basis[:0] // reduced rows with distinct leading bits, words each
	lead := rs.lead[:0]
	if cap(rs.red) < words {
		rs.red = make([]uint64, words)
	}
	r := rs.red[:words]
	sssr, extra := rs.sssr[:0], rs.extra[:0]
	for _, c := range cands {
		copy(r, c.bits)
		for k, l := range lead {
			if r[l/64]&(1<<(l%64)) != 0 {
				row := basis[k*words : (k+1)*words]
				for w := range r {
					r[w] ^= row[w]
				}
			}
		}
		l := lowestBit(r)
		if l < 0 {
			extra = append(extra, c)
			continue
		}
		for q := range lead {
			row := basis[q*words : (q+1)*words]
			if row[l/64]&(1<<(l%64)) != 0 {
				for w := range r {
					row[w] ^= r[w]
				}
			}
		}
		basis = append(basis, r...)
		lead = append(lead, l)
		sssr = append(sssr, c)
	}
	rs.basis, rs.lead, rs.sssr, rs.extra = basis, lead, sssr, extra
	// RDKit's symmetrisation: an extra ring joins if it could replace an SSSR
	// ring of the same size without losing a bond only that ring provides.
	out := append(rs.out[:0], sssr...)
	defer func() { rs.out = out }()
	if len(extra) == 0 {
		return len(lead), out
	}
	uniq := rs.uniq[:0]
	for si, s := range sssr {
		start := len(uniq)
		uniq = append(uniq, s.bits...)
		u := uniq[start:]
		for sj, o := range sssr {
			if sj != si {
				for w := range u {
					u[w] &^= o.bits[w]
				}
			}
		}
	}
	rs.uniq = uniq
	for _, c := range extra {
		for si, s := range sssr {
			if s.size != c.size {
				continue
			}
			ok := true
			for w, u := range uniq[si*words : (si+1)*words] {
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
	return len(lead), out
}

func (m *Mol) hortonCycles(r int32, local []int32, words int, add func([]uint64)) {
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
// The atoms are appended to dst (which has room for len(rb)).
func (m *Mol) orderRingAtoms(rb []int32, dst []int32, mark []bool) []int32 {
	// mark (false for every bond on entry and on return) flags the ring's bonds
	for _, b := range rb {
		mark[b] = true
	}
	start := m.bonds[rb[0]].a
	atoms := append(dst, start)
	prevBond := int32(-1)
	cur := start
	for len(atoms) <= len(rb) {
		next := int32(-1)
		bs := m.BondsOf(int(cur))
		for k, w := range m.Neighbors(int(cur)) {
			b := bs[k]
			if b != prevBond && mark[b] {
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
	for _, b := range rb {
		mark[b] = false
	}
	return atoms
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
