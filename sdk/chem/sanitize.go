package chem

// sanitize mirrors RDKit's SanitizeMol for SMILES input: functional-group
// clean-up, ring perception, valence and implicit hydrogens, kekulisation,
// radicals and aromaticity perception.
func (m *Mol) sanitize() error {
	m.cleanUpNitro()
	if err := m.perceiveRings(); err != nil {
		return err
	}
	// aromatic flags on non-ring atoms are an error; aromatic non-ring bonds
	// (e.g. between two rings written c1ccccc1c1ccccc1) become single.
	for i := range m.atoms {
		a := &m.atoms[i]
		if a.arom && m.atomRingCt[i] == 0 && !m.hasRingBond(i) {
			return perr(int(a.pos), "non-ring atom marked aromatic")
		}
	}
	for i := range m.bonds {
		b := &m.bonds[i]
		if b.order == BondAromatic && !b.inRing {
			b.order, b.arom = BondSingle, false
		}
	}
	if err := m.assignHydrogens(); err != nil {
		return err
	}
	if err := m.kekulize(); err != nil {
		return err
	}
	for i := range m.atoms {
		v := m.explicitValence(i)
		if v > 255 {
			v = 255
		}
		m.atoms[i].expVal = uint8(v)
	}
	m.assignRadicals()
	m.setAromaticity()
	return nil
}

// cleanUpNitro converts neutral pentavalent nitrogen with a double bond to
// oxygen into the charge-separated form (C-N(=O)=O -> C-[N+](=O)[O-]), as
// RDKit's MolOps::cleanUp does.
func (m *Mol) cleanUpNitro() {
	for i := range m.atoms {
		a := &m.atoms[i]
		if a.z != 7 || a.charge != 0 || a.arom || m.Degree(i) != 3 {
			continue
		}
		v2 := 0
		dbO := -1
		for k, bi := range m.BondsOf(i) {
			b := &m.bonds[bi]
			v2 += b.valence2()
			j := m.Neighbors(i)[k]
			if b.order == BondDouble && m.atoms[j].z == 8 && m.atoms[j].charge == 0 && dbO < 0 {
				dbO = int(bi)
			}
		}
		if v2 != 10 || dbO < 0 {
			continue
		}
		b := &m.bonds[dbO]
		b.order = BondSingle
		a.charge = 1
		m.atoms[b.Other(i)].charge = -1
	}
}

// Other on the internal bond type.
func (b *bond) Other(i int) int {
	if int(b.a) == i {
		return int(b.b)
	}
	return int(b.a)
}

// chargeAdjust returns RDKit's valence offset for a formal charge: early
// elements lose valence with positive charge, carbon loses valence with
// either sign.
func chargeAdjust(z, charge int) int {
	chg := charge
	if elements[z].early {
		chg = -chg
	}
	if z == 6 && chg > 0 {
		chg = -chg
	}
	return chg
}

// assignHydrogens computes explicit valences with aromatic bonds counted as
// 1.5 and derives implicit hydrogen counts exactly as RDKit's
// calcExplicitValence/calcImplicitValence do; impossible valences are errors.
func (m *Mol) assignHydrogens() error {
	for i := range m.atoms {
		a := &m.atoms[i]
		z := int(a.z)
		if z == 0 {
			continue
		}
		v2 := 0
		for _, bi := range m.BondsOf(i) {
			v2 += m.bonds[bi].valence2()
		}
		accum := float64(v2)/2 + float64(a.explicitH)
		dv := defaultValence(z)
		chr := chargeAdjust(z, int(a.charge))
		vals := elements[z].valences
		if dv >= 0 && accum > float64(dv+chr) && a.arom {
			pval := dv + chr
			for _, v := range vals {
				if v < 0 {
					break
				}
				if float64(v+chr) > accum {
					break
				}
				pval = v + chr
			}
			if accum-float64(pval) <= 1.5 {
				accum = float64(pval)
			}
		}
		ev := int(accum + 0.1 + 0.5) // round(accum+0.1)
		maxV := vals[len(vals)-1]
		eff := ev + int(a.charge)
		if elements[z].nOuter >= 4 {
			eff = ev - int(a.charge)
		}
		if maxV > 0 && eff > maxV {
			return perr(int(a.pos), "explicit valence %d of atom %d (%s) is greater than permitted", ev, i, elements[z].symbol)
		}
		if a.noImplicit || dv < 0 {
			continue
		}
		// implicit hydrogens
		h := -1
		if a.arom {
			if ev <= dv+chr {
				h = dv + chr - ev
			} else {
				ok := false
				for _, v := range vals {
					if v < 0 {
						break
					}
					if ev == v+chr {
						ok = true
						break
					}
				}
				if !ok {
					return perr(int(a.pos), "explicit valence %d of aromatic atom %d (%s) is not an allowed valence", ev, i, elements[z].symbol)
				}
				h = 0
			}
		} else {
			for _, v := range vals {
				if v < 0 {
					break
				}
				if ev <= v+chr {
					h = v + chr - ev
					break
				}
			}
			if h < 0 {
				return perr(int(a.pos), "explicit valence %d of atom %d (%s) is greater than permitted", ev, i, elements[z].symbol)
			}
		}
		if h > 255 {
			h = 255
		}
		a.implicitH = uint8(h)
	}
	return nil
}

