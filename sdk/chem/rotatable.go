package chem

// numRotatableStrict counts the bonds matched by patRotatableStrict (RDKit's
// strict rotatable-bond SMARTS) without the SMARTS engine: the same atom
// tests written out, evaluated once per atom. TestRotatableMatchesSMARTS
// compares it with the pattern on the reference molecules.
//
//	[!$(*#*)&!D1&!$(C(F)(F)F)&!$(C(Cl)(Cl)Cl)&!$(C(Br)(Br)Br)&!$(C([CH3])([CH3])[CH3])
//	  &!$([CD3](=[N,O,S])-!@[#7,O,S!D1])&!$([#7,O,S!D1]-!@[CD3]=[N,O,S])
//	  &!$([CD3](=[N+])-!@[#7!D1])&!$([#7!D1]-!@[CD3]=[N+])]
//	-!@
//	[!$(*#*)&!D1&!$(C(F)(F)F)&!$(C(Cl)(Cl)Cl)&!$(C(Br)(Br)Br)&!$(C([CH3])([CH3])[CH3])]
func (m *Mol) numRotatableStrict() int {
	n := 0
	for bi := range m.bonds {
		b := &m.bonds[bi]
		if b.order != BondSingle || b.inRing {
			continue
		}
		i, j := int(b.a), int(b.b)
		// terminal atoms (D1) never match
		if m.Degree(i) == 1 || m.Degree(j) == 1 || !m.rotEnd(i, j) {
			continue
		}
		if !m.rotAmideLike(i) || !m.rotAmideLike(j) {
			n++
		}
	}
	return n
}

// rotEnd reports whether atoms i and j both match the expression of the
// pattern's second atom (and the first part of the first atom's); one call
// for both ends, since a call costs much in a wasm module.
func (m *Mol) rotEnd(i, j int) bool {
	for _, x := range [2]int{i, j} {
		a := &m.atoms[x]
		isC := a.z == 6 && !a.arom
		var nF, nCl, nBr, nMe int
		bs := m.BondsOf(x)
		for k, y := range m.Neighbors(x) {
			b := &m.bonds[bs[k]]
			if b.order == BondTriple {
				return false // $(*#*)
			}
			if !isC || (b.order != BondSingle && b.order != BondAromatic) {
				continue
			}
			o := &m.atoms[y]
			if o.arom {
				continue
			}
			switch o.z {
			case 9:
				nF++
			case 17:
				nCl++
			case 35:
				nBr++
			case 6:
				if o.TotalHs()+m.hNeighbors(int(y)) == 3 {
					nMe++
				}
			}
		}
		if nF >= 3 || nCl >= 3 || nBr >= 3 || nMe >= 3 {
			return false
		}
	}
	return true
}

// rotAmideLike reports whether atom i matches one of the first atom's
// amide and amidine exclusions.
func (m *Mol) rotAmideLike(i int) bool {
	if m.isCD3(i) {
		dNOS, dNplus := m.doubleToNOS(i)
		if dNOS || dNplus {
			bs := m.BondsOf(i)
			for k, j := range m.Neighbors(i) {
				b := &m.bonds[bs[k]]
				if b.order != BondSingle || b.inRing {
					continue
				}
				if dNOS && m.isHetX(int(j)) { // [CD3](=[N,O,S])-!@[#7,O,S!D1]
					return true
				}
				if dNplus && m.atoms[j].z == 7 && m.Degree(int(j)) != 1 { // [CD3](=[N+])-!@[#7!D1]
					return true
				}
			}
		}
	}
	hetX := m.isHetX(i)
	n7 := m.atoms[i].z == 7 && m.Degree(i) != 1
	if !hetX && !n7 {
		return false
	}
	bs := m.BondsOf(i)
	for k, c := range m.Neighbors(i) {
		b := &m.bonds[bs[k]]
		if b.order != BondSingle || b.inRing || !m.isCD3(int(c)) {
			continue
		}
		dNOS, dNplus := m.doubleToNOS(int(c))
		if (hetX && dNOS) || (n7 && dNplus) { // [#7,O,S!D1]-!@[CD3]=[N,O,S], [#7!D1]-!@[CD3]=[N+]
			return true
		}
	}
	return false
}

// isCD3 is [CD3]: aliphatic carbon with three explicit connections.
func (m *Mol) isCD3(i int) bool {
	a := &m.atoms[i]
	return a.z == 6 && !a.arom && m.Degree(i) == 3
}

// isHetX is [#7,O,S!D1].
func (m *Mol) isHetX(i int) bool {
	a := &m.atoms[i]
	return a.z == 7 || (a.z == 8 && !a.arom) || (a.z == 16 && !a.arom && m.Degree(i) != 1)
}

// doubleToNOS reports whether atom i has a double bond to [N,O,S] and to [N+].
func (m *Mol) doubleToNOS(i int) (nos, nplus bool) {
	bs := m.BondsOf(i)
	for k, j := range m.Neighbors(i) {
		if m.bonds[bs[k]].order != BondDouble {
			continue
		}
		o := &m.atoms[j]
		if o.arom {
			continue
		}
		if o.z == 7 || o.z == 8 || o.z == 16 {
			nos = true
		}
		if o.z == 7 && o.charge == 1 {
			nplus = true
		}
	}
	return nos, nplus
}
