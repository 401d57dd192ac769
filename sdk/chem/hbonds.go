package chem

// numHBD and numHBA count the atoms matched by patHBD and patHBA (RDKit's
// Lipinski donor and acceptor SMARTS) without the SMARTS engine: the same
// atom tests written out. TestHBondsMatchSMARTS compares them with the
// patterns on the reference molecules.

// hbondFeatures returns the features the patterns test, as the SMARTS
// engine computes them: total H count (implicit, bracket and graph H
// neighbours) and total valence, both as bytes, and the charge.
func (m *Mol) hbondFeatures(i int) (h, v uint8, chg int) {
	a := &m.atoms[i]
	return uint8(a.TotalHs() + m.hNeighbors(i)), uint8(int(a.expVal) + int(a.implicitH)), int(a.charge)
}

// numHBD counts [N&!H0&v3,N&!H0&+1&v4,O&H1&+0,S&H1&+0,n&H1&+0].
func (m *Mol) numHBD() int {
	n := 0
	for i := range m.atoms {
		a := &m.atoms[i]
		if a.z != 7 && a.z != 8 && a.z != 16 {
			continue
		}
		h, v, chg := m.hbondFeatures(i)
		switch {
		case a.z == 7 && !a.arom:
			if h != 0 && (v == 3 || (chg == 1 && v == 4)) {
				n++
			}
		case a.z == 7: // aromatic n
			if h == 1 && chg == 0 {
				n++
			}
		case !a.arom: // O, S
			if h == 1 && chg == 0 {
				n++
			}
		}
	}
	return n
}

// numHBA counts
//
//	[$([O,S;H1;v2]-[!$(*=[O,N,P,S])]),$([O,S;H0;v2]),$([O,S;-]),
//	 $([N;v3;!$(N-*=!@[O,N,P,S])]),$([nH0,o,s;+0])]
func (m *Mol) numHBA() int {
	n := 0
	for i := range m.atoms {
		// only N, O and S can match: tested here to spare most atoms a call
		if z := m.atoms[i].z; (z == 7 || z == 8 || z == 16) && m.isHBA(i) {
			n++
		}
	}
	return n
}

func (m *Mol) isHBA(i int) bool {
	a := &m.atoms[i]
	if a.z != 7 && a.z != 8 && a.z != 16 {
		return false
	}
	h, v, chg := m.hbondFeatures(i)
	if a.arom { // [nH0,o,s;+0]
		return chg == 0 && (a.z != 7 || h == 0)
	}
	bs := m.BondsOf(i)
	if a.z == 7 { // [N;v3;!$(N-*=!@[O,N,P,S])]
		if v != 3 {
			return false
		}
		for k, y := range m.Neighbors(i) {
			if m.bonds[bs[k]].order == BondSingle && m.doubleToONPS(int(y), true) {
				return false
			}
		}
		return true
	}
	// O, S
	if v == 2 && h == 0 || chg == -1 {
		return true
	}
	if v == 2 && h == 1 { // [O,S;H1;v2]-[!$(*=[O,N,P,S])]
		for k, x := range m.Neighbors(i) {
			if m.bonds[bs[k]].order == BondSingle && !m.doubleToONPS(int(x), false) {
				return true
			}
		}
	}
	return false
}

// doubleToONPS reports whether atom i has a double bond (not in a ring when
// nonRing) to an aliphatic O, N, P or S.
func (m *Mol) doubleToONPS(i int, nonRing bool) bool {
	bs := m.BondsOf(i)
	for k, j := range m.Neighbors(i) {
		b := &m.bonds[bs[k]]
		if b.order != BondDouble || (nonRing && b.inRing) {
			continue
		}
		if o := &m.atoms[j]; !o.arom && (o.z == 8 || o.z == 7 || o.z == 15 || o.z == 16) {
			return true
		}
	}
	return false
}