// maxKekuleSteps bounds the backtracking search for a Kekulé structure.
const maxKekuleSteps = 20000

// kekulize replaces aromatic bonds from the input by alternating single and
// double bonds (a perfect matching on the atoms that need a double bond)
// and clears all aromatic flags, like RDKit's MolOps::Kekulize.
func (m *Mol) kekulize() error {
	n := len(m.atoms)
	anyArom := false
	for i := range m.bonds {
		if m.bonds[i].order == BondAromatic {
			anyArom = true
			break
		}
	}
	if !anyArom {
		for i := range m.atoms {
			m.atoms[i].arom = false
		}
		return nil
	}
	as := aromPool.get()
	defer aromPool.put(as)
	as.kcand = growBool(as.kcand, n)
	cand := as.kcand
	for i := 0; i < n; i++ {
		a := &m.atoms[i]
		hasArom := false
		sbo := 0
		for _, bi := range m.BondsOf(i) {
			b := &m.bonds[bi]
			if b.order == BondAromatic {
				hasArom = true
				sbo++
			} else {
				sbo += int(b.order)
			}
		}
		if !hasArom {
			continue
		}
		z := int(a.z)
		if z == 0 {
			// dummy atoms take a double bond if one is needed
			cand[i] = true
			continue
		}
		dv := defaultValence(z)
		if dv < 0 {
			continue
		}
		chr := chargeAdjust(z, int(a.charge))
		dv += chr
		nh := int(a.implicitH) + int(a.explicitH)
		tbo := (func() int {
			v2 := 0
			for _, bi := range m.BondsOf(i) {
				v2 += m.bonds[bi].valence2()
			}
			acc := float64(v2)/2 + float64(a.explicitH)
			if acc > float64(dv) && a.arom {
				pval := dv
				for _, v := range elements[z].valences {
					if v < 0 || float64(v+chr) > acc {
						break
					}
					pval = v + chr
				}
				if acc-float64(pval) <= 1.5 {
					acc = float64(pval)
				}
			}
			return int(acc+0.6) + int(a.implicitH)
		})()
		vals := elements[z].valences
		for vi := 1; tbo > dv && vi < len(vals) && vals[vi] > 0; vi++ {
			dv = vals[vi] + chr
		}
		totalDegree := m.Degree(i) + int(a.implicitH)
		if totalDegree >= dv {
			continue
		}
		if sbo+nh == dv-1 {
			cand[i] = true
		}
	}
	// matching over aromatic bonds between candidates
	as.kmatch = grow32(as.kmatch, n)
	match := as.kmatch // bond index matched to atom, -1 none
	for i := range match {
		match[i] = -1
	}
	atomsToMatch := as.katoms[:0]
	for i := 0; i < n; i++ {
		if cand[i] {
			atomsToMatch = append(atomsToMatch, i)
		}
	}
	as.katoms = atomsToMatch
	steps := 0
	var solve func() bool
	solve = func() bool {
		steps++
		if steps > maxKekuleSteps {
			return false
		}
		// pick the unmatched candidate with the fewest options
		best, bestOpts := -1, 1<<30
		for _, i := range atomsToMatch {
			if match[i] >= 0 {
				continue
			}
			opts := 0
			for k, bi := range m.BondsOf(i) {
				j := m.Neighbors(i)[k]
				if m.bonds[bi].order == BondAromatic && cand[j] && match[j] < 0 {
					opts++
				}
			}
			if opts < bestOpts {
				best, bestOpts = i, opts
				if opts <= 1 {
					break
				}
			}
		}
		if best < 0 {
			return true
		}
		if bestOpts == 0 {
			return false
		}
		for k, bi := range m.BondsOf(best) {
			j := m.Neighbors(best)[k]
			if m.bonds[bi].order != BondAromatic || !cand[j] || match[j] >= 0 {
				continue
			}
			match[best], match[j] = bi, bi
			if solve() {
				return true
			}
			match[best], match[j] = -1, -1
		}
		return false
	}
	if !solve() {
		// report the first candidate that could not be matched
		pos := -1
		for _, i := range atomsToMatch {
			if match[i] < 0 {
				pos = int(m.atoms[i].pos)
				break
			}
		}
		if pos < 0 && len(atomsToMatch) > 0 {
			pos = int(m.atoms[atomsToMatch[0]].pos)
		}
		if steps > maxKekuleSteps {
			return perr(pos, "aromatic system too complex to kekulize")
		}
		return perr(pos, "can't kekulize aromatic system (check aromatic atoms and [nH])")
	}
	for bi := range m.bonds {
		b := &m.bonds[bi]
		if b.order == BondAromatic {
			if match[b.a] == int32(bi) {
				b.order = BondDouble
			} else {
				b.order = BondSingle
			}
		}
		b.arom = false
	}
	for i := range m.atoms {
		m.atoms[i].arom = false
	}
	return nil
}

