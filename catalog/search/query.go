package search

import (
	"path"
	"strconv"
	"strings"
	"time"
)

// Error is a malformed query, sort or filter.
type Error struct {
	// Message says what is wrong.
	Message string
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

// TextFields are matched by tokens rather than by exact value.
var TextFields = map[string]bool{"text": true, "title": true, "notes": true, "res_name": true, "res_description": true}

// node is a parsed Lucene expression.
type node interface {
	match(d *Doc) bool
	terms(acc []string) []string
}

type andNode []node
type orNode []node
type notNode struct{ n node }

type termNode struct {
	field   string // "" means text
	value   string
	phrase  bool
	lo, hi  string // range bounds when isRange
	isRange bool
}

func (a andNode) match(d *Doc) bool {
	for _, n := range a {
		if !n.match(d) {
			return false
		}
	}
	return true
}

func (a andNode) terms(acc []string) []string {
	for _, n := range a {
		acc = n.terms(acc)
	}
	return acc
}

func (o orNode) match(d *Doc) bool {
	for _, n := range o {
		if n.match(d) {
			return true
		}
	}
	return false
}

func (o orNode) terms(acc []string) []string {
	for _, n := range o {
		acc = n.terms(acc)
	}
	return acc
}

func (n notNode) match(d *Doc) bool           { return !n.n.match(d) }
func (n notNode) terms(acc []string) []string { return acc }

func (t termNode) terms(acc []string) []string {
	if t.field == "" || t.field == "text" || TextFields[t.field] {
		return append(acc, Tokens(t.value)...)
	}
	return acc
}

func (t termNode) match(d *Doc) bool {
	if t.isRange {
		for _, v := range d.values(t.field) {
			if (t.lo == "*" || v >= t.lo) && (t.hi == "*" || v <= t.hi) {
				return true
			}
		}
		return false
	}
	if t.value == "*" && !t.phrase {
		if t.field == "" {
			return true
		}
		return len(d.values(t.field)) > 0
	}
	wild := !t.phrase && strings.ContainsAny(t.value, "*?")
	if t.field == "" || t.field == "text" {
		if wild {
			return anyToken(d, t.value)
		}
		return hasAll(d, Tokens(t.value))
	}
	values := d.values(t.field)
	if TextFields[t.field] {
		want := Tokens(t.value)
		for _, v := range values {
			if containsAll(Tokens(v), want) {
				return true
			}
		}
		return false
	}
	for _, v := range values {
		if wild {
			if ok, _ := path.Match(t.value, v); ok {
				return true
			}
		} else if v == t.value {
			return true
		}
	}
	return false
}

func anyToken(d *Doc, pattern string) bool {
	pattern = strings.ToLower(pattern)
	return d.eachToken(func(tok string) bool {
		ok, _ := path.Match(pattern, tok)
		return ok
	})
}

func containsAll(have, want []string) bool {
	if len(want) == 0 {
		return false
	}
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// token kinds of the lexer.
const (
	tWord = iota
	tQuoted
	tRange
	tOpen
	tClose
)

type token struct {
	kind  int
	text  string
	field string // for words written field:value
	colon bool   // word ended with ':' (value follows as next token)
}

func lex(s string) ([]token, error) {
	out := make([]token, 0, 8)
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			out = append(out, token{kind: tOpen})
			i++
		case c == ')':
			out = append(out, token{kind: tClose})
			i++
		case c == '"':
			j := i + 1
			var b []byte // the text when it has escapes (else a slice of s)
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					if b == nil {
						b = append(make([]byte, 0, len(s)-i), s[i+1:j]...)
					}
					j++
				}
				if b != nil {
					b = append(b, s[j])
				}
				j++
			}
			if j >= len(s) {
				return nil, &Error{Message: "Cannot parse '" + s + "': Lexical error: unterminated quoted string"}
			}
			text := s[i+1 : j]
			if b != nil {
				text = string(b)
			}
			out = append(out, token{kind: tQuoted, text: text})
			i = j + 1
		case c == '[' || c == '{':
			j := strings.IndexAny(s[i:], "]}")
			if j < 0 {
				return nil, &Error{Message: "Cannot parse '" + s + "': unterminated range"}
			}
			out = append(out, token{kind: tRange, text: s[i+1 : i+j]})
			i += j + 1
		default:
			var t token
			t, i = lexWord(s, i)
			out = append(out, t)
		}
	}
	return out, nil
}

