package chem

import (
	"fmt"
	"strconv"
)

// This file reads substructure patterns: SMARTS (ParseSMARTS) and
// molecules used as patterns (QueryFromMol). The matcher is in
// substruct.go. The descriptors' internal matcher (smarts.go) is separate:
// it is tuned for tree-shaped patterns inside WebAssembly modules.

// Limits of ParseSMARTS. A pattern beyond them is refused with a
// *PatternError.
const (
	// MaxPatternLength bounds a SMARTS string in bytes.
	MaxPatternLength = 2000
	// MaxPatternAtoms bounds the atoms of a pattern, those of its
	// recursive $(...) patterns included.
	MaxPatternAtoms = 200
	// MaxRecursionDepth bounds the nesting of recursive $(...) patterns.
	MaxRecursionDepth = 4
)

// PatternError reports why a SMARTS pattern was rejected and where.
type PatternError struct {
	Pos    int    // 0-based byte offset in the input
	Reason string // human-readable reason
}

// Error formats the error as "smarts: position N: reason".
func (e *PatternError) Error() string {
	return fmt.Sprintf("smarts: position %d: %s", e.Pos, e.Reason)
}

// qprim is the kind of an atom primitive.
type qprim uint8

const (
	qTrue      qprim = iota
	qZ               // atomic number equals val
	qArom            // aromatic (val 1) or aliphatic (val 0)
	qHs              // total hydrogen count
	qDeg             // explicit connections (D)
	qConn            // total connections (X)
	qVal             // total valence (v)
	qRingCount       // number of SSSR rings (R); -1: in a ring
	qRingSize        // smallest SSSR ring size (r); -1: in a ring
	qRingConn        // ring bonds (x); -1: at least one
	qCharge          // formal charge
	qIso             // isotope
	qRec             // recursive pattern sub matches anchored at the atom
)

// qexpr is an atom expression: a primitive, or '!' (one kid), '&' or ','
// over kids.
type qexpr struct {
	op   byte
	prim qprim
	val  int
	sub  *Query // qRec
	kids []*qexpr
}

// qbexpr is a bond expression: a primitive ('-', '=', '#', ':', '~',
// '@', '/', '\\', 'd' for the default single-or-aromatic, 'x' for exactly
// order ord), or '!', '&', ',' over kids.
type qbexpr struct {
	op   byte
	kind byte
	ord  BondOrder
	kids []*qbexpr
}

// qbond is a bond of a pattern with its compiled mask over bondIndex.
type qbond struct {
	a, b int
	mask uint64
}

// Query is a compiled substructure pattern. It is immutable and safe for
// concurrent use; match it with a Matcher.
type Query struct {
	src   string
	atoms []*qexpr
	bonds []qbond
	adj   [][]int // bond indices per atom
	// search plan: atoms in matching order; per position the position of
	// an earlier neighbour and the mask of the bond to it (fromPos -1
	// starts a component), and the other bonds to earlier atoms
	order   []int32
	fromPos []int32
	fromMsk []uint64
	checks  [][]qcheck
	// per atom: on a cycle of the pattern (a ring atom is needed), and
	// its number of pattern neighbours (the least degree of its image)
	needRing []bool
	minDeg   []uint8
	// per atom: the element (0 any) and aromaticity (-1 either) every
	// atom it accepts has, checked before its expression, and whether
	// the expression tests nothing more
	needZ    []int16
	needArom []int8
	simple   []bool
	nrec     int // recursive patterns in the whole query (memo size)
	recID    int // this pattern's id when it is recursive
	feat     Features
	anchor   bool // recursive: atom 0 is matched first, on the anchor
	smiles   bool // built from a molecule (QueryFromMol)
	nAtomsT  int  // atoms of the pattern and of its recursive patterns
}

// qcheck is a bond to an earlier position the candidate must have.
type qcheck struct {
	pos  int32
	mask uint64
}

// NumAtoms is the number of atoms of the pattern (its recursive patterns
// not counted).
func (q *Query) NumAtoms() int { return len(q.atoms) }

// String returns the pattern as given.
func (q *Query) String() string { return q.src }

// Features returns the least counts a molecule needs to match q (see
// Features).
func (q *Query) Features() Features { return q.feat }