// assignRadicals gives bracket atoms below their valence unpaired electrons
// the way RDKit's assignRadicals does.
func (m *Mol) assignRadicals() {
	for i := range m.atoms {
		a := &m.atoms[i]
		z := int(a.z)
		if !a.noImplicit || z == 0 || elements[z].valences[0] < 0 {
			continue
		}
		tv := m.explicitValence(i)
		chg := int(a.charge)
		nOuter := elements[z].nOuter
		base := 8
		if z <= 2 {
			base = 2
		}
		nr := base - nOuter - tv + chg
		if nr < 0 {
			nr = 0
			vals := elements[z].valences
			if len(vals) > 1 {
				for _, v := range vals {
					if v-tv+chg >= 0 {
						nr = v - tv + chg
						break
					}
				}
			}
		}
		if nr2 := nOuter - tv - chg; nr2 >= 0 && nr2 < nr {
			nr = nr2
		}
		if nr < 0 {
			nr = 0
		}
		a.radicals = uint8(nr)
	}
}

type donorType uint8

const (
	donorVacant donorType = iota
	donorOne
	donorTwo
	donorOneOrTwo
	donorAny
	donorNone
)

func (m *Mol) degreeTotal(i int) int {
	return m.Degree(i) + int(m.atoms[i].implicitH) + int(m.atoms[i].explicitH)
}

func (m *Mol) incidentNonCyclicMultiple(i int) int {
	for k, bi := range m.BondsOf(i) {
		b := &m.bonds[bi]
		if !b.inRing && (b.order == BondDouble || b.order == BondTriple || b.order == BondQuadruple) {
			return int(m.Neighbors(i)[k])
		}
	}
	return -1
}

func (m *Mol) incidentCyclicMultiple(i int) bool {
	for _, bi := range m.BondsOf(i) {
		b := &m.bonds[bi]
		if b.inRing && (b.order == BondDouble || b.order == BondTriple || b.order == BondQuadruple) {
			return true
		}
	}
	return false
}

