package chem

import (
	"fmt"
	"math"
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

	// compiled form (compilePattern)
	prog  [][]ains // per atom: its expression as a branching program
	entry []int16  // per atom: first instruction (or progTrue/progFalse)
	bmask []uint64 // per atom: bondIndex values its bond to the parent accepts
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
	if len(p.atoms) > 16 {
		return nil, fmt.Errorf("%d atoms; at most 16 are supported", len(p.atoms))
	}
	compilePattern(p)
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

// lowAnd is the ';' level of an atom expression (lowest precedence).
func (sp *smartsParser) lowAnd() (*aexpr, error) { return sp.joined(';', '&', sp.orExpr) }

// orExpr is the ',' level.
func (sp *smartsParser) orExpr() (*aexpr, error) { return sp.joined(',', ',', sp.hiAnd) }

// joined reads operands with next, separated by sep, and joins two or more
// under op ('&' operands are ordered cheapest first).
func (sp *smartsParser) joined(sep, op byte, next func() (*aexpr, error)) (*aexpr, error) {
	var kids []*aexpr
	for {
		e, err := next()
		if err != nil {
			return nil, err
		}
		kids = append(kids, e)
		if sp.i < len(sp.s) && sp.s[sp.i] == sep {
			sp.i++
			continue
		}
		break
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	if op == '&' {
		sortByCost(kids)
	}
	return &aexpr{op: op, kids: kids}, nil
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

// A compiled atom expression is a branching program: each instruction tests
// one primitive on the atom and names the next instruction for a true and
// for a false result (progTrue and progFalse end the program). '&', ',' and
// '!' become jumps, so matching an atom is one loop without recursion or
// calls, except for the first test of a recursive $(...) on an atom (its
// result is memoised per graph).
type ains struct {
	field uint8 // gatom feature tested (fZ ... fVal), fRec or fNever
	val   int16 // the feature must equal val
	t, f  int16 // next instruction, or progTrue/progFalse
	rec   *spattern
}

const (
	progTrue  = -1
	progFalse = -2
)

// Features of a graph atom, indices into gatom.
const (
	fZ     = iota // atomic number
	fArom         // 1 if aromatic
	fRing         // 1 if in a ring
	fChg          // formal charge
	fHs           // total H count including H neighbours
	fDeg          // explicit connections
	fConn         // total connections (degree + implicit H)
	fVal          // total valence
	fRec          // recursive SMARTS: rec matches at the atom
	fNever        // a value no atom has
)

// compileAtom appends the program of e to prog, continuing at t when e
// holds and at f when it does not, and returns its entry point.
func compileAtom(e *aexpr, t, f int16, prog *[]ains) int16 {
	switch e.op {
	case '!':
		return compileAtom(e.kids[0], f, t, prog)
	case '&':
		next := t
		for k := len(e.kids) - 1; k >= 0; k-- {
			next = compileAtom(e.kids[k], next, f, prog)
		}
		return next
	case ',':
		next := f
		for k := len(e.kids) - 1; k >= 0; k-- {
			next = compileAtom(e.kids[k], t, next, prog)
		}
		return next
	}
	test := func(field uint8, val int, t, f int16) int16 {
		if val < math.MinInt16 || val > math.MaxInt16 {
			field = fNever
		}
		*prog = append(*prog, ains{field: field, val: int16(val), t: t, f: f, rec: e.rec})
		return int16(len(*prog) - 1)
	}
	switch e.kind {
	case pTrue:
		return t
	case pElemAli:
		return test(fZ, e.val, test(fArom, 0, t, f), f)
	case pElemArom:
		return test(fZ, e.val, test(fArom, 1, t, f), f)
	case pAtomicNum:
		return test(fZ, e.val, t, f)
	case pAliphatic:
		return test(fArom, 0, t, f)
	case pAromatic:
		return test(fArom, 1, t, f)
	case pHCount:
		return test(fHs, e.val, t, f)
	case pDegree:
		return test(fDeg, e.val, t, f)
	case pConn:
		return test(fConn, e.val, t, f)
	case pValence:
		return test(fVal, e.val, t, f)
	case pRing:
		if e.val == 0 {
			return test(fRing, 0, t, f)
		}
		return test(fRing, 1, t, f)
	case pCharge:
		return test(fChg, e.val, t, f)
	case pRecursive:
		compilePattern(e.rec)
		return test(fRec, 0, t, f)
	}
	return f
}

// bondIndex is the bit of a bond in a compiled bond expression's mask.
func bondIndex(order BondOrder, inRing bool) uint {
	i := uint(order&31) * 2
	if inRing {
		i++
	}
	return i
}

// compilePattern fills p's programs and bond masks (once).
func compilePattern(p *spattern) {
	if p.prog != nil {
		return
	}
	p.prog = make([][]ains, len(p.atoms))
	p.entry = make([]int16, len(p.atoms))
	p.bmask = make([]uint64, len(p.atoms))
	for k, e := range p.atoms {
		var prog []ains
		p.entry[k] = compileAtom(e, progTrue, progFalse, &prog)
		p.prog[k] = prog
		for o := BondOrder(0); o < 32; o++ {
			for _, r := range []bool{false, true} {
				if bondMatches(p.bonds[k], o, r) {
					p.bmask[k] |= 1 << bondIndex(o, r)
				}
			}
		}
	}
}

// gatom holds the features of a graph atom that SMARTS primitives test,
// indexed by fZ ... fVal.
type gatom [fRec]int16

// key packs the features (all within a byte) into one word.
func (a *gatom) key() uint64 {
	var k uint64
	for _, v := range a {
		k = k<<8 | uint64(uint8(v))
	}
	return k
}

// gnbr is one entry of a graph atom's neighbour list.
type gnbr struct {
	j      int32
	bindex uint8 // bondIndex of the bond
}

// matchGraph is a flattened view of a molecule for SMARTS matching,
// optionally with implicit hydrogens expanded into graph atoms. Graphs are
// pooled: their slices are reused by the next molecule.
type matchGraph struct {
	n     int
	at    []gatom
	keys  []uint64 // at[i].key(): the Crippen typing reads keys many times per atom
	start []int32  // neighbours of atom i are nb[start[i]:start[i+1]]
	nb    []gnbr
	memo  []int8  // per recursive pattern id and atom: 0 unknown, 1 match, -1 no match
	st    []uint8 // scratch of countBonds
	// frames holds extendFrom's mapped atoms and cursors, 32 per active call
	frames []int32
	depth  int
}

var graphPool scratchPool[matchGraph]

// reserve returns s with room for n more elements beyond its length.
func reserve[T any](s []T, n int) []T {
	if cap(s)-len(s) < n {
		return append(make([]T, 0, len(s)+n+n/2), s...)
	}
	return s
}

// push appends v to s, which must have room for it (see reserve). Unlike
// append it has no path that grows the slice, so a loop that pushes makes no
// call: in a wasm module wazero keeps no value in a register across a call,
// even one that never runs.
func push[T any](s []T, v T) []T {
	s = s[:len(s)+1]
	s[len(s)-1] = v
	return s
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/2)
	}
	return s[:n]
}

// newMatchGraph returns the match graph of m from the pool; give it back
// with g.release().
func newMatchGraph(m *Mol, expandH bool) *matchGraph {
	g := graphPool.get()
	na := len(m.atoms)
	nh := 0
	if expandH {
		for i := range m.atoms {
			nh += m.atoms[i].TotalHs()
		}
	}
	n := na + nh
	g.n = n
	g.at = grow(g.at, n)
	g.keys = grow(g.keys, n)
	g.start = grow(g.start, n+1)
	g.nb = grow(g.nb, 2*len(m.bonds)+2*nh)
	g.memo = g.memo[:0]
	g.depth = 0
	x := int32(0)
	hNext := int32(na)
	for i := 0; i < na; i++ {
		a := &m.atoms[i]
		th := a.TotalHs()
		d := m.Degree(i)
		var ga gatom
		ga[fZ], ga[fChg] = int16(a.z), int16(a.charge)
		if a.arom {
			ga[fArom] = 1
		}
		if m.atomRingCt[i] > 0 {
			ga[fRing] = 1
		}
		ga[fHs] = int16(uint8(th + m.hNeighbors(i)))
		ga[fConn] = int16(uint8(d + th))
		ga[fVal] = int16(uint8(int(a.expVal) + int(a.implicitH)))
		if expandH {
			d += th
		}
		ga[fDeg] = int16(uint8(d))
		g.at[i] = ga
		g.keys[i] = ga.key()
		g.start[i] = x
		bs := m.BondsOf(i)
		for k, j := range m.Neighbors(i) {
			b := &m.bonds[bs[k]]
			g.nb[x] = gnbr{j: j, bindex: uint8(bondIndex(b.order, b.inRing))}
			x++
		}
		if expandH {
			for h := 0; h < th; h++ {
				g.nb[x] = gnbr{j: hNext, bindex: uint8(bondIndex(BondSingle, false))}
				x++
				hNext++
			}
		}
	}
	if expandH {
		// hydrogen atoms, each bonded to its heavy atom
		hi := na
		h1 := gatom{fZ: 1, fDeg: 1, fConn: 1, fVal: 1}
		k1 := h1.key()
		for i := 0; i < na; i++ {
			for h := 0; h < m.atoms[i].TotalHs(); h++ {
				g.at[hi], g.keys[hi] = h1, k1
				g.start[hi] = x
				g.nb[x] = gnbr{j: int32(i), bindex: uint8(bondIndex(BondSingle, false))}
				x++
				hi++
			}
		}
	}
	g.start[n] = x
	return g
}

func (g *matchGraph) release() { graphPool.put(g) }

// atomMatches runs the program of pattern atom k of p on graph atom i.
func (g *matchGraph) atomMatches(p *spattern, k, i int) bool {
	prog := p.prog[k]
	pc := int(p.entry[k])
	a := &g.at[i]
	for pc >= 0 {
		in := &prog[pc]
		var r bool
		if in.field < fRec {
			r = a[in.field] == in.val
		} else if in.field == fRec {
			r = g.recMatch(in.rec, i)
		}
		if r {
			pc = int(in.t)
		} else {
			pc = int(in.f)
		}
	}
	return pc == progTrue
}

// recMatch reports whether the recursive pattern rec matches at atom i,
// memoised per graph.
func (g *matchGraph) recMatch(rec *spattern, i int) bool {
	if len(g.memo) < recCounter*g.n {
		g.memo = grow(g.memo, recCounter*g.n)
		clear(g.memo)
	}
	v := &g.memo[rec.recID*g.n+i]
	if *v == 0 {
		*v = -1
		if g.matchAt(rec, i) {
			*v = 1
		}
	}
	return *v > 0
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

// matchAt reports whether pattern p matches with its first atom on atom i:
// a depth-first search over the pattern atoms in order, each mapped to an
// unused neighbour of its parent's image (iterative, with one neighbour
// cursor per pattern atom).
func (g *matchGraph) matchAt(p *spattern, i int) bool {
	return g.atomMatches(p, 0, i) && g.extendFrom(p, i)
}

// extendFrom is matchAt once the first pattern atom is known to match atom i.
func (g *matchGraph) extendFrom(p *spattern, i int) bool {
	n := len(p.atoms)
	if n == 1 {
		return true
	}
	// mapped and cursor live in the graph, a frame per nesting level of
	// recursive patterns: local arrays would be zeroed on every call, which
	// wazero runs as a loop of memmove calls
	base := g.depth * 32
	if base+32 > len(g.frames) {
		g.frames = append(g.frames, make([]int32, 32)...)
	}
	fr := g.frames[base : base+32 : base+32]
	mapped, cursor := fr[:16:16], fr[16:32:32]
	g.depth++
	mapped[0] = int32(i)
	cursor[1] = g.start[i]
	k := 1
	for {
		par := mapped[p.parent[k]]
		end := g.start[par+1]
		mask := p.bmask[k]
		x := cursor[k]
		j := int32(-1)
	scan:
		for ; x < end; x++ {
			e := g.nb[x]
			if mask>>e.bindex&1 == 0 {
				continue
			}
			for q := 0; q < k; q++ {
				if mapped[q] == e.j {
					continue scan
				}
			}
			// g.atomMatches(p, k, e.j), inlined (calls are costly in wasm)
			prog := p.prog[k]
			pc := int(p.entry[k])
			a := &g.at[e.j]
			for pc >= 0 {
				in := &prog[pc]
				var r bool
				if in.field < fRec {
					r = a[in.field] == in.val
				} else if in.field == fRec {
					r = g.recMatch(in.rec, int(e.j))
				}
				if r {
					pc = int(in.t)
				} else {
					pc = int(in.f)
				}
			}
			if pc == progTrue {
				j = e.j
				break
			}
		}
		if j < 0 {
			k--
			if k == 0 {
				g.depth--
				return false
			}
			continue
		}
		mapped[k], cursor[k] = j, x+1
		k++
		if k == n {
			g.depth--
			return true
		}
		cursor[k] = g.start[mapped[p.parent[k]]]
	}
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
	g.st = grow(g.st, 2*g.n)
	st := g.st
	clear(st)
	mask := p.bmask[1]
	for i := 0; i < g.n; i++ {
		for x := g.start[i]; x < g.start[i+1]; x++ {
			e := g.nb[x]
			j := int(e.j)
			if j < i || mask>>e.bindex&1 == 0 {
				continue
			}
			// (atom 0 on i and atom 1 on j) or (atom 0 on j and atom 1 on i)
			for dir := 0; dir < 2; dir++ {
				u, v := i, j
				if dir == 1 {
					u, v = j, i
				}
				if st[2*u] == 0 {
					st[2*u] = 2
					if g.atomMatches(p, 0, u) {
						st[2*u] = 1
					}
				}
				if st[2*u] != 1 {
					continue
				}
				if st[2*v+1] == 0 {
					st[2*v+1] = 2
					if g.atomMatches(p, 1, v) {
						st[2*v+1] = 1
					}
				}
				if st[2*v+1] == 1 {
					n++
					break
				}
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