type sparser struct {
	s     string
	i     int
	nrec  int
	atoms int
	depth int
}

func (p *sparser) errf(format string, args ...any) error {
	return &PatternError{Pos: min(p.i, len(p.s)), Reason: fmt.Sprintf(format, args...)}
}

// ParseSMARTS compiles a SMARTS pattern. Supported: atoms in and out of
// brackets (elements aliphatic and aromatic, *, a, A, #n, isotopes, H, D,
// X, v, R, r, x with or without a number, charges, $(...) recursive
// patterns; chirality @ and atom classes :n are read and ignored), the
// logical operators ! & , ; in atoms and bonds, bonds - = # : ~ @ and / \
// (read as single), branches, ring closures (digits and %nn, %(n)) and
// dot-separated components. Rejections are *PatternError.
func ParseSMARTS(s string) (*Query, error) {
	if len(s) > MaxPatternLength {
		return nil, &PatternError{Pos: MaxPatternLength, Reason: fmt.Sprintf("pattern of %d bytes, at most %d", len(s), MaxPatternLength)}
	}
	p := &sparser{s: s}
	q, err := p.pattern(false)
	if err != nil {
		return nil, err
	}
	setRecCount(q, p.nrec)
	q.nAtomsT = p.atoms
	return q, nil
}

// setRecCount gives every pattern of the query the count of recursive
// patterns (the memo's size).
func setRecCount(q *Query, n int) {
	q.nrec = n
	for _, e := range q.atoms {
		walkRec(e, func(sub *Query) { setRecCount(sub, n) })
	}
}

// walkRec calls f on each recursive pattern of e (not their own).
func walkRec(e *qexpr, f func(*Query)) {
	if e.op == 'p' {
		if e.prim == qRec {
			f(e.sub)
		}
		return
	}
	for _, k := range e.kids {
		walkRec(k, f)
	}
}

type ringOpenQ struct {
	num  int
	atom int
	bond *qbexpr
	pos  int
}

// pattern reads atoms, bonds, branches and ring closures up to the end of
// the input or, nested, up to the ')' closing a $( (left unread).
func (p *sparser) pattern(nested bool) (*Query, error) {
	q := &Query{src: p.s, anchor: nested}
	type pending struct {
		a, b int
		e    *qbexpr
	}
	var bonds []pending
	prev := -1
	var stack []int
	var pend *qbexpr
	var rings []ringOpenQ
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ')':
			if len(stack) == 0 {
				if nested {
					goto done
				}
				return nil, p.errf("')' without '('")
			}
			if pend != nil {
				return nil, p.errf("bond before ')'")
			}
			prev = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			p.i++
		case c == '(':
			if prev < 0 {
				return nil, p.errf("branch without an atom before it")
			}
			if pend != nil {
				return nil, p.errf("bond before '('")
			}
			if len(stack) >= MaxPatternAtoms {
				return nil, p.errf("branches nested too deep")
			}
			stack = append(stack, prev)
			p.i++
		case c == '.':
			if prev < 0 || pend != nil || len(stack) > 0 {
				return nil, p.errf("misplaced '.'")
			}
			prev = -1
			p.i++
		case isBondPrimQ(c) || c == '!':
			if prev < 0 || pend != nil {
				return nil, p.errf("misplaced bond")
			}
			e, err := p.bondExpr()
			if err != nil {
				return nil, err
			}
			pend = e
		case isDigit(c) || c == '%':
			if prev < 0 {
				return nil, p.errf("ring closure without an atom")
			}
			pos := p.i
			num, err := p.ringNum()
			if err != nil {
				return nil, err
			}
			k := -1
			for i := range rings {
				if rings[i].num == num {
					k = i
					break
				}
			}
			if k < 0 {
				rings = append(rings, ringOpenQ{num: num, atom: prev, bond: pend, pos: pos})
			} else {
				r := rings[k]
				rings = append(rings[:k], rings[k+1:]...)
				e := pend
				if e == nil {
					e = r.bond
				}
				if r.atom == prev {
					return nil, &PatternError{Pos: pos, Reason: "ring closure to the same atom"}
				}
				for _, b := range bonds {
					if (b.a == r.atom && b.b == prev) || (b.a == prev && b.b == r.atom) {
						return nil, &PatternError{Pos: pos, Reason: "ring closure duplicates a bond"}
					}
				}
				bonds = append(bonds, pending{r.atom, prev, e})
			}
			pend = nil
		default:
			e, err := p.atom()
			if err != nil {
				return nil, err
			}
			q.atoms = append(q.atoms, e)
			p.atoms++
			if p.atoms > MaxPatternAtoms {
				return nil, p.errf("more than %d atoms", MaxPatternAtoms)
			}
			cur := len(q.atoms) - 1
			if prev >= 0 {
				bonds = append(bonds, pending{prev, cur, pend})
			} else if pend != nil {
				return nil, p.errf("bond without an atom before it")
			}
			pend = nil
			prev = cur
		}
	}
	if nested {
		return nil, p.errf("unclosed $(")
	}
