package chem

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits that keep the reader's time and memory bounded on any input.
const (
	// MaxSMILESLength is the longest input ParseSMILES accepts.
	MaxSMILESLength = 10000
	// MaxBranchDepth is the deepest nesting of parentheses accepted.
	MaxBranchDepth = 256
	// maxRingNumber bounds %(nnnnn) ring-closure numbers.
	maxRingNumber = 99999
)

// ParseError reports why a SMILES string was rejected and where.
type ParseError struct {
	Pos    int    // 0-based byte offset in the input
	Reason string // human-readable reason
}

// Error formats the error as "smiles: position N: reason".
func (e *ParseError) Error() string {
	return fmt.Sprintf("smiles: position %d: %s", e.Pos, e.Reason)
}

func perr(pos int, format string, args ...any) *ParseError {
	return &ParseError{Pos: pos, Reason: fmt.Sprintf(format, args...)}
}

type ringOpen struct {
	num    int32 // ring-closure number
	atom   int32
	order  BondOrder // 0 if unspecified
	dir    byte
	pos    int32 // offset of the ring-closure digit(s)
	bondAt int32
}

type smilesParser struct {
	s     string
	i     int
	atoms []atom
	bonds []bond
	rings []ringOpen // open ring closures (few: a linear search beats a map)
}

// ParseSMILES reads an OpenSMILES string and returns the sanitised
// molecule (implicit hydrogens, kekulisation, ring perception and
// aromaticity as RDKit does them). Any rejection is a *ParseError naming
// the 0-based character offset and the reason.
func ParseSMILES(s string) (*Mol, error) {
	m, err := parseGraph(s)
	if err != nil {
		return nil, err
	}
	if err := m.sanitize(); err != nil {
		return nil, err
	}
	return m, nil
}

// parseGraph builds the raw graph (no valence or aromaticity processing).
func parseGraph(s string) (*Mol, error) {
	if len(s) == 0 {
		return nil, perr(0, "empty SMILES")
	}
	if len(s) > MaxSMILESLength {
		return nil, perr(MaxSMILESLength, "SMILES longer than %d characters", MaxSMILESLength)
	}
	// no more atoms or bonds than characters: one allocation each for ordinary input
	c := min(len(s), 256)
	// The open ring closures live in pooled scratch: a buffer on the stack
	// would move to the heap (the parser's slices leave with the molecule).
	rings := openRingPool.get()
	p := &smilesParser{s: s, atoms: make([]atom, 0, c), bonds: make([]bond, 0, c), rings: (*rings)[:0]}
	err := p.parse()
	*rings = p.rings[:0]
	openRingPool.put(rings)
	if err != nil {
		return nil, err
	}
	m := &Mol{atoms: p.atoms, bonds: p.bonds, smiles: s}
	m.buildAdjacency()
	return m, nil
}

