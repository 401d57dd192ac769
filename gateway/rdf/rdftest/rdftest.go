// Package rdftest parses RDF with a real RDF parser, Debian's python3-rdflib,
// for tests: Parse checks that documents in several syntaxes hold the same
// graph and returns its triples.
package rdftest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"toxgate/internal/testenv"
)

// Term is a parsed term: kind "iri", "blank" or "literal".
type Term struct {
	Kind     string `json:"kind"`
	Value    string `json:"value"`
	Lang     string `json:"lang"`
	Datatype string `json:"datatype"`
}

// Triple is a parsed triple.
type Triple [3]Term

// Graph is a parsed graph.
type Graph []Triple

// Doc is one serialisation: Format is rdflib's name (turtle, xml, json-ld).
type Doc struct {
	Format string
	Data   []byte
}

// python finds an interpreter that imports rdflib: python3 on the PATH,
// else Debian's /usr/bin/python3. Without one the test skips, or fails
// under CI (testenv; make ci-deps installs python3-rdflib).
func python(t testing.TB) string {
	t.Helper()
	return testenv.RequireTool(t, testenv.RDFLib)
}

// Parse parses every document with rdflib, fails the test unless they hold
// isomorphic graphs, and returns the triples of the first.
func Parse(t testing.TB, docs ...Doc) Graph {
	t.Helper()
	py := python(t)
	_, file, _, _ := runtime.Caller(0)
	args := []string{filepath.Join(filepath.Dir(file), "parse.py")}
	dir := t.TempDir()
	for i, d := range docs {
		p := filepath.Join(dir, "doc"+string(rune('a'+i)))
		if err := os.WriteFile(p, d.Data, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, d.Format+"="+p)
	}
	cmd := exec.Command(py, args...)
	var stderr []byte
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	if err != nil {
		t.Fatalf("rdflib: %v\n%s", err, stderr)
	}
	var g Graph
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatalf("rdflib output: %v", err)
	}
	return g
}

// Objects are the objects of (s, p).
func (g Graph) Objects(s, p string) []Term {
	var out []Term
	for _, t := range g {
		if t[0].Value == s && t[1].Value == p {
			out = append(out, t[2])
		}
	}
	return out
}

// Object is the only object of (s, p), or a zero Term.
func (g Graph) Object(s, p string) Term {
	if o := g.Objects(s, p); len(o) == 1 {
		return o[0]
	}
	return Term{}
}

// Subjects are the subjects with rdf:type class.
func (g Graph) Subjects(class string) []string {
	var out []string
	for _, t := range g {
		if t[1].Value == "http://www.w3.org/1999/02/22-rdf-syntax-ns#type" && t[2].Value == class {
			out = append(out, t[0].Value)
		}
	}
	return out
}