done:
	switch {
	case len(q.atoms) == 0:
		return nil, &PatternError{Pos: start, Reason: "empty pattern"}
	case pend != nil:
		return nil, p.errf("bond without an atom after it")
	case len(stack) > 0:
		return nil, p.errf("unclosed branch")
	case len(rings) > 0:
		return nil, &PatternError{Pos: rings[0].pos, Reason: fmt.Sprintf("ring closure %d not closed", rings[0].num)}
	}
	for _, b := range bonds {
		e := b.e
		if e == nil {
			e = &qbexpr{op: 'p', kind: 'd'}
		}
		q.bonds = append(q.bonds, qbond{a: b.a, b: b.b, mask: bondMask(e)})
	}
	q.compile()
	return q, nil
}

func isBondPrimQ(c byte) bool {
	switch c {
	case '-', '=', '#', ':', '~', '@', '/', '\\':
		return true
	}
	return false
}

// ringNum reads a ring-closure number: a digit, %nn or %(n).
func (p *sparser) ringNum() (int, error) {
	s := p.s
	if isDigit(s[p.i]) {
		p.i++
		return int(s[p.i-1] - '0'), nil
	}
	p.i++ // '%'
	if p.i < len(s) && s[p.i] == '(' {
		p.i++
		j := p.i
		for p.i < len(s) && isDigit(s[p.i]) && p.i-j < 5 {
			p.i++
		}
		if p.i == j || p.i >= len(s) || s[p.i] != ')' {
			return 0, p.errf("bad %%(n) ring closure")
		}
		n, _ := strconv.Atoi(s[j:p.i])
		p.i++
		return n, nil
	}
	if p.i+1 >= len(s) || !isDigit(s[p.i]) || !isDigit(s[p.i+1]) {
		return 0, p.errf("%% needs two digits")
	}
	p.i += 2
	return int(s[p.i-2]-'0')*10 + int(s[p.i-1]-'0'), nil
}

// bondExpr reads a bond expression outside brackets: primitives joined by
// '!' (highest), '&' or nothing, ',' and ';' (lowest).
func (p *sparser) bondExpr() (*qbexpr, error) {
	var lows, ors, ands []*qbexpr
	join := func(op byte, l []*qbexpr) *qbexpr {
		if len(l) == 1 {
			return l[0]
		}
		return &qbexpr{op: op, kids: l}
	}
	for {
		neg := false
		for p.i < len(p.s) && p.s[p.i] == '!' {
			neg = !neg
			p.i++
		}
		if p.i >= len(p.s) || !isBondPrimQ(p.s[p.i]) {
			return nil, p.errf("bond primitive expected")
		}
		e := &qbexpr{op: 'p', kind: p.s[p.i]}
		p.i++
		if neg {
			e = &qbexpr{op: '!', kids: []*qbexpr{e}}
		}
		ands = append(ands, e)
		if len(ands)+len(ors)+len(lows) > 64 {
			return nil, p.errf("bond expression too long")
		}
		if p.i >= len(p.s) {
			break
		}
		c := p.s[p.i]
		if c == '&' {
			p.i++
			continue
		}
		if c == ',' || c == ';' {
			p.i++
			ors = append(ors, join('&', ands))
			ands = nil
			if c == ';' {
				lows = append(lows, join(',', ors))
				ors = nil
			}
			continue
		}
		if isBondPrimQ(c) || c == '!' {
			continue
		}
		break
	}
	ors = append(ors, join('&', ands))
	lows = append(lows, join(',', ors))
	return join('&', lows), nil
}

