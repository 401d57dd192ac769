package chem

import (
	"fmt"
	"sort"
	"strconv"
)

// This file holds a small SMARTS matcher used internally for RDKit's
// SMARTS-defined descriptors (H-bond donors/acceptors, rotatable bonds,
// Crippen atom types). It supports tree-shaped patterns (no ring closures)
// with the atom primitives used there: elements (aliphatic/aromatic), #n,
// *, A, a, H, D, X, v, R, r, charges and recursive $(...), combined with
// ! & , ; and bond primitives - = # : ~ @.

type primKind uint8

const (
	pAny primKind = iota
	pElemAli
	pElemArom
	pAtomicNum
	pAliphatic
	pAromatic
	pHCount
	pDegree
	pConn
	pValence
	pRing
	pCharge
	pRecursive
	pTrue
)

type aexpr struct {
	op   byte // 'p' primitive, '!', '&' (and), ',' (or)
	kind primKind
	val  int
	rec  *spattern
	kids []*aexpr
}

type bexpr struct {
	op   byte // 'p', '!', '&', ','
	kind byte // '-', '=', '#', ':', '~', '@', 'd' (default: single or aromatic)
	kids []*bexpr
}

type spattern struct {
	atoms  []*aexpr
	parent []int    // parent pattern atom (-1 for root)
	bonds  []*bexpr // bond to parent
	recID  int      // index for memoisation when used recursively
}

var recCounter int

func mustSMARTS(s string) *spattern {
	p, err := parseSMARTS(s)
	if err != nil {
		panic(fmt.Sprintf("chem: bad internal SMARTS %q: %v", s, err))
	}
	return p
}

type smartsParser struct {
	s string
	i int
}

func parseSMARTS(s string) (*spattern, error) {
	sp := &smartsParser{s: s}
	p, err := sp.pattern()
	if err != nil {
		return nil, err
	}
	if sp.i != len(s) {
		return nil, fmt.Errorf("trailing input at %d", sp.i)
	}
	return p, nil
}

func (sp *smartsParser) pattern() (*spattern, error) {
	p := &spattern{recID: -1}
	prev := -1
	var stack []int
	var pend *bexpr
	for sp.i < len(sp.s) {
		c := sp.s[sp.i]
		switch {
		case c == ')':
			if len(stack) == 0 {
				return p, nil // end of a recursive pattern
			}
			prev = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			sp.i++
		case c == '(':
			stack = append(stack, prev)
			sp.i++
		case c == '-' || c == '=' || c == '#' || c == ':' || c == '~' || c == '@' || c == '!':
			b, err := sp.bondExpr()
			if err != nil {
				return nil, err
			}
			pend = b
		default:
			a, err := sp.atomExpr()
			if err != nil {
				return nil, err
			}
			p.atoms = append(p.atoms, a)
			p.parent = append(p.parent, prev)
			if pend == nil {
				pend = &bexpr{op: 'p', kind: 'd'}
			}
			p.bonds = append(p.bonds, pend)
			pend = nil
			prev = len(p.atoms) - 1
		}
	}
	return p, nil
}

func (sp *smartsParser) bondExpr() (*bexpr, error) {
	// low-precedence ';' is not needed for the internal patterns; support
	// '!' '&' ',' with & binding tighter than ','.
	var ors []*bexpr
	var ands []*bexpr
	for sp.i < len(sp.s) {
		c := sp.s[sp.i]
		neg := false
		for c == '!' {
			neg = !neg
			sp.i++
			c = sp.s[sp.i]
		}
		var e *bexpr
		switch c {
		case '-', '=', '#', ':', '~', '@':
			e = &bexpr{op: 'p', kind: c}
			sp.i++
		default:
			return nil, fmt.Errorf("bad bond primitive %q", c)
		}
		if neg {
			e = &bexpr{op: '!', kids: []*bexpr{e}}
		}
		ands = append(ands, e)
		if sp.i >= len(sp.s) {
			break
		}
		c = sp.s[sp.i]
		if c == '&' {
			sp.i++
			continue
		}
		if c == ',' {
			sp.i++
			ors = append(ors, &bexpr{op: '&', kids: ands})
			ands = nil
			continue
		}
		if c == '-' || c == '=' || c == '#' || c == ':' || c == '~' || c == '@' || c == '!' {
			continue // implicit and
		}
		break
	}
	ors = append(ors, &bexpr{op: '&', kids: ands})
	if len(ors) == 1 {
		return ors[0], nil
	}
	return &bexpr{op: ',', kids: ors}, nil
}

