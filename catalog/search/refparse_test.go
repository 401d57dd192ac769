package search

import "strings"

// A plain recursive descent parser of Parse's grammar, without its bounds
// (it recurses once per prefix operator and per parenthesis): the
// reference of FuzzParseQuery and TestParseMatchesReference. On queries
// within the bounds Parse gives its tree, up to chains of negations
// (both are compared through normalizeRef).

type refParser struct {
	toks []token
	pos  int
	src  string
}

func refParse(s string) (node, error) {
	toks, err := refLex(s)
	if err != nil {
		return nil, err
	}
	p := &refParser{toks: toks, src: s}
	n, err := p.expr("")
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, &Error{Message: "Cannot parse '" + s + "': unexpected ')'"}
	}
	return n, nil
}

func (p *refParser) peekWord(w string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == tWord && p.toks[p.pos].field == "" && !p.toks[p.pos].colon && p.toks[p.pos].text == w
}

func (p *refParser) expr(field string) (node, error) {
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

func (p *refParser) and(field string) (node, error) {
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
		return nil, &Error{Message: "Cannot parse '" + p.src + "': Encountered \"<EOF>\""}
	}
	if len(ands) == 1 {
		return ands[0], nil
	}
	return ands, nil
}

func (p *refParser) unary(field string) (node, error) {
	t := p.toks[p.pos]
	if t.kind == tWord && t.field == "" && !t.colon && (t.text == "NOT" || t.text == "-" || t.text == "!") {
		p.pos++
		if p.pos >= len(p.toks) {
			return nil, &Error{Message: "Cannot parse '" + p.src + "': Encountered \"<EOF>\""}
		}
		n, err := p.unary(field)
		return notNode{n}, err
	}
	if t.kind == tWord && t.field == "" && !t.colon && t.text == "+" {
		// "+(a OR b)": a required clause, as "(a OR b)" in a query of ANDs
		p.pos++
		if p.pos >= len(p.toks) {
			return nil, &Error{Message: "Cannot parse '" + p.src + "': Encountered \"<EOF>\""}
		}
		return p.unary(field)
	}
	if t.kind == tWord && len(t.text)+len(t.field) > 0 {
		lead := t.field
		if lead == "" {
			lead = t.text
		}
		if lead[0] == '-' || lead[0] == '+' || lead[0] == '!' {
			neg := lead[0] != '+'
			if t.field != "" {
				p.toks[p.pos].field = t.field[1:]
			} else {
				p.toks[p.pos].text = t.text[1:]
			}
			n, err := p.unary(field)
			if err != nil {
				return nil, err
			}
			if neg {
				return notNode{n}, nil
			}
			return n, nil
		}
	}
	return p.primary(field)
}

func (p *refParser) primary(field string) (node, error) {
	t := p.toks[p.pos]
	p.pos++
	switch t.kind {
	case tOpen:
		n, err := p.expr(field)
		if err != nil {
			return nil, err
		}
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != tClose {
			return nil, &Error{Message: "Cannot parse '" + p.src + "': missing ')'"}
		}
		p.pos++
		return n, nil
	case tQuoted:
		return termNode{field: field, value: t.text, phrase: true}, nil
	case tRange:
		return rangeNode(field, t.text, p.src)
	case tClose:
		return nil, &Error{Message: "Cannot parse '" + p.src + "': unexpected ')'"}
	}
	if t.field != "" {
		if t.colon {
			if p.pos >= len(p.toks) {
				return nil, &Error{Message: "Cannot parse '" + p.src + "': Encountered \"<EOF>\""}
			}
			return p.primary(t.field)
		}
		return termNode{field: t.field, value: t.text}, nil
	}
	return termNode{field: field, value: t.text}, nil
}

// refLex is the lexer of the reference parser: words and quoted values
// built byte by byte.
func refLex(s string) ([]token, error) {
	var out []token
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
			var b strings.Builder
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
				j++
			}
			if j >= len(s) {
				return nil, &Error{Message: "Cannot parse '" + s + "': Lexical error: unterminated quoted string"}
			}
			out = append(out, token{kind: tQuoted, text: b.String()})
			i = j + 1
		case c == '[' || c == '{':
			j := strings.IndexAny(s[i:], "]}")
			if j < 0 {
				return nil, &Error{Message: "Cannot parse '" + s + "': unterminated range"}
			}
			out = append(out, token{kind: tRange, text: s[i+1 : i+j]})
			i += j + 1
		default:
			var b strings.Builder
			field := ""
			colon := false
			for i < len(s) {
				c := s[i]
				if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')' || (c == '"' && b.Len() == 0 && field == "") {
					break
				}
				if c == '\\' && i+1 < len(s) {
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				if c == ':' && field == "" && !colon {
					field = b.String()
					b.Reset()
					i++
					if i >= len(s) || s[i] == ' ' || s[i] == '(' || s[i] == '"' || s[i] == '[' || s[i] == '{' {
						colon = true
						break
					}
					continue
				}
				b.WriteByte(c)
				i++
			}
			out = append(out, token{kind: tWord, text: b.String(), field: field, colon: colon})
		}
	}
	return out, nil
}

// normalizeRef folds n's chains of notNodes as negate does (also through
// parentheses, where Parse keeps one notNode per level).
func normalizeRef(n node) node {
	switch x := n.(type) {
	case andNode:
		out := make(andNode, len(x))
		for i, c := range x {
			out[i] = normalizeRef(c)
		}
		return out
	case orNode:
		out := make(orNode, len(x))
		for i, c := range x {
			out[i] = normalizeRef(c)
		}
		return out
	case notNode:
		k := 0
		for {
			inner, ok := n.(notNode)
			if !ok {
				break
			}
			k++
			n = inner.n
		}
		return negate(normalizeRef(n), k)
	}
	return n
}