// lexWord reads the word at s[i]: its text, with "field:" split off (the
// value then follows in the same word, or, with colon set, as the next
// token), backslash escapes resolved. It returns the token and the index
// after it. Words without escapes are slices of s.
func lexWord(s string, i int) (token, int) {
	var b []byte // the current part when it has escapes (else s[seg:i])
	seg := i
	part := func() string {
		if b != nil {
			return string(b)
		}
		return s[seg:i]
	}
	field := ""
	colon := false
	for i < len(s) {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')' || (c == '"' && field == "" && (b == nil && i == seg || b != nil && len(b) == 0)) {
			break
		}
		if c == '\\' && i+1 < len(s) {
			if b == nil {
				b = append(make([]byte, 0, len(s)-seg), s[seg:i]...)
			}
			b = append(b, s[i+1])
			i += 2
			continue
		}
		if c == ':' && field == "" {
			field = part()
			b = nil
			i++
			seg = i
			if i >= len(s) || s[i] == ' ' || s[i] == '(' || s[i] == '"' || s[i] == '[' || s[i] == '{' {
				colon = true
				break
			}
			continue
		}
		if b != nil {
			b = append(b, c)
		}
		i++
	}
	return token{kind: tWord, text: part(), field: field, colon: colon}, i
}

type parser struct {
	toks  []token
	pos   int
	src   string
	depth int     // parentheses open at pos
	left  *budget // the search's clauses and wildcards still allowed
}

// Parse parses a Lucene-style query: field:value terms, quoted values,
// ranges [a TO b], groups, AND/OR/NOT, +required and -negated terms. Terms
// are ANDed by default (CKAN sets q.op=AND). It works in time and memory
// linear in len(s) and refuses (with an *Error) a query longer than
// MaxQueryBytes, nesting parentheses deeper than MaxDepth, or holding more
// than MaxClauses terms or MaxWildcards wildcard terms.
func Parse(s string) (node, error) {
	return parse(s, newBudget())
}

// parse is Parse spending from left, the budget of a whole search.
func parse(s string, left *budget) (node, error) {
	if err := checkLength("query", s); err != nil {
		return nil, err
	}
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, src: s, left: left}
	n, err := p.expr("")
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, &Error{Message: "Cannot parse '" + s + "': unexpected ')'"}
	}
	return n, nil
}

func (p *parser) peekWord(w string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == tWord && p.toks[p.pos].field == "" && !p.toks[p.pos].colon && p.toks[p.pos].text == w
}

// eof is the error of a query that ends where a term is due.
func (p *parser) eof() error {
	return &Error{Message: "Cannot parse '" + p.src + "': Encountered \"<EOF>\""}
}

func (p *parser) expr(field string) (node, error) {
	var ors orNode
	for {
		a, err := p.and(field)
		if err != nil {
			return nil, err
		}
		ors = append(ors, a)
		if !p.peekWord("OR") {
			break
		}
		p.pos++
	}
	if len(ors) == 1 {
		return ors[0], nil
	}
	return ors, nil
}

func (p *parser) and(field string) (node, error) {
	var ands andNode
	for p.pos < len(p.toks) && p.toks[p.pos].kind != tClose && !p.peekWord("OR") {
		if p.peekWord("AND") {
			p.pos++
			continue
		}
		n, err := p.unary(field)
		if err != nil {
			return nil, err
		}
		ands = append(ands, n)
	}
	if len(ands) == 0 {
		return nil, p.eof()
	}
	if len(ands) == 1 {
		return ands[0], nil
	}
	return ands, nil
}