func (sp *smartsParser) atomExpr() (*aexpr, error) {
	s := sp.s
	c := s[sp.i]
	if c != '[' {
		sp.i++
		switch c {
		case '*':
			return &aexpr{op: 'p', kind: pTrue}, nil
		case 'a':
			return &aexpr{op: 'p', kind: pAromatic}, nil
		case 'A':
			return &aexpr{op: 'p', kind: pAliphatic}, nil
		case 'C':
			if sp.i < len(s) && s[sp.i] == 'l' {
				sp.i++
				return &aexpr{op: 'p', kind: pElemAli, val: 17}, nil
			}
			return &aexpr{op: 'p', kind: pElemAli, val: 6}, nil
		case 'B':
			if sp.i < len(s) && s[sp.i] == 'r' {
				sp.i++
				return &aexpr{op: 'p', kind: pElemAli, val: 35}, nil
			}
			return &aexpr{op: 'p', kind: pElemAli, val: 5}, nil
		case 'N':
			return &aexpr{op: 'p', kind: pElemAli, val: 7}, nil
		case 'O':
			return &aexpr{op: 'p', kind: pElemAli, val: 8}, nil
		case 'S':
			return &aexpr{op: 'p', kind: pElemAli, val: 16}, nil
		case 'P':
			return &aexpr{op: 'p', kind: pElemAli, val: 15}, nil
		case 'F':
			return &aexpr{op: 'p', kind: pElemAli, val: 9}, nil
		case 'I':
			return &aexpr{op: 'p', kind: pElemAli, val: 53}, nil
		case 'c':
			return &aexpr{op: 'p', kind: pElemArom, val: 6}, nil
		case 'n':
			return &aexpr{op: 'p', kind: pElemArom, val: 7}, nil
		case 'o':
			return &aexpr{op: 'p', kind: pElemArom, val: 8}, nil
		case 's':
			return &aexpr{op: 'p', kind: pElemArom, val: 16}, nil
		case 'p':
			return &aexpr{op: 'p', kind: pElemArom, val: 15}, nil
		}
		return nil, fmt.Errorf("bad atom %q", c)
	}
	sp.i++
	e, err := sp.lowAnd()
	if err != nil {
		return nil, err
	}
	if sp.i >= len(s) || s[sp.i] != ']' {
		return nil, fmt.Errorf("missing ]")
	}
	sp.i++
	return e, nil
}