// aromDonor returns the donor type of atom i, RDKit's classification of the
// electrons it can give to a pi system, and whether it can be part of an
// aromatic ring (RDKit's isAtomCandForArom). One function rather than three
// (the electron count, the type, the candidate test): it runs for every ring
// atom, and calls cost much in a wasm module.
func (m *Mol) aromDonor(i int) (d donorType, cand bool) {
	a := &m.atoms[i]
	z := int(a.z)
	// RDKit's count of the electrons the atom can donate (-1 if it cannot
	// take part)
	nelec := -1
	if dv := defaultValence(z); dv > 1 {
		if degree := m.degreeTotal(i); degree <= 3 {
			nlp := max(elements[z].nOuter-dv-int(a.charge), 0)
			nelec = (dv - degree) + nlp - int(a.radicals)
			if nelec > 1 && m.explicitValence(i)-m.Degree(i) > 1 {
				nelec = 1
			}
		}
	}
	switch {
	case z == 0:
		d = donorAny
	case nelec < 0:
		d = donorNone
	case nelec == 0:
		switch {
		case m.incidentNonCyclicMultiple(i) >= 0:
			d = donorVacant
		case m.incidentCyclicMultiple(i):
			d = donorOne
		default:
			d = donorNone
		}
	case nelec == 1:
		if who := m.incidentNonCyclicMultiple(i); who >= 0 {
			if moreElectronegative(int(m.atoms[who].z), z) {
				d = donorVacant
			} else {
				d = donorOne
			}
		} else if m.explicitValence(i) != m.Degree(i)+int(a.explicitH) {
			d = donorOne
		} else if a.charge == 1 {
			d = donorVacant
		} else {
			d = donorNone
		}
	default:
		if who := m.incidentNonCyclicMultiple(i); who >= 0 && moreElectronegative(int(m.atoms[who].z), z) {
			nelec--
		}
		if nelec%2 == 1 {
			d = donorOne
		} else {
			d = donorTwo
		}
	}
	// the candidate test
	if z > 18 && z != 34 && z != 52 || d == donorNone {
		return d, false
	}
	if dv := defaultValence(z); dv > 0 {
		ez := min(max(z-int(a.charge), 0), maxElementNum)
		if m.explicitValence(i)+int(a.implicitH) > defaultValence(ez) {
			return d, false
		}
	}
	if a.radicals > 0 && z != 6 {
		return d, false
	}
	if m.explicitValence(i)-m.Degree(i) > 1 {
		nMult := 0
		for _, bi := range m.BondsOf(i) {
			o := m.bonds[bi].order
			if o == BondDouble || o == BondTriple {
				nMult++
			}
		}
		if nMult > 1 {
			return d, false
		}
	}
	return d, true
}

// maxAromaticCombos bounds the ring combinations tried per fused system.
const maxAromaticCombos = 20000