// unary reads the prefix operators before a term or group in a loop:
// the words NOT, -, ! and + and the characters -, ! and + leading a word
// ("-tags:x", "--x"). Each -, ! and NOT negates; + leaves the clause as it
// is ("+(a OR b)" is "(a OR b)" in a query of ANDs).
func (p *parser) unary(field string) (node, error) {
	negations := 0
	for {
		t := &p.toks[p.pos]
		if t.kind != tWord {
			break
		}
		if t.field == "" && !t.colon && (t.text == "NOT" || t.text == "-" || t.text == "!" || t.text == "+") {
			if t.text != "+" {
				negations++
			}
			p.pos++
			if p.pos >= len(p.toks) {
				return nil, p.eof()
			}
			continue
		}
		lead := t.field
		if lead == "" {
			lead = t.text
		}
		if lead == "" || (lead[0] != '-' && lead[0] != '+' && lead[0] != '!') {
			break
		}
		if lead[0] != '+' {
			negations++
		}
		if t.field != "" {
			t.field = t.field[1:]
		} else {
			t.text = t.text[1:]
		}
	}
	n, err := p.primary(field)
	if err != nil {
		return nil, err
	}
	return negate(n, negations), nil
}

// negate is n under k negations: at most two notNodes, which match and
// give terms as k of them would (no terms under a negation).
func negate(n node, k int) node {
	switch {
	case k == 0:
		return n
	case k%2 == 1:
		return notNode{n}
	}
	return notNode{notNode{n}}
}

// primary reads a group, a phrase, a range or a word; "field: value"
// (a field with the value in the next token, itself maybe "field2: ...")
// is followed in a loop, the innermost field applying.
func (p *parser) primary(field string) (node, error) {
	for {
		t := p.toks[p.pos]
		p.pos++
		switch t.kind {
		case tOpen:
			if p.depth >= MaxDepth {
				return nil, &Error{Message: "query nests parentheses more than " + strconv.Itoa(MaxDepth) + " deep"}
			}
			p.depth++
			n, err := p.expr(field)
			p.depth--
			if err != nil {
				return nil, err
			}
			if p.pos >= len(p.toks) || p.toks[p.pos].kind != tClose {
				return nil, &Error{Message: "Cannot parse '" + p.src + "': missing ')'"}
			}
			p.pos++
			return n, nil
		case tQuoted:
			return p.term(termNode{field: field, value: t.text, phrase: true})
		case tRange:
			n, err := rangeNode(field, t.text, p.src)
			if err != nil {
				return nil, err
			}
			return n, p.left.spend(1, false)
		case tClose:
			return nil, &Error{Message: "Cannot parse '" + p.src + "': unexpected ')'"}
		}
		if t.field != "" {
			if t.colon {
				if p.pos >= len(p.toks) {
					return nil, p.eof()
				}
				field = t.field
				continue
			}
			return p.term(termNode{field: t.field, value: t.text})
		}
		return p.term(termNode{field: field, value: t.text})
	}
}

// term spends t's cost from the search's budget and returns it.
func (p *parser) term(t termNode) (node, error) {
	n := 1
	if tokenized(t.field) {
		n = max(tokenCount(t.value), 1)
	}
	wild := !t.phrase && t.value != "*" && strings.ContainsAny(t.value, "*?")
	if err := p.left.spend(n, wild); err != nil {
		return nil, err
	}
	return t, nil
}

func rangeNode(field, body, src string) (node, error) {
	parts := strings.Fields(body)
	if len(parts) != 3 || parts[1] != "TO" {
		return nil, &Error{Message: "Cannot parse '" + src + "': bad range"}
	}
	return termNode{field: field, isRange: true, lo: rangeBound(parts[0]), hi: rangeBound(parts[2])}, nil
}

func rangeBound(s string) string {
	if strings.HasPrefix(s, "NOW") {
		return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	return s
}
