package rdf_test

import (
	"bytes"
	"testing"

	"toxgate/gateway/rdf"
	"toxgate/gateway/rdf/rdftest"
)

// serialise writes g in the three syntaxes and parses them with rdflib.
func serialise(t *testing.T, g *rdf.Graph) rdftest.Graph {
	t.Helper()
	var ttl, xml, jsonld bytes.Buffer
	if err := g.WriteTurtle(&ttl); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteRDFXML(&xml); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteJSONLD(&jsonld); err != nil {
		t.Fatal(err)
	}
	return rdftest.Parse(t, rdftest.Doc{Format: "turtle", Data: ttl.Bytes()},
		rdftest.Doc{Format: "xml", Data: xml.Bytes()}, rdftest.Doc{Format: "json-ld", Data: jsonld.Bytes()})
}

// TestHostileTextRoundTrips writes literals and IRIs holding every character
// class that needs escaping in one of the syntaxes and checks that rdflib
// reads the same values from Turtle, RDF/XML and JSON-LD.
func TestHostileTextRoundTrips(t *testing.T) {
	const ex = "http://example.org/ns#"
	g := rdf.NewGraph(rdf.Prefix{Name: "ex", NS: ex})
	s := rdf.IRI("http://example.org/dataset/a b<c>\"{d}|^`\\e")
	texts := []string{
		`quote " backslash \ apostrophe ' triple """ end`,
		"lines\nand\r\nreturns\tand tabs",
		"<script>alert(1)</script> & &amp; ]]> <![CDATA[ x ]]>",
		"unicode: é 中文 🧪 \u2028 \u2029",
		"controls: \x00\x01\x1f\x7f\ufffe end",
		"@prefix ex: <http://evil/> . ex:a ex:b ex:c .",
		"",
	}
	for _, tx := range texts {
		g.Add(s, rdf.IRI(ex+"text"), rdf.Literal(tx))
	}
	g.Add(s, rdf.IRI(ex+"lang"), rdf.LangString("Zellviabilität", "de"))
	g.Add(s, rdf.IRI(ex+"size"), rdf.Typed("12345", rdf.NSXSD+"nonNegativeInteger"))
	b := g.NewBlank()
	g.Add(s, rdf.IRI(ex+"checksum"), b)
	g.Add(b, rdf.Type, rdf.IRI(ex+"Checksum"))
	g.Add(b, rdf.IRI("http://other.example/vocab/value"), rdf.Typed("ab01", rdf.NSXSD+"hexBinary"))
	g.Add(s, rdf.Type, rdf.IRI("http://other.example/vocab/Thing"))
	g.Add(s, rdf.IRI(ex+"page"), rdf.IRI("https://example.org/page?q=1&r=2#frag"))

	parsed := serialise(t, g)
	sIRI := "http://example.org/dataset/a%20b%3Cc%3E%22%7Bd%7D%7C%5E%60%5Ce"
	got := map[string]bool{}
	for _, o := range parsed.Objects(sIRI, ex+"text") {
		got[o.Value] = true
	}
	for _, tx := range texts {
		want := tx
		if tx == texts[4] {
			want = "controls: \ufffd\ufffd\ufffd\x7f\ufffd end"
		}
		if !got[want] {
			t.Errorf("literal %q not read back; got %v", want, got)
		}
	}
	if o := parsed.Object(sIRI, ex+"lang"); o.Value != "Zellviabilität" || o.Lang != "de" {
		t.Errorf("language literal: %+v", o)
	}
	if o := parsed.Object(sIRI, ex+"size"); o.Value != "12345" || o.Datatype != rdf.NSXSD+"nonNegativeInteger" {
		t.Errorf("typed literal: %+v", o)
	}
	cs := parsed.Object(sIRI, ex+"checksum")
	if cs.Kind != "blank" || parsed.Object(cs.Value, "http://other.example/vocab/value").Value != "ab01" {
		t.Errorf("blank node: %+v", cs)
	}
	if o := parsed.Object(sIRI, ex+"page"); o.Value != "https://example.org/page?q=1&r=2#frag" {
		t.Errorf("IRI object: %+v", o)
	}
	if len(parsed) != len(texts)+7 {
		t.Errorf("%d triples, want %d", len(parsed), len(texts)+7)
	}
}