// setAromaticity applies RDKit's default aromaticity model to the Kekulé
// structure: candidate rings (all atoms candidates), fused systems of rings
// sharing a bond, and the 4n+2 rule on single rings and on unions of up to
// six fused rings.
func (m *Mol) setAromaticity() {
	n := len(m.atoms)
	if len(m.rings) == 0 {
		return
	}
	as := aromPool.get()
	defer aromPool.put(as)
	as.reset(n, len(m.bonds))
	seen, isCand, edon := as.seen, as.isCand, as.edon
	cRings := as.cRings[:0] // indices into m.rings
	for ri, r := range m.rings {
		all := true
		allDummy := true
		for _, a := range r {
			if m.atoms[a].z != 0 {
				allDummy = false
			}
			if seen[a] {
				if !isCand[a] {
					all = false
				}
				continue
			}
			seen[a] = true
			edon[a], isCand[a] = m.aromDonor(int(a))
			if !isCand[a] {
				all = false
			}
		}
		if all && !allDummy {
			cRings = append(cRings, ri)
		}
	}
	as.cRings = cRings
	if len(cRings) == 0 {
		return
	}
	nc := len(cRings)
	// neighbour map: rings sharing a bond, both at most 24 atoms
	for len(as.neigh) < nc {
		as.neigh = append(as.neigh, nil)
	}
	neigh := as.neigh[:nc]
	for i := range neigh {
		neigh[i] = neigh[i][:0]
	}
	for i := 0; i < nc; i++ {
		if len(m.rings[cRings[i]]) > 24 {
			continue
		}
		for j := i + 1; j < nc; j++ {
			if len(m.rings[cRings[j]]) > 24 {
				continue
			}
			if shareBond(m.ringBonds[cRings[i]], m.ringBonds[cRings[j]]) {
				neigh[i] = append(neigh[i], j)
				neigh[j] = append(neigh[j], i)
			}
		}
	}
	// total atoms in candidate rings (RDKit's stop criterion)
	nAll := 0
	mark := as.mark // all false
	for _, ri := range cRings {
		for _, a := range m.rings[ri] {
			if !mark[a] {
				mark[a] = true
				nAll++
			}
		}
	}
	clear(mark)
	done := as.done[:0]
	for range nc {
		done = append(done, false)
	}
	as.done = done
	for start := 0; start < nc; start++ {
		if done[start] {
			continue
		}
		// pick the fused system by depth-first search in RDKit's order
		fused := as.fused[:0]
		stack := append(as.stack[:0], [2]int{start, 0})
		done[start] = true
		fused = append(fused, start)
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			c := top[0]
			if top[1] >= len(neigh[c]) {
				stack = stack[:len(stack)-1]
				continue
			}
			nb := neigh[c][top[1]]
			top[1]++
			if !done[nb] {
				done[nb] = true
				fused = append(fused, nb)
				stack = append(stack, [2]int{nb, 0})
			}
		}
		as.fused, as.stack = fused, stack
		m.huckelFused(as, cRings, fused, neigh, edon, nAll)
	}
}

// aromScratch is the pooled working memory of setAromaticity.
type aromScratch struct {
	seen, isCand, mark, done []bool
	edon                     []donorType
	cRings, fused, cur, comb []int
	stack                    [][2]int
	neigh                    [][]int
	doneAtoms                []int32 // atoms made aromatic in the current fused system
	doneMark                 []bool
	bondCount                []uint8
	// kekulize
	kcand  []bool
	kmatch []int32
	katoms []int
}

var aromPool scratchPool[aromScratch]