var openRingPool scratchPool[[]ringOpen]

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *smilesParser) parse() error {
	s := p.s
	prev := -1 // atom the next atom bonds to
	var pendOrder BondOrder
	var pendDir byte
	pendPos := -1 // position of a pending bond symbol, -1 if none
	type branch struct{ atom, pos int }
	var stackBuf [16]branch
	stack := stackBuf[:0]
	afterDot := false
	dotPos := -1
	for p.i < len(s) {
		c := s[p.i]
		switch {
		case c == '(':
			if prev < 0 {
				return perr(p.i, "branch opened before any atom")
			}
			if pendPos >= 0 {
				return perr(pendPos, "bond symbol before '('")
			}
			if len(stack) >= MaxBranchDepth {
				return perr(p.i, "branches nested deeper than %d", MaxBranchDepth)
			}
			stack = append(stack, branch{prev, p.i})
			p.i++
			if p.i < len(s) && s[p.i] == ')' {
				return perr(p.i-1, "empty branch")
			}
		case c == ')':
			if len(stack) == 0 {
				return perr(p.i, "')' without matching '('")
			}
			if pendPos >= 0 {
				return perr(pendPos, "bond symbol without an atom after it")
			}
			if afterDot {
				return perr(dotPos, "'.' without an atom after it")
			}
			prev = stack[len(stack)-1].atom
			stack = stack[:len(stack)-1]
			p.i++
		case c == '.':
			if prev < 0 || afterDot {
				return perr(p.i, "'.' without an atom before it")
			}
			if pendPos >= 0 {
				return perr(pendPos, "bond symbol before '.'")
			}
			afterDot, dotPos = true, p.i
			prev = -1
			p.i++
		case c == '-' || c == '=' || c == '#' || c == '$' || c == ':' || c == '/' || c == '\\':
			if pendPos >= 0 {
				return perr(p.i, "two bond symbols in a row")
			}
			if prev < 0 {
				if afterDot {
					return perr(p.i, "bond symbol after '.'")
				}
				return perr(p.i, "bond symbol before any atom")
			}
			pendOrder, pendDir = bondSymbol(c)
			pendPos = p.i
			p.i++
		case isDigit(c) || c == '%':
			if prev < 0 {
				return perr(p.i, "ring-closure digit before any atom")
			}
			pos := p.i
			num, err := p.ringNumber()
			if err != nil {
				return err
			}
			if err := p.ringClosure(prev, num, pos, pendOrder, pendDir, pendPos); err != nil {
				return err
			}
			pendOrder, pendDir, pendPos = 0, 0, -1
		default:
			pos := p.i
			// the atom is read in place: in wasm a zeroed local struct and
			// its copy are loops of memmove calls
			idx := len(p.atoms)
			if idx < cap(p.atoms) {
				p.atoms = p.atoms[:idx+1] // zero: the slice is fresh and only grows
			} else {
				p.atoms = append(p.atoms, atom{})
			}
			a := &p.atoms[idx]
			var err error
			if c == '[' {
				err = p.bracketAtom(a)
			} else if o := organicOne[c]; o != 0 && (p.i+1 >= len(s) || !isLowerOrganicFollow(s[p.i+1])) {
				// a one-letter organic atom, read here: organicAtom
				// would do the same in a call (costly in a wasm module)
				a.z, a.arom = o&0x7f, o&0x80 != 0
				p.i++
			} else {
				err = p.organicAtom(a)
			}
			if err != nil {
				return err
			}
			a.pos = int32(pos)
			if prev >= 0 {
				bp := pos
				if pendPos >= 0 {
					bp = pendPos
				}
				if err := p.addBond(prev, idx, pendOrder, pendDir, bp); err != nil {
					return err
				}
			}
			pendOrder, pendDir, pendPos = 0, 0, -1
			prev = idx
			afterDot = false
		}
	}
	if pendPos >= 0 {
		return perr(pendPos, "bond symbol at end of input")
	}
	if afterDot {
		return perr(dotPos, "'.' at end of input")
	}
	if len(stack) > 0 {
		return perr(stack[len(stack)-1].pos, "branch opened here is not closed")
	}
	if len(p.rings) > 0 {
		first := -1
		num := 0
		for _, r := range p.rings {
			if first < 0 || int(r.pos) < first {
				first, num = int(r.pos), int(r.num)
			}
		}
		return perr(first, "ring closure %d not closed", num)
	}
	return nil
}

func bondSymbol(c byte) (BondOrder, byte) {
	switch c {
	case '-':
		return BondSingle, 0
	case '=':
		return BondDouble, 0
	case '#':
		return BondTriple, 0
	case '$':
		return BondQuadruple, 0
	case ':':
		return BondAromatic, 0
	case '/', '\\':
		return BondSingle, c
	}
	return 0, 0
}

func (p *smilesParser) ringNumber() (int, error) {
	s := p.s
	if s[p.i] != '%' {
		n := int(s[p.i] - '0')
		p.i++
		return n, nil
	}
	start := p.i
	p.i++
	if p.i < len(s) && s[p.i] == '(' {
		p.i++
		j := p.i
		for p.i < len(s) && isDigit(s[p.i]) && p.i-j < 6 {
			p.i++
		}
		if p.i == j || p.i >= len(s) || s[p.i] != ')' {
			return 0, perr(start, "malformed ring-closure number after '%%('")
		}
		n, _ := strconv.Atoi(s[j:p.i])
		p.i++
		if n > maxRingNumber {
			return 0, perr(start, "ring-closure number %d too large", n)
		}
		return n, nil
	}
	if p.i+1 >= len(s) || !isDigit(s[p.i]) || !isDigit(s[p.i+1]) {
		return 0, perr(start, "'%%' must be followed by two digits")
	}
	n := int(s[p.i]-'0')*10 + int(s[p.i+1]-'0')
	p.i += 2
	return n, nil
}