// atom reads one atom, bracketed or not.
func (p *sparser) atom() (*qexpr, error) {
	s := p.s
	c := s[p.i]
	if c == '[' {
		p.i++
		e, err := p.bracket()
		if err != nil {
			return nil, err
		}
		if p.i >= len(s) || s[p.i] != ']' {
			return nil, p.errf("missing ]")
		}
		p.i++
		return e, nil
	}
	prim := func(k qprim, v int) *qexpr { return &qexpr{op: 'p', prim: k, val: v} }
	elem := func(z int, arom int) *qexpr {
		return &qexpr{op: '&', kids: []*qexpr{prim(qZ, z), prim(qArom, arom)}}
	}
	p.i++
	two := func(next byte) bool {
		if p.i < len(s) && s[p.i] == next {
			p.i++
			return true
		}
		return false
	}
	switch c {
	case '*':
		return prim(qTrue, 0), nil
	case 'a':
		return prim(qArom, 1), nil
	case 'A':
		return prim(qArom, 0), nil
	case 'C':
		if two('l') {
			return elem(17, 0), nil
		}
		return elem(6, 0), nil
	case 'B':
		if two('r') {
			return elem(35, 0), nil
		}
		return elem(5, 0), nil
	case 'N':
		return elem(7, 0), nil
	case 'O':
		return elem(8, 0), nil
	case 'S':
		return elem(16, 0), nil
	case 'P':
		return elem(15, 0), nil
	case 'F':
		return elem(9, 0), nil
	case 'I':
		return elem(53, 0), nil
	case 'b':
		return elem(5, 1), nil
	case 'c':
		return elem(6, 1), nil
	case 'n':
		return elem(7, 1), nil
	case 'o':
		return elem(8, 1), nil
	case 's':
		return elem(16, 1), nil
	case 'p':
		return elem(15, 1), nil
	}
	p.i--
	return nil, p.errf("unexpected %q", c)
}

// bracket reads the expression inside [...] up to the ']' (left unread).
func (p *sparser) bracket() (*qexpr, error) {
	var lows, ors, ands []*qexpr
	join := func(op byte, l []*qexpr) *qexpr {
		if len(l) == 1 {
			return l[0]
		}
		return &qexpr{op: op, kids: l}
	}
	first := true // no atom-defining primitive read yet (for [H], [2H])
	n := 0
	for {
		neg := false
		for p.i < len(p.s) && p.s[p.i] == '!' {
			neg = !neg
			p.i++
		}
		if p.i >= len(p.s) {
			return nil, p.errf("missing ]")
		}
		e, isIso, err := p.primitive(first)
		if err != nil {
			return nil, err
		}
		if !isIso {
			first = false
		}
		if neg {
			e = &qexpr{op: '!', kids: []*qexpr{e}}
		}
		ands = append(ands, e)
		if n++; n > 64 {
			return nil, p.errf("atom expression too long")
		}
		if p.i >= len(p.s) {
			return nil, p.errf("missing ]")
		}
		switch c := p.s[p.i]; c {
		case ']':
			ors = append(ors, join('&', ands))
			lows = append(lows, join(',', ors))
			return join('&', lows), nil
		case '&':
			p.i++
		case ',', ';':
			p.i++
			ors = append(ors, join('&', ands))
			ands = nil
			if c == ';' {
				lows = append(lows, join(',', ors))
				ors = nil
			}
		}
	}
}

// number reads an optional decimal number (def when absent), at most 4
// digits.
func (p *sparser) number(def int) (int, error) {
	j := p.i
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		p.i++
		if p.i-j > 4 {
			return 0, p.errf("number too large")
		}
	}
	if p.i == j {
		return def, nil
	}
	n, _ := strconv.Atoi(p.s[j:p.i])
	return n, nil
}