func growBool(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func (as *aromScratch) reset(nAtoms, nBonds int) {
	if cap(as.seen) < nAtoms || cap(as.isCand) < nAtoms || cap(as.mark) < nAtoms || cap(as.doneMark) < nAtoms || cap(as.edon) < nAtoms {
		as.seen, as.isCand, as.mark, as.doneMark = make([]bool, nAtoms), make([]bool, nAtoms), make([]bool, nAtoms), make([]bool, nAtoms)
		as.edon = make([]donorType, nAtoms)
	}
	seen, isCand, mark, doneMark, edon := as.seen[:nAtoms], as.isCand[:nAtoms], as.mark[:nAtoms], as.doneMark[:nAtoms], as.edon[:nAtoms]
	// one loop rather than five clears: each clear is a call in a wasm module
	for i := range seen {
		seen[i], isCand[i], mark[i], doneMark[i], edon[i] = false, false, false, false, 0
	}
	as.seen, as.isCand, as.mark, as.doneMark, as.edon = seen, isCand, mark, doneMark, edon
	as.doneAtoms = as.doneAtoms[:0]
	if cap(as.bondCount) < nBonds {
		as.bondCount = make([]uint8, nBonds)
	}
	bc := as.bondCount[:nBonds]
	for i := 0; i < len(bc); i++ { // not range: the compiler makes that loop a clear
		bc[i] = 0
	}
	as.bondCount = bc
}

func shareBond(a, b []int32) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

func (m *Mol) huckelFused(as *aromScratch, cRings, fused []int, neigh [][]int, edon []donorType, nAtms int) {
	nr := len(fused)
	maxSize := nr
	if maxSize > 6 {
		maxSize = 6
	}
	for _, a := range as.doneAtoms {
		as.doneMark[a] = false
	}
	as.doneAtoms = as.doneAtoms[:0]
	combos := 0
	comb := as.comb[:0]
	for size := 1; size <= maxSize; size++ {
		if len(as.doneAtoms) == nAtms {
			break
		}
		comb = comb[:0]
		for i := 0; i < size; i++ {
			comb = append(comb, i)
		}
		for {
			combos++
			if combos > maxAromaticCombos {
				as.comb = comb
				return
			}
			cur := as.cur[:0]
			for _, c := range comb {
				cur = append(cur, fused[c])
			}
			as.cur = cur
			if size == 1 || ringsConnected(cur, neigh) {
				m.tryHuckel(as, cRings, cur, edon)
			}
			if !nextCombination(comb, nr) {
				break
			}
		}
	}
	as.comb = comb
}

// nextCombination advances comb to the next k-subset of [0,n) in
// lexicographic order; false when exhausted.
func nextCombination(comb []int, n int) bool {
	k := len(comb)
	i := k - 1
	for i >= 0 && comb[i] == n-k+i {
		i--
	}
	if i < 0 {
		return false
	}
	comb[i]++
	for j := i + 1; j < k; j++ {
		comb[j] = comb[j-1] + 1
	}
	return true
}

// ringsConnected reports whether the rings cur (at most 6) are connected
// through neigh.
func ringsConnected(cur []int, neigh [][]int) bool {
	var seen [8]bool
	var stack [8]int
	if len(cur) > len(seen) {
		return ringsConnectedLarge(cur, neigh)
	}
	seen[0] = true
	stack[0] = 0
	sp, nSeen := 1, 1
	for sp > 0 {
		sp--
		c := cur[stack[sp]]
		for _, nb := range neigh[c] {
			for k, x := range cur {
				if x == nb && !seen[k] {
					seen[k] = true
					nSeen++
					stack[sp] = k
					sp++
				}
			}
		}
	}
	return nSeen == len(cur)
}

func ringsConnectedLarge(cur []int, neigh [][]int) bool {
	in := make(map[int]bool, len(cur))
	for _, c := range cur {
		in[c] = true
	}
	seen := map[int]bool{cur[0]: true}
	stack := []int{cur[0]}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, nb := range neigh[c] {
			if in[nb] && !seen[nb] {
				seen[nb] = true
				stack = append(stack, nb)
			}
		}
	}
	return len(seen) == len(cur)
}

func (m *Mol) tryHuckel(as *aromScratch, cRings, cur []int, edon []donorType) {
	mark := as.mark // all false between calls
	lo, hi := 0, 0
	for _, c := range cur {
		for _, a := range m.rings[cRings[c]] {
			if mark[a] {
				continue
			}
			mark[a] = true
			switch edon[a] {
			case donorAny:
				hi += 2
			case donorOneOrTwo:
				lo++
				hi += 2
			case donorOne:
				lo++
				hi++
			case donorTwo:
				lo += 2
				hi += 2
			}
		}
	}
	for _, c := range cur {
		for _, a := range m.rings[cRings[c]] {
			mark[a] = false
		}
	}
	arom := false
	if hi >= 6 {
		for e := lo; e <= hi; e++ {
			if (e-2)%4 == 0 {
				arom = true
				break
			}
		}
	} else if hi == 2 {
		arom = true
	}
	if !arom {
		return
	}
	// bonds in exactly one of the rings become aromatic
	bc := as.bondCount // all zero between calls
	for _, c := range cur {
		ri := cRings[c]
		for _, a := range m.rings[ri] {
			m.atoms[a].arom = true
			if !as.doneMark[a] {
				as.doneMark[a] = true
				as.doneAtoms = append(as.doneAtoms, a)
			}
		}
		for _, b := range m.ringBonds[ri] {
			if bc[b] < 255 {
				bc[b]++
			}
		}
	}
	for _, c := range cur {
		for _, b := range m.ringBonds[cRings[c]] {
			if bc[b] == 1 {
				bd := &m.bonds[b]
				bd.arom = true
				if bd.order == BondSingle || bd.order == BondDouble {
					bd.order = BondAromatic
				}
			}
		}
	}
	for _, c := range cur {
		for _, b := range m.ringBonds[cRings[c]] {
			bc[b] = 0
		}
	}
}