func (p *smilesParser) ringClosure(at, num, pos int, order BondOrder, dir byte, bondPos int) error {
	k := -1
	for q := range p.rings {
		if int(p.rings[q].num) == num {
			k = q
			break
		}
	}
	if k < 0 {
		if len(p.rings) >= 1000 {
			return perr(pos, "too many open ring closures")
		}
		bp := int32(pos)
		if bondPos >= 0 {
			bp = int32(bondPos)
		}
		p.rings = append(p.rings, ringOpen{num: int32(num), atom: int32(at), order: order, dir: dir, pos: int32(pos), bondAt: bp})
		return nil
	}
	r := p.rings[k]
	p.rings[k] = p.rings[len(p.rings)-1]
	p.rings = p.rings[:len(p.rings)-1]
	if int(r.atom) == at {
		return perr(pos, "ring closure %d bonds an atom to itself", num)
	}
	if order != 0 && r.order != 0 && order != r.order {
		return perr(pos, "ring closure %d has conflicting bond symbols", num)
	}
	if order == 0 {
		order, dir = r.order, r.dir
	}
	bp := pos
	if bondPos >= 0 {
		bp = bondPos
	}
	a := int(r.atom)
	for i := range p.bonds {
		x := &p.bonds[i]
		if (int(x.a) == a && int(x.b) == at) || (int(x.a) == at && int(x.b) == a) {
			return perr(pos, "ring closure %d duplicates an existing bond", num)
		}
	}
	return p.addBond(a, at, order, dir, bp)
}

// addBond appends a bond; an unspecified bond between two aromatic atoms is
// aromatic, otherwise single (as RDKit reads SMILES).
func (p *smilesParser) addBond(a, b int, order BondOrder, dir byte, pos int) error {
	if order == 0 {
		if p.atoms[a].arom && p.atoms[b].arom {
			order = BondAromatic
		} else {
			order = BondSingle
		}
	}
	p.bonds = append(p.bonds, bond{a: int32(a), b: int32(b), order: order, arom: order == BondAromatic, dir: dir, pos: int32(pos)})
	return nil
}

// organic subset: B C N O P S F Cl Br I, aromatic b c n o p s, and '*'.
// organicAtom reads an organic-subset atom into a (zero on entry).
func (p *smilesParser) organicAtom(a *atom) error {
	s := p.s
	c := s[p.i]
	if c >= 'A' && c <= 'Z' && p.i+1 < len(s) && s[p.i+1] >= 'a' && s[p.i+1] <= 'z' &&
		!strings.ContainsRune("bcnops", rune(s[p.i+1])) && s[p.i:p.i+2] != "Cl" && s[p.i:p.i+2] != "Br" {
		if _, ok := symbolToZ[s[p.i:p.i+2]]; ok {
			return perr(p.i, "element %s must be written in brackets ([%s])", s[p.i:p.i+2], s[p.i:p.i+2])
		}
	}
	switch c {
	case 'B':
		if p.i+1 < len(s) && s[p.i+1] == 'r' {
			a.z = 35
			p.i += 2
			return nil
		}
		a.z = 5
	case 'C':
		if p.i+1 < len(s) && s[p.i+1] == 'l' {
			a.z = 17
			p.i += 2
			return nil
		}
		a.z = 6
	case 'N':
		a.z = 7
	case 'O':
		a.z = 8
	case 'P':
		a.z = 15
	case 'S':
		a.z = 16
	case 'F':
		a.z = 9
	case 'I':
		a.z = 53
	case 'b':
		a.z, a.arom = 5, true
	case 'c':
		a.z, a.arom = 6, true
	case 'n':
		a.z, a.arom = 7, true
	case 'o':
		a.z, a.arom = 8, true
	case 'p':
		a.z, a.arom = 15, true
	case 's':
		a.z, a.arom = 16, true
	case '*':
		a.z = 0
	default:
		if c >= 'A' && c <= 'Z' {
			j := p.i + 1
			if j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
				j++
			}
			if _, ok := symbolToZ[s[p.i:j]]; ok {
				return perr(p.i, "element %s must be written in brackets ([%s])", s[p.i:j], s[p.i:j])
			}
			return perr(p.i, "unknown element symbol %q", s[p.i:j])
		}
		return perr(p.i, "unexpected character %q", c)
	}
	p.i++
	return nil
}

// organicOne maps the one-letter symbols of the organic subset to their
// atomic number, with bit 7 set for the aromatic ones; 0 for anything else
// ('*', atomic number 0, takes organicAtom's path).
var organicOne = [256]uint8{
	'B': 5, 'C': 6, 'N': 7, 'O': 8, 'P': 15, 'S': 16, 'F': 9, 'I': 53,
	'b': 0x80 | 5, 'c': 0x80 | 6, 'n': 0x80 | 7, 'o': 0x80 | 8, 'p': 0x80 | 15, 's': 0x80 | 16,
}

// isLowerOrganicFollow reports whether c, after a one-letter organic atom,
// may make a two-letter symbol with it (Cl, Br, or an element that must be
// bracketed): a lower-case letter other than the aromatic atoms.
func isLowerOrganicFollow(c byte) bool {
	return c >= 'a' && c <= 'z' && c != 'b' && c != 'c' && c != 'n' && c != 'o' && c != 'p' && c != 's'
}

