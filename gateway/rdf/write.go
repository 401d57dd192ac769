package rdf

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteTurtle writes the graph as Turtle (W3C RDF 1.1 Turtle): prefixes,
// then each subject with its predicates separated by ";" and objects by ",".
func (g *Graph) WriteTurtle(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, p := range g.Prefixes {
		fmt.Fprintf(bw, "@prefix %s: <%s> .\n", p.Name, p.NS)
	}
	for _, gr := range g.groups() {
		bw.WriteString("\n")
		bw.WriteString(g.turtleTerm(gr.s))
		for i, po := range gr.preds {
			if i > 0 {
				bw.WriteString(" ;")
			}
			bw.WriteString("\n    ")
			if po.p == Type {
				bw.WriteString("a")
			} else {
				bw.WriteString(g.turtleTerm(po.p))
			}
			for j, o := range po.objs {
				if j > 0 {
					bw.WriteString(" ,\n       ")
				}
				bw.WriteString(" ")
				bw.WriteString(g.turtleTerm(o))
			}
		}
		bw.WriteString(" .\n")
	}
	return bw.Flush()
}

func (g *Graph) turtleIRI(iri string) string {
	if p, l, ok := g.split(iri); ok {
		return p + ":" + l
	}
	return "<" + iri + ">" // IRI() removed what IRIREF excludes
}

func (g *Graph) turtleTerm(t Term) string {
	switch t.Kind {
	case KindIRI:
		return g.turtleIRI(t.Value)
	case KindBlank:
		return "_:" + t.Value
	}
	s := `"` + turtleEscape(t.Value) + `"`
	switch {
	case t.Lang != "":
		s += "@" + t.Lang
	case t.Datatype != "":
		s += "^^" + g.turtleIRI(t.Datatype)
	}
	return s
}

// turtleEscape escapes a string for a "..." literal (ECHAR and UCHAR).
func turtleEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7F {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// WriteRDFXML writes the graph as RDF/XML: one rdf:Description per subject,
// one property element per triple.
func (g *Graph) WriteRDFXML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n<rdf:RDF")
	for _, p := range g.Prefixes {
		fmt.Fprintf(bw, "\n    xmlns:%s=\"%s\"", p.Name, xmlEscape(p.NS, true))
	}
	bw.WriteString(">\n")
	for _, gr := range g.groups() {
		if gr.s.Kind == KindBlank {
			fmt.Fprintf(bw, "  <rdf:Description rdf:nodeID=\"%s\">\n", gr.s.Value)
		} else {
			fmt.Fprintf(bw, "  <rdf:Description rdf:about=\"%s\">\n", xmlEscape(gr.s.Value, true))
		}
		for _, po := range gr.preds {
			name, decl, err := g.xmlName(po.p.Value)
			if err != nil {
				return err
			}
			for _, o := range po.objs {
				fmt.Fprintf(bw, "    <%s%s", name, decl)
				switch o.Kind {
				case KindIRI:
					fmt.Fprintf(bw, " rdf:resource=\"%s\"/>\n", xmlEscape(o.Value, true))
				case KindBlank:
					fmt.Fprintf(bw, " rdf:nodeID=\"%s\"/>\n", o.Value)
				default:
					switch {
					case o.Lang != "":
						fmt.Fprintf(bw, " xml:lang=\"%s\"", xmlEscape(o.Lang, true))
					case o.Datatype != "":
						fmt.Fprintf(bw, " rdf:datatype=\"%s\"", xmlEscape(o.Datatype, true))
					}
					fmt.Fprintf(bw, ">%s</%s>\n", xmlEscape(o.Value, false), name)
				}
			}
		}
		bw.WriteString("  </rdf:Description>\n")
	}
	bw.WriteString("</rdf:RDF>\n")
	return bw.Flush()
}

// xmlName is a property element's qualified name, with a namespace
// declaration for the element when no bound prefix fits.
func (g *Graph) xmlName(iri string) (name, decl string, err error) {
	if p, l, ok := g.split(iri); ok {
		return p + ":" + l, "", nil
	}
	i := strings.LastIndexAny(iri, "#/")
	if i < 0 || !simpleLocal(iri[i+1:]) {
		return "", "", fmt.Errorf("rdf: predicate %q has no XML name", iri)
	}
	return "ns0:" + iri[i+1:], fmt.Sprintf(" xmlns:ns0=\"%s\"", xmlEscape(iri[:i+1], true)), nil
}