// primitive reads one atom primitive inside brackets; isIso reports an
// isotope (after which H still names hydrogen, as in [2H]).
func (p *sparser) primitive(first bool) (e *qexpr, isIso bool, err error) {
	s := p.s
	c := s[p.i]
	prim := func(k qprim, v int) *qexpr { return &qexpr{op: 'p', prim: k, val: v} }
	num := func(k qprim, def int) (*qexpr, bool, error) {
		p.i++
		v, err := p.number(def)
		if err != nil {
			return nil, false, err
		}
		return prim(k, v), false, nil
	}
	switch {
	case isDigit(c):
		v, err := p.number(0)
		if err != nil {
			return nil, false, err
		}
		return prim(qIso, v), true, nil
	case c == '*':
		p.i++
		return prim(qTrue, 0), false, nil
	case c == '#':
		if p.i+1 >= len(s) || !isDigit(s[p.i+1]) {
			return nil, false, p.errf("# needs an atomic number")
		}
		return num(qZ, 0)
	case c == 'H':
		// hydrogen as an element: [H], [H+], [2H]; else a hydrogen count
		if first && (p.i+1 >= len(s) || s[p.i+1] == ']' || s[p.i+1] == '+' || s[p.i+1] == '-') {
			p.i++
			return prim(qZ, 1), false, nil
		}
		if p.i+1 < len(s) && s[p.i+1] >= 'a' && s[p.i+1] <= 'z' {
			if z, ok := symbolToZ[s[p.i:p.i+2]]; ok {
				p.i += 2
				return andOf(prim(qZ, int(z)), prim(qArom, 0)), false, nil
			}
		}
		return num(qHs, 1)
	case c == 'D':
		return num(qDeg, 1)
	case c == 'X':
		return num(qConn, 1)
	case c == 'v':
		return num(qVal, 1)
	case c == 'R':
		return num(qRingCount, -1)
	case c == 'r':
		return num(qRingSize, -1)
	case c == 'x':
		return num(qRingConn, -1)
	case c == 'a':
		if p.i+1 < len(s) && s[p.i+1] == 's' {
			p.i += 2
			return andOf(prim(qZ, 33), prim(qArom, 1)), false, nil
		}
		p.i++
		return prim(qArom, 1), false, nil
	case c == 'A':
		if p.i+1 < len(s) && s[p.i+1] >= 'a' && s[p.i+1] <= 'z' {
			if z, ok := symbolToZ[s[p.i:p.i+2]]; ok {
				p.i += 2
				return andOf(prim(qZ, int(z)), prim(qArom, 0)), false, nil
			}
		}
		p.i++
		return prim(qArom, 0), false, nil
	case c == '+' || c == '-':
		sign := 1
		if c == '-' {
			sign = -1
		}
		p.i++
		n := 1
		if p.i < len(s) && isDigit(s[p.i]) {
			if n, err = p.number(1); err != nil {
				return nil, false, err
			}
		} else {
			for p.i < len(s) && s[p.i] == c {
				n++
				p.i++
			}
		}
		return prim(qCharge, sign*n), false, nil
	case c == '@':
		// chirality is read and not matched (as RDKit without useChirality)
		for p.i < len(s) && s[p.i] == '@' {
			p.i++
		}
		for p.i < len(s) && (s[p.i] >= 'A' && s[p.i] <= 'Z' || isDigit(s[p.i]) || s[p.i] == '?') {
			p.i++
		}
		return prim(qTrue, 0), false, nil
	case c == ':':
		p.i++
		if p.i >= len(s) || !isDigit(s[p.i]) {
			return nil, false, p.errf(": needs an atom class number")
		}
		if _, err := p.number(0); err != nil {
			return nil, false, err
		}
		return prim(qTrue, 0), false, nil
	case c == '$':
		p.i++
		if p.i >= len(s) || s[p.i] != '(' {
			return nil, false, p.errf("$ without (")
		}
		if p.depth >= MaxRecursionDepth {
			return nil, false, p.errf("$(...) nested deeper than %d", MaxRecursionDepth)
		}
		p.i++
		p.depth++
		sub, err := p.pattern(true)
		p.depth--
		if err != nil {
			return nil, false, err
		}
		if p.i >= len(s) || s[p.i] != ')' {
			return nil, false, p.errf("unclosed $(")
		}
		p.i++
		sub.recID = p.nrec
		p.nrec++
		return &qexpr{op: 'p', prim: qRec, sub: sub}, false, nil
	case c >= 'A' && c <= 'Z':
		if z, n, ok := symbolAt(symbolToZ, s, p.i); ok {
			p.i += n
			return andOf(prim(qZ, z), prim(qArom, 0)), false, nil
		}
	case c >= 'a' && c <= 'z':
		if z, n, ok := symbolAt(aromaticBracket, s, p.i); ok {
			p.i += n
			return andOf(prim(qZ, z), prim(qArom, 1)), false, nil
		}
	}
	return nil, false, p.errf("unsupported atom primitive %q", c)
}