func (sp *smartsParser) lowAnd() (*aexpr, error) {
	var kids []*aexpr
	for {
		e, err := sp.orExpr()
		if err != nil {
			return nil, err
		}
		kids = append(kids, e)
		if sp.i < len(sp.s) && sp.s[sp.i] == ';' {
			sp.i++
			continue
		}
		break
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	sortByCost(kids)
	return &aexpr{op: '&', kids: kids}, nil
}

func (sp *smartsParser) orExpr() (*aexpr, error) {
	var kids []*aexpr
	for {
		e, err := sp.hiAnd()
		if err != nil {
			return nil, err
		}
		kids = append(kids, e)
		if sp.i < len(sp.s) && sp.s[sp.i] == ',' {
			sp.i++
			continue
		}
		break
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	return &aexpr{op: ',', kids: kids}, nil
}

// exprCost ranks expressions so that '&' evaluates cheap tests first.
func exprCost(e *aexpr) int {
	if e.op == 'p' {
		if e.kind == pRecursive {
			return 10 + len(e.rec.atoms)
		}
		return 0
	}
	c := 0
	for _, k := range e.kids {
		c += exprCost(k)
	}
	return c
}

func sortByCost(kids []*aexpr) {
	sort.SliceStable(kids, func(i, j int) bool { return exprCost(kids[i]) < exprCost(kids[j]) })
}

func (sp *smartsParser) hiAnd() (*aexpr, error) {
	var kids []*aexpr
	first := true
	for sp.i < len(sp.s) {
		c := sp.s[sp.i]
		if c == ']' || c == ';' || c == ',' {
			break
		}
		if c == '&' {
			sp.i++
			continue
		}
		e, err := sp.notExpr(first)
		if err != nil {
			return nil, err
		}
		first = false
		kids = append(kids, e)
	}
	if len(kids) == 0 {
		return nil, fmt.Errorf("empty atom expression at %d", sp.i)
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	sortByCost(kids)
	return &aexpr{op: '&', kids: kids}, nil
}

func (sp *smartsParser) notExpr(first bool) (*aexpr, error) {
	if sp.s[sp.i] == '!' {
		sp.i++
		e, err := sp.notExpr(false)
		if err != nil {
			return nil, err
		}
		return &aexpr{op: '!', kids: []*aexpr{e}}, nil
	}
	return sp.primitive(first)
}

func (sp *smartsParser) number(def int) int {
	j := sp.i
	for sp.i < len(sp.s) && isDigit(sp.s[sp.i]) {
		sp.i++
	}
	if sp.i == j {
		return def
	}
	n, _ := strconv.Atoi(sp.s[j:sp.i])
	return n
}

func (sp *smartsParser) primitive(first bool) (*aexpr, error) {
	s := sp.s
	c := s[sp.i]
	switch c {
	case '*':
		sp.i++
		return &aexpr{op: 'p', kind: pTrue}, nil
	case '#':
		sp.i++
		return &aexpr{op: 'p', kind: pAtomicNum, val: sp.number(0)}, nil
	case 'a':
		sp.i++
		return &aexpr{op: 'p', kind: pAromatic}, nil
	case 'A':
		sp.i++
		return &aexpr{op: 'p', kind: pAliphatic}, nil
	case 'H':
		sp.i++
		return &aexpr{op: 'p', kind: pHCount, val: sp.number(1)}, nil
	case 'D':
		sp.i++
		return &aexpr{op: 'p', kind: pDegree, val: sp.number(1)}, nil
	case 'X':
		sp.i++
		return &aexpr{op: 'p', kind: pConn, val: sp.number(1)}, nil
	case 'v':
		sp.i++
		return &aexpr{op: 'p', kind: pValence, val: sp.number(1)}, nil
	case 'R', 'r':
		sp.i++
		return &aexpr{op: 'p', kind: pRing, val: sp.number(-1)}, nil
	case '+', '-':
		sign := 1
		if c == '-' {
			sign = -1
		}
		sp.i++
		n := 1
		if sp.i < len(s) && isDigit(s[sp.i]) {
			n = sp.number(1)
		} else {
			for sp.i < len(s) && s[sp.i] == c {
				n++
				sp.i++
			}
		}
		return &aexpr{op: 'p', kind: pCharge, val: sign * n}, nil
	case '$':
		sp.i++
		if sp.i >= len(s) || s[sp.i] != '(' {
			return nil, fmt.Errorf("$ without (")
		}
		sp.i++
		rp, err := sp.pattern()
		if err != nil {
			return nil, err
		}
		if sp.i >= len(s) || s[sp.i] != ')' {
			return nil, fmt.Errorf("unclosed $(")
		}
		sp.i++
		rp.recID = recCounter
		recCounter++
		return &aexpr{op: 'p', kind: pRecursive, rec: rp}, nil
	}
	if c >= 'A' && c <= 'Z' {
		if sp.i+1 < len(s) && s[sp.i+1] >= 'a' && s[sp.i+1] <= 'z' {
			if z, ok := symbolToZ[s[sp.i:sp.i+2]]; ok {
				sp.i += 2
				return &aexpr{op: 'p', kind: pElemAli, val: z}, nil
			}
		}
		if z, ok := symbolToZ[s[sp.i:sp.i+1]]; ok {
			sp.i++
			return &aexpr{op: 'p', kind: pElemAli, val: z}, nil
		}
	}
	if c >= 'a' && c <= 'z' {
		if z, ok := aromaticBracket[s[sp.i:sp.i+1]]; ok {
			sp.i++
			return &aexpr{op: 'p', kind: pElemArom, val: int(z)}, nil
		}
	}
	return nil, fmt.Errorf("bad primitive %q at %d", c, sp.i)
}

// matchGraph is a flattened view of a molecule for SMARTS matching,
// optionally with implicit hydrogens expanded into graph atoms.
type matchGraph struct {
	n      int
	z      []uint8
	arom   []bool
	chg    []int8
	hs     []uint8 // total H count including H neighbours
	deg    []uint8 // explicit connections
	conn   []uint8 // total connections (degree + implicit H)
	val    []uint8 // total valence
	ring   []bool
	start  []int32
	nbr    []int32
	border []BondOrder
	bring  []bool
	memo   [][]int8 // per recursive pattern id: 0 unknown, 1 match, -1 no match
}

func newMatchGraph(m *Mol, expandH bool) *matchGraph {
	na := len(m.atoms)
	nh := 0
	if expandH {
		for i := range m.atoms {
			nh += m.atoms[i].TotalHs()
		}
	}
	n := na + nh
	g := &matchGraph{n: n,
		z: make([]uint8, n), arom: make([]bool, n), chg: make([]int8, n), hs: make([]uint8, n),
		deg: make([]uint8, n), conn: make([]uint8, n), val: make([]uint8, n), ring: make([]bool, n),
		start: make([]int32, n+1),
	}
	nbTotal := 2*len(m.bonds) + 2*nh
	g.nbr = make([]int32, 0, nbTotal)
	g.border = make([]BondOrder, 0, nbTotal)
	g.bring = make([]bool, 0, nbTotal)
	hNext := int32(na)
	for i := 0; i < na; i++ {
		a := &m.atoms[i]
		g.z[i], g.arom[i], g.chg[i] = a.z, a.arom, a.charge
		th := a.TotalHs()
		g.hs[i] = uint8(th + m.hNeighbors(i))
		d := m.Degree(i)
		g.conn[i] = uint8(d + th)
		if expandH {
			d += th
		}
		g.deg[i] = uint8(d)
		g.val[i] = uint8(int(a.expVal) + int(a.implicitH))
		g.ring[i] = m.atomRingCt[i] > 0
		g.start[i] = int32(len(g.nbr))
		for k, j := range m.Neighbors(i) {
			b := &m.bonds[m.BondsOf(i)[k]]
			g.nbr = append(g.nbr, j)
			g.border = append(g.border, b.order)
			g.bring = append(g.bring, b.inRing)
		}
		if expandH {
			for h := 0; h < th; h++ {
				g.nbr = append(g.nbr, hNext)
				g.border = append(g.border, BondSingle)
				g.bring = append(g.bring, false)
				hNext++
			}
		}
	}
	if expandH {
		// hydrogen atoms, each bonded to its heavy atom
		hi := int32(na)
		for i := 0; i < na; i++ {
			for h := 0; h < m.atoms[i].TotalHs(); h++ {
				g.z[hi], g.deg[hi], g.conn[hi], g.val[hi] = 1, 1, 1, 1
				g.start[hi] = int32(len(g.nbr))
				g.nbr = append(g.nbr, int32(i))
				g.border = append(g.border, BondSingle)
				g.bring = append(g.bring, false)
				hi++
			}
		}
	}
	g.start[n] = int32(len(g.nbr))
	return g
}

func (g *matchGraph) atomMatches(e *aexpr, i int) bool {
	switch e.op {
	case '!':
		return !g.atomMatches(e.kids[0], i)
	case '&':
		for _, k := range e.kids {
			if !g.atomMatches(k, i) {
				return false
			}
		}
		return true
	case ',':
		for _, k := range e.kids {
			if g.atomMatches(k, i) {
				return true
			}
		}
		return false
	}
	switch e.kind {
	case pTrue:
		return true
	case pElemAli:
		return int(g.z[i]) == e.val && !g.arom[i]
	case pElemArom:
		return int(g.z[i]) == e.val && g.arom[i]
	case pAtomicNum:
		return int(g.z[i]) == e.val
	case pAliphatic:
		return !g.arom[i]
	case pAromatic:
		return g.arom[i]
	case pHCount:
		return int(g.hs[i]) == e.val
	case pDegree:
		return int(g.deg[i]) == e.val
	case pConn:
		return int(g.conn[i]) == e.val
	case pValence:
		return int(g.val[i]) == e.val
	case pRing:
		if e.val < 0 {
			return g.ring[i]
		}
		if e.val == 0 {
			return !g.ring[i]
		}
		return g.ring[i]
	case pCharge:
		return int(g.chg[i]) == e.val
	case pRecursive:
		return g.recursive(e.rec, i)
	}
	return false
}

func (g *matchGraph) recursive(p *spattern, i int) bool {
	if g.memo == nil {
		g.memo = make([][]int8, recCounter)
	}
	mm := g.memo[p.recID]
	if mm == nil {
		mm = make([]int8, g.n)
		g.memo[p.recID] = mm
	}
	if mm[i] != 0 {
		return mm[i] > 0
	}
	r := g.matchAt(p, i)
	if r {
		mm[i] = 1
	} else {
		mm[i] = -1
	}
	return r
}

func bondMatches(e *bexpr, order BondOrder, inRing bool) bool {
	switch e.op {
	case '!':
		return !bondMatches(e.kids[0], order, inRing)
	case '&':
		for _, k := range e.kids {
			if !bondMatches(k, order, inRing) {
				return false
			}
		}
		return true
	case ',':
		for _, k := range e.kids {
			if bondMatches(k, order, inRing) {
				return true
			}
		}
		return false
	}
	switch e.kind {
	case 'd':
		return order == BondSingle || order == BondAromatic
	case '-':
		return order == BondSingle
	case '=':
		return order == BondDouble
	case '#':
		return order == BondTriple
	case ':':
		return order == BondAromatic
	case '~':
		return true
	case '@':
		return inRing
	}
	return false
}

// matchAt reports whether pattern p matches with its first atom on atom i.
func (g *matchGraph) matchAt(p *spattern, i int) bool {
	if !g.atomMatches(p.atoms[0], i) {
		return false
	}
	if len(p.atoms) == 1 {
		return true
	}
	var mapped [16]int32
	mapped[0] = int32(i)
	return g.extend(p, 1, mapped[:len(p.atoms)])
}

func (g *matchGraph) extend(p *spattern, k int, mapped []int32) bool {
	if k == len(p.atoms) {
		return true
	}
	par := mapped[p.parent[k]]
	for x := g.start[par]; x < g.start[par+1]; x++ {
		j := g.nbr[x]
		used := false
		for q := 0; q < k; q++ {
			if mapped[q] == j {
				used = true
				break
			}
		}
		if used || !bondMatches(p.bonds[k], g.border[x], g.bring[x]) || !g.atomMatches(p.atoms[k], int(j)) {
			continue
		}
		mapped[k] = j
		if g.extend(p, k+1, mapped) {
			return true
		}
	}
	return false
}

// countAtoms counts atoms matching a one-atom pattern.
func (g *matchGraph) countAtoms(p *spattern) int {
	n := 0
	for i := 0; i < g.n; i++ {
		if g.matchAt(p, i) {
			n++
		}
	}
	return n
}

// countBonds counts bonds matched (in either direction) by a two-atom
// pattern, i.e. unique matches as RDKit's uniquified SubstructMatch.
func (g *matchGraph) countBonds(p *spattern) int {
	n := 0
	// per-atom results of the two atom expressions: 0 unknown, 1 yes, 2 no
	st := make([]uint8, 2*g.n)
	am := func(k, i int) bool {
		v := &st[2*i+k]
		if *v == 0 {
			*v = 2
			if g.atomMatches(p.atoms[k], i) {
				*v = 1
			}
		}
		return *v == 1
	}
	for i := 0; i < g.n; i++ {
		for x := g.start[i]; x < g.start[i+1]; x++ {
			j := int(g.nbr[x])
			if j < i {
				continue
			}
			if !bondMatches(p.bonds[1], g.border[x], g.bring[x]) {
				continue
			}
			if (am(0, i) && am(1, j)) || (am(0, j) && am(1, i)) {
				n++
			}
		}
	}
	return n
}

// RDKit 2022.09 pattern definitions (Lipinski.cpp).
var (
	patHBD = mustSMARTS("[N&!H0&v3,N&!H0&+1&v4,O&H1&+0,S&H1&+0,n&H1&+0]")
	patHBA = mustSMARTS("[$([O,S;H1;v2]-[!$(*=[O,N,P,S])]),$([O,S;H0;v2]),$([O,S;-]),$([N;v3;!$(N-*=!@[O,N,P,S])]),$([nH0,o,s;+0])]")
	// NonStrict rotatable-bond definition
	patRotatable = mustSMARTS("[!$(*#*)&!D1]-&!@[!$(*#*)&!D1]")
	// Strict definition (RDKit's "Strict" option)
	patRotatableStrict = mustSMARTS("[!$(*#*)&!D1&!$(C(F)(F)F)&!$(C(Cl)(Cl)Cl)&!$(C(Br)(Br)Br)&!$(C([CH3])([CH3])[CH3])&!$([CD3](=[N,O,S])-!@[#7,O,S!D1])&!$([#7,O,S!D1]-!@[CD3]=[N,O,S])&!$([CD3](=[N+])-!@[#7!D1])&!$([#7!D1]-!@[CD3]=[N+])]-!@[!$(*#*)&!D1&!$(C(F)(F)F)&!$(C(Cl)(Cl)Cl)&!$(C(Br)(Br)Br)&!$(C([CH3])([CH3])[CH3])]")
)