// xmlEscape escapes text content or an attribute value. Carriage returns
// and, in attributes, tabs and newlines are character references so that
// XML's end-of-line and attribute normalisation keep them.
func xmlEscape(s string, attr bool) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			if attr {
				b.WriteString("&quot;")
			} else {
				b.WriteRune(r)
			}
		case '\r':
			b.WriteString("&#13;")
		case '\n', '\t':
			if attr {
				fmt.Fprintf(&b, "&#%d;", r)
			} else {
				b.WriteRune(r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// WriteJSONLD writes the graph as JSON-LD 1.1: a context of the prefixes and
// a @graph of node objects, every value an explicit value or node object
// (so no coercion rule of the context is needed to read it back).
func (g *Graph) WriteJSONLD(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("{\n  \"@context\": {")
	for i, p := range g.Prefixes {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    ")
		jsonString(bw, p.Name)
		bw.WriteString(": ")
		jsonString(bw, p.NS)
	}
	bw.WriteString("\n  },\n  \"@graph\": [")
	for i, gr := range g.groups() {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    {\"@id\": ")
		jsonString(bw, g.jsonldID(gr.s))
		for _, po := range gr.preds {
			bw.WriteString(",\n      ")
			if po.p == Type {
				bw.WriteString("\"@type\": [")
				n := 0
				for _, o := range po.objs {
					if o.Kind != KindIRI {
						continue
					}
					if n > 0 {
						bw.WriteString(", ")
					}
					jsonString(bw, g.jsonldIRI(o.Value))
					n++
				}
				bw.WriteString("]")
				continue
			}
			jsonString(bw, g.jsonldIRI(po.p.Value))
			bw.WriteString(": [")
			for j, o := range po.objs {
				if j > 0 {
					bw.WriteString(", ")
				}
				switch o.Kind {
				case KindIRI, KindBlank:
					bw.WriteString("{\"@id\": ")
					jsonString(bw, g.jsonldID(o))
				default:
					bw.WriteString("{\"@value\": ")
					jsonString(bw, o.Value)
					switch {
					case o.Lang != "":
						bw.WriteString(", \"@language\": ")
						jsonString(bw, o.Lang)
					case o.Datatype != "":
						bw.WriteString(", \"@type\": ")
						jsonString(bw, g.jsonldIRI(o.Datatype))
					}
				}
				bw.WriteString("}")
			}
			bw.WriteString("]")
		}
		bw.WriteString("}")
	}
	bw.WriteString("\n  ]\n}\n")
	return bw.Flush()
}

// jsonString writes s as a JSON string: quote, backslash and control
// characters escaped (U+2028 and U+2029 too, for readers that treat the
// text as JavaScript); s is valid UTF-8 (terms are cleaned when built).
func jsonString(w *bufio.Writer, s string) {
	const hex = "0123456789abcdef"
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != 0xE2 {
			i++
			continue
		}
		if c == 0xE2 {
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
				w.WriteString(s[start:i])
				w.WriteString("\\u202")
				w.WriteByte(hex[s[i+2]&0xF])
				i += 3
				start = i
				continue
			}
			i++
			continue
		}
		w.WriteString(s[start:i])
		switch c {
		case '"':
			w.WriteString(`\"`)
		case '\\':
			w.WriteString(`\\`)
		case '\n':
			w.WriteString(`\n`)
		case '\r':
			w.WriteString(`\r`)
		case '\t':
			w.WriteString(`\t`)
		default:
			w.WriteString(`\u00`)
			w.WriteByte(hex[c>>4])
			w.WriteByte(hex[c&0xF])
		}
		i++
		start = i
	}
	w.WriteString(s[start:])
	w.WriteByte('"')
}

// jsonldIRI is a compact IRI for keys and types, else the full IRI.
func (g *Graph) jsonldIRI(iri string) string {
	if p, l, ok := g.split(iri); ok {
		return p + ":" + l
	}
	return iri
}

// jsonldID is a node's @id: the full IRI (never compacted, so that an IRI
// whose scheme looks like a prefix cannot be misread) or _:label.
func (g *Graph) jsonldID(t Term) string {
	if t.Kind == KindBlank {
		return "_:" + t.Value
	}
	return t.Value
}
