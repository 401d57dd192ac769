// Package rdf holds a small RDF graph and writes it as Turtle, RDF/XML and
// JSON-LD. Terms are made valid when they are built (IRI, Literal), so the
// three serialisations always carry the same triples; see RATIONALE.md.
package rdf

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Kind is the kind of an RDF term.
type Kind uint8

// The kinds of terms.
const (
	KindIRI Kind = iota + 1
	KindBlank
	KindLiteral
)

// Term is an IRI, a blank node or a literal.
type Term struct {
	Kind     Kind
	Value    string // the IRI, the blank node's label or the literal's text
	Lang     string // a literal's language tag
	Datatype string // a literal's datatype IRI (empty: xsd:string)
}

// Triple is one statement.
type Triple struct{ S, P, O Term }

// Well-known namespaces.
const (
	NSRDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	NSXSD = "http://www.w3.org/2001/XMLSchema#"
)

// Type is rdf:type.
var Type = IRI(NSRDF + "type")

// IRI is an IRI term. Characters that an IRI may not hold (spaces, controls,
// <>"{}|^`\) are percent-encoded, as a browser does with a typed URL.
func IRI(s string) Term {
	return Term{Kind: KindIRI, Value: cleanIRI(s)}
}

// Blank is a blank node with the given label (letters, digits and _ only;
// anything else is replaced by _).
func Blank(label string) Term {
	b := []byte(label)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' {
		b = append([]byte("b"), b...)
	}
	return Term{Kind: KindBlank, Value: string(b)}
}

// Literal is a plain string literal.
func Literal(s string) Term { return Term{Kind: KindLiteral, Value: cleanText(s)} }

// Typed is a literal of the datatype dt (an IRI).
func Typed(s, dt string) Term {
	if dt == NSXSD+"string" {
		dt = ""
	}
	return Term{Kind: KindLiteral, Value: cleanText(s), Datatype: dt}
}

// LangString is a literal with a language tag.
func LangString(s, lang string) Term {
	return Term{Kind: KindLiteral, Value: cleanText(s), Lang: lang}
}

// cleanText replaces what XML 1.0 cannot carry (controls other than tab,
// newline and carriage return, U+FFFE, U+FFFF, invalid UTF-8) by U+FFFD, so
// that a literal reads the same in every serialisation.
func cleanText(s string) string {
	ok := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !xmlChar(r) || r == utf8.RuneError && n == 1 {
			ok = false
			break
		}
		i += n
	}
	if ok {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !xmlChar(r) || r == utf8.RuneError && n == 1 {
			r = utf8.RuneError
		}
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

func xmlChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

func cleanIRI(s string) string {
	s = cleanText(s)
	if !strings.ContainsFunc(s, badIRIRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if badIRIRune(r) {
			var buf [4]byte
			for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
				fmt.Fprintf(&b, "%%%02X", c)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// badIRIRune reports characters Turtle's IRIREF and RFC 3987 exclude.
func badIRIRune(r rune) bool {
	return r <= 0x20 || r == 0x7F || strings.ContainsRune("<>\"{}|^`\\", r) || r == utf8.RuneError
}

// Prefix binds a short name to a namespace IRI.
type Prefix struct{ Name, NS string }

// Graph is a list of triples with the prefixes its writers use.
type Graph struct {
	Prefixes []Prefix
	Triples  []Triple
	blanks   int
}

// NewGraph is an empty graph with prefixes (rdf and xsd are always bound).
func NewGraph(prefixes ...Prefix) *Graph {
	g := &Graph{Prefixes: []Prefix{{"rdf", NSRDF}, {"xsd", NSXSD}}}
	for _, p := range prefixes {
		if p.Name != "rdf" && p.Name != "xsd" {
			g.Prefixes = append(g.Prefixes, p)
		}
	}
	return g
}

// Add adds a triple.
func (g *Graph) Add(s, p, o Term) { g.Triples = append(g.Triples, Triple{s, p, o}) }

// NewBlank makes a blank node with a label unique in the graph.
func (g *Graph) NewBlank() Term {
	g.blanks++
	return Term{Kind: KindBlank, Value: fmt.Sprintf("b%d", g.blanks)}
}

// group is a subject with its predicates in order of first appearance.
type group struct {
	s     Term
	preds []predObjs
}

type predObjs struct {
	p    Term
	objs []Term
}

// groups orders the triples by subject, then predicate, each in order of
// first appearance, without duplicates.
func (g *Graph) groups() []*group {
	var out []*group
	bySubj := make(map[Term]*group, len(g.Triples)/4)
	for _, t := range g.Triples {
		gr := bySubj[t.S]
		if gr == nil {
			gr = &group{s: t.S}
			bySubj[t.S] = gr
			out = append(out, gr)
		}
		i := 0
		for i < len(gr.preds) && gr.preds[i].p != t.P {
			i++
		}
		if i == len(gr.preds) {
			gr.preds = append(gr.preds, predObjs{p: t.P})
		}
		if !slices.Contains(gr.preds[i].objs, t.O) { // a triple is in a graph once
			gr.preds[i].objs = append(gr.preds[i].objs, t.O)
		}
	}
	return out
}

// split cuts an IRI into a bound prefix and a local name that is safe in
// every syntax (a letter or _ then letters, digits, _ and -).
func (g *Graph) split(iri string) (prefix, local string, ok bool) {
	for _, p := range g.Prefixes {
		if strings.HasPrefix(iri, p.NS) {
			l := iri[len(p.NS):]
			if simpleLocal(l) {
				return p.Name, l, true
			}
		}
	}
	return "", "", false
}

func simpleLocal(l string) bool {
	if l == "" {
		return false
	}
	for i, c := range []byte(l) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}