func andOf(kids ...*qexpr) *qexpr { return &qexpr{op: '&', kids: kids} }

// symbolAt finds the element symbol starting at s[i] in m, two letters
// before one, and returns its atomic number and length.
func symbolAt[V int | uint8](m map[string]V, s string, i int) (z, n int, ok bool) {
	for n = 2; n >= 1; n-- {
		if i+n <= len(s) {
			if v, found := m[s[i:i+n]]; found {
				return int(v), n, true
			}
		}
	}
	return 0, 0, false
}

// bondMask evaluates e for every bond kind: bit bondIndex(order, inRing)
// is set when e accepts such a bond. Directional bonds (/ \) are single
// bonds whose direction is not matched.
func bondMask(e *qbexpr) uint64 {
	var m uint64
	for _, o := range []BondOrder{BondSingle, BondDouble, BondTriple, BondQuadruple, BondAromatic} {
		for _, r := range []bool{false, true} {
			if bondEval(e, o, r) {
				m |= 1 << bondIndex(o, r)
			}
		}
	}
	return m
}

func bondEval(e *qbexpr, o BondOrder, ring bool) bool {
	switch e.op {
	case '!':
		return !bondEval(e.kids[0], o, ring)
	case '&':
		for _, k := range e.kids {
			if !bondEval(k, o, ring) {
				return false
			}
		}
		return true
	case ',':
		for _, k := range e.kids {
			if bondEval(k, o, ring) {
				return true
			}
		}
		return false
	}
	switch e.kind {
	case 'd':
		return o == BondSingle || o == BondAromatic
	case '-', '/', '\\':
		return o == BondSingle
	case '=':
		return o == BondDouble
	case '#':
		return o == BondTriple
	case ':':
		return o == BondAromatic
	case '~':
		return true
	case '@':
		return ring
	case 'x':
		return o == e.ord
	}
	return false
}

// QueryFromMol makes a pattern of a molecule with RDKit's rules for a
// molecule used as a query: an atom matches atoms of its element (any
// atom for '*'), of its charge when it has one and of its isotope when it
// has one; hydrogen counts and aromaticity of atoms are not compared; a
// bond matches bonds of its type (aromatic only aromatic).
func QueryFromMol(m *Mol) *Query {
	q := &Query{src: m.smiles, smiles: true}
	for i := range m.atoms {
		a := &m.atoms[i]
		var kids []*qexpr
		if a.z != 0 {
			kids = append(kids, &qexpr{op: 'p', prim: qZ, val: int(a.z)})
		}
		if a.charge != 0 {
			kids = append(kids, &qexpr{op: 'p', prim: qCharge, val: int(a.charge)})
		}
		if a.isotope != 0 {
			kids = append(kids, &qexpr{op: 'p', prim: qIso, val: int(a.isotope)})
		}
		switch len(kids) {
		case 0:
			q.atoms = append(q.atoms, &qexpr{op: 'p', prim: qTrue})
		case 1:
			q.atoms = append(q.atoms, kids[0])
		default:
			q.atoms = append(q.atoms, andOf(kids...))
		}
	}
	for _, b := range m.bonds {
		q.bonds = append(q.bonds, qbond{a: int(b.a), b: int(b.b), mask: bondMask(&qbexpr{op: 'p', kind: 'x', ord: b.order})})
	}
	q.nAtomsT = len(q.atoms)
	q.compile()
	return q
}