var aromaticBracket = map[string]uint8{"b": 5, "c": 6, "n": 7, "o": 8, "p": 15, "s": 16, "se": 34, "as": 33, "te": 52, "si": 14}

func (p *smilesParser) bracketAtom(a *atom) error {
	s := p.s
	open := p.i
	p.i++ // '['
	a.bracket, a.noImplicit = true, true
	// isotope
	j := p.i
	for p.i < len(s) && isDigit(s[p.i]) {
		p.i++
	}
	if p.i > j {
		if p.i-j > 4 {
			return perr(j, "isotope number too large")
		}
		iso, _ := strconv.Atoi(s[j:p.i])
		a.isotope = uint16(iso)
	}
	if p.i >= len(s) {
		return perr(open, "bracket atom not closed")
	}
	// element symbol
	symPos := p.i
	c := s[p.i]
	switch {
	case c == '*':
		a.z = 0
		p.i++
	case c >= 'A' && c <= 'Z':
		if p.i+1 < len(s) && s[p.i+1] >= 'a' && s[p.i+1] <= 'z' {
			if z, ok := symbolToZ[s[p.i:p.i+2]]; ok {
				a.z = uint8(z)
				p.i += 2
				break
			}
		}
		z, ok := symbolToZ[s[p.i:p.i+1]]
		if !ok {
			end := p.i + 1
			if end < len(s) && s[end] >= 'a' && s[end] <= 'z' {
				end++
			}
			return perr(symPos, "unknown element symbol %q", s[p.i:end])
		}
		a.z = uint8(z)
		p.i++
	case c >= 'a' && c <= 'z':
		if p.i+1 < len(s) {
			if z, ok := aromaticBracket[s[p.i:p.i+2]]; ok {
				a.z, a.arom = z, true
				p.i += 2
				break
			}
		}
		z, ok := aromaticBracket[s[p.i:p.i+1]]
		if !ok {
			return perr(symPos, "unknown aromatic element symbol %q", s[p.i:p.i+1])
		}
		a.z, a.arom = z, true
		p.i++
	default:
		if c == ']' {
			return perr(symPos, "bracket atom without element symbol")
		}
		return perr(symPos, "unexpected character %q in bracket atom", c)
	}
	// chirality
	if p.i < len(s) && s[p.i] == '@' {
		cs := p.i
		p.i++
		if p.i < len(s) && s[p.i] == '@' {
			p.i++
			a.chiral = ChiralCW
		} else if p.i+1 < len(s) && isChiralClass(s[p.i:p.i+2]) {
			p.i += 2
			k := p.i
			for p.i < len(s) && isDigit(s[p.i]) && p.i-k < 2 {
				p.i++
			}
			if p.i == k {
				return perr(cs, "chirality class %s needs a number", s[cs+1:cs+3])
			}
			a.chiral = ChiralOther
		} else {
			a.chiral = ChiralCCW
		}
		a.chiralAt, a.chiralLen = int32(cs), int32(p.i-cs)
	}
	// hydrogen count
	if p.i < len(s) && s[p.i] == 'H' {
		p.i++
		a.explicitH = 1
		if p.i < len(s) && isDigit(s[p.i]) {
			a.explicitH = s[p.i] - '0'
			p.i++
		}
	}
	// charge
	if p.i < len(s) && (s[p.i] == '+' || s[p.i] == '-') {
		sign := 1
		if s[p.i] == '-' {
			sign = -1
		}
		sym := s[p.i]
		p.i++
		n := 1
		if p.i < len(s) && isDigit(s[p.i]) {
			k := p.i
			for p.i < len(s) && isDigit(s[p.i]) && p.i-k < 2 {
				p.i++
			}
			n, _ = strconv.Atoi(s[k:p.i])
		} else {
			for p.i < len(s) && s[p.i] == sym && n < 15 {
				n++
				p.i++
			}
		}
		if n > 15 {
			return perr(p.i-1, "formal charge too large")
		}
		a.charge = int8(sign * n)
	}
	// atom class
	if p.i < len(s) && s[p.i] == ':' {
		p.i++
		k := p.i
		for p.i < len(s) && isDigit(s[p.i]) && p.i-k < 9 {
			p.i++
		}
		if p.i == k {
			return perr(k-1, "atom class ':' needs a number")
		}
		cl, _ := strconv.Atoi(s[k:p.i])
		a.class = int32(cl)
	}
	if p.i >= len(s) {
		return perr(open, "bracket atom not closed")
	}
	if s[p.i] != ']' {
		return perr(p.i, "unexpected character %q in bracket atom", s[p.i])
	}
	p.i++
	return nil
}

func isChiralClass(t string) bool {
	switch t {
	case "TH", "AL", "SP", "TB", "OH":
		return true
	}
	return false
}
