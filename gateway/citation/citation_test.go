package citation

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"toxgate/gateway/dcat"
	"toxgate/internal/testenv"
)

func ptr(s string) *string { return &s }

// hostile is a dataset whose fields try to break out of every format.
func hostile() *dcat.Package {
	size := int64(1234)
	return &dcat.Package{
		ID: "0b7d7a9e-1111-4222-8333-944455556666", Name: "herg-screen",
		Title:        `hERG {screen} 50% & $x_1$ #2 \end{document} ~^`,
		Notes:        ptr("First line\nER  - \nTY  - JOUR\n@misc{evil, title={x}}"),
		Version:      ptr("2.1"),
		LicenseTitle: ptr("Creative Commons Attribution 4.0"), LicenseURL: "https://creativecommons.org/licenses/by/4.0/",
		MetadataCreated: "2026-03-04T05:06:07.123456",
		Tags:            []struct{ Name string }{{Name: "cardiotoxicity"}, {Name: "hERG"}},
		Extras: []struct{ Key, Value string }{
			{Key: "creators", Value: `[{"given":"Ana Maria","family":"Silva","orcid":"0000-0002-1825-0097","affiliation":"Univ. of Porto"},"Costa, Bruno",{"name":"ToxLab Consortium","organization":true}]`},
			{Key: "doi", Value: "https://doi.org/10.5281/zenodo.1234567"},
		},
		Resources: []dcat.Resource{{ID: "r1", Mimetype: ptr("text/csv"), Size: &size}},
	}
}

func hostileWork() Work {
	return FromPackage(hostile(), Site{Title: "ToxGate {Demo}", URL: "https://tox.example.org"}, nil)
}

func TestFromPackage(t *testing.T) {
	w := hostileWork()
	if w.DOI != "10.5281/zenodo.1234567" {
		t.Errorf("DOI %q", w.DOI)
	}
	if len(w.Creators) != 3 || w.Creators[0].Family != "Silva" || w.Creators[0].Given != "Ana Maria" ||
		w.Creators[0].ORCID != "0000-0002-1825-0097" || w.Creators[1].Family != "Costa" || !w.Creators[2].Organization {
		t.Errorf("creators %+v", w.Creators)
	}
	if w.Issued.Year() != 2026 || w.Version != "2.1" || w.URL != "https://tox.example.org/dataset/herg-screen" {
		t.Errorf("work %+v", w)
	}
	v := FromPackage(hostile(), Site{Title: "T", URL: "https://x"}, &Version{ID: "v-id", Name: "v2", Created: time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)})
	if v.Version != "v2" || v.Issued.Year() != 2027 || v.DOI != "" || v.DatasetURL != "https://x/dataset/herg-screen" || v.Key != "herg-screen_v2" {
		t.Errorf("version work %+v", v)
	}
	// Without creators the author, then the maintainer, then the organization.
	p := &dcat.Package{Name: "x", Author: ptr("A. Silva; B. Costa")}
	if c := FromPackage(p, Site{}, nil).Creators; len(c) != 2 || c[0].Family != "Silva" || c[1].Given != "B." {
		t.Errorf("author creators %+v", c)
	}
	p = &dcat.Package{Name: "x", Organization: &dcat.Organization{Title: "EFSA"}}
	if c := FromPackage(p, Site{}, nil).Creators; len(c) != 1 || !c[0].Organization || c[0].Name != "EFSA" {
		t.Errorf("organization creator %+v", c)
	}
}

func TestText(t *testing.T) {
	got := Text(hostileWork())
	want := "Silva, A. M.; Costa, B.; ToxLab Consortium (2026). hERG {screen} 50% & $x_1$ #2 \\end{document} ~^ (Version 2.1) [Data set]. ToxGate {Demo}. https://doi.org/10.5281/zenodo.1234567"
	if got != want {
		t.Errorf("text:\n got %s\nwant %s", got, want)
	}
}

// mods is what the tests read of bibutils' MODS output.
type mods struct {
	Items []struct {
		Titles []string `xml:"titleInfo>title"`
		Names  []struct {
			Parts []struct {
				Type  string `xml:"type,attr"`
				Value string `xml:",chardata"`
			} `xml:"namePart"`
		} `xml:"name"`
		Date string `xml:"originInfo>dateIssued"`
	} `xml:"mods"`
}

func bibutils(t *testing.T, prog string, in []byte) mods {
	t.Helper()
	dir := testenv.RequireTool(t, testenv.Bibutils)
	cmd := exec.Command(filepath.Join(dir, prog))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", prog, err, stderr.String())
	}
	var m mods
	if err := xml.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s output: %v\n%s", prog, err, out)
	}
	return m
}

// checkMODS asserts one record with the title, three creators and the year.
func checkMODS(t *testing.T, m mods, title string) {
	t.Helper()
	if len(m.Items) != 1 {
		t.Fatalf("%d records, want 1: %+v", len(m.Items), m)
	}
	it := m.Items[0]
	if len(it.Titles) == 0 || !strings.Contains(it.Titles[0], title) {
		t.Errorf("title %q, want it to hold %q", it.Titles, title)
	}
	if len(it.Names) < 3 {
		t.Fatalf("names %+v", it.Names)
	}
	var family []string
	for _, n := range it.Names {
		for _, p := range n.Parts {
			if p.Type == "family" || p.Type == "" {
				family = append(family, p.Value)
			}
		}
	}
	if !strings.Contains(strings.Join(family, "|"), "Silva") || !strings.Contains(strings.Join(family, "|"), "Costa") {
		t.Errorf("family names %q", family)
	}
	if !strings.HasPrefix(it.Date, "2026") {
		t.Errorf("date %q", it.Date)
	}
}

// A real BibTeX parser (bibutils' bib2xml) reads one entry with the title,
// the creators and the year, whatever the fields hold.
func TestBibTeXParses(t *testing.T) {
	checkMODS(t, bibutils(t, "bib2xml", BibTeX(hostileWork())), "hERG")
}

// A real RIS parser (bibutils' ris2xml) reads one record: the notes' line
// breaks cannot start tags of their own.
func TestRISParses(t *testing.T) {
	checkMODS(t, bibutils(t, "ris2xml", RIS(hostileWork())), "hERG {screen} 50% & $x_1$")
}

// A CSL processor (citeproc-py) formats the CSL-JSON in a citation style.
func TestCSLJSONFormats(t *testing.T) {
	py := testenv.RequireTool(t, testenv.CiteProc)
	f := filepath.Join(t.TempDir(), "item.json")
	if err := os.WriteFile(f, CSLJSON(hostileWork()), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `
import json, sys, os, citeproc
from citeproc import CitationStylesStyle, CitationStylesBibliography, Citation, CitationItem, formatter
from citeproc.source.json import CiteProcJSON
items = json.load(open(sys.argv[1]))
src = CiteProcJSON(items)
style = CitationStylesStyle(os.path.join(os.path.dirname(citeproc.__file__), 'data', 'styles', 'harvard1.csl'), validate=False)
bib = CitationStylesBibliography(style, src, formatter.plain)
bib.register(Citation([CitationItem(items[0]['id'])]))
for item in bib.bibliography():
    print(str(item))
`
	out, err := exec.Command(py, "-c", script, f).CombinedOutput()
	if err != nil {
		t.Fatalf("citeproc: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"Silva", "Costa", "2026", "hERG {screen}"} {
		if !strings.Contains(s, want) {
			t.Errorf("formatted citation %q lacks %q", s, want)
		}
	}
}

// The DataCite XML is valid against DataCite's kernel-4.6 XML Schema
// (xmllint), for a dataset and for a version without a DOI.
func TestDataCiteXMLValid(t *testing.T) {
	xmllint := testenv.RequireTool(t, testenv.XMLLint)
	xsd, _ := filepath.Abs("testdata/datacite/kernel-4.6/metadata.xsd")
	bare := FromPackage(&dcat.Package{Name: "bare"}, Site{URL: "https://x"}, &Version{Name: "v1"})
	for name, w := range map[string]Work{"full": hostileWork(), "bare version": bare} {
		f := filepath.Join(t.TempDir(), "dc.xml")
		if err := os.WriteFile(f, DataCiteXML(w), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, f).CombinedOutput(); err != nil {
			t.Errorf("%s: xmllint: %v\n%s\n%s", name, err, out, DataCiteXML(w))
		}
	}
}

// The DataCite JSON is valid against DataCite's JSON Schema.
func TestDataCiteJSONValid(t *testing.T) {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("testdata/datacite/datacite_4.3_schema.json")
	if err != nil {
		t.Fatal(err)
	}
	bare := FromPackage(&dcat.Package{Name: "bare"}, Site{URL: "https://x"}, nil)
	for name, w := range map[string]Work{"full": hostileWork(), "bare": bare} {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(DataCiteJSON(w)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: %v\n%s", name, err, DataCiteJSON(w))
		}
	}
	var d DataCite
	if err := json.Unmarshal(DataCiteJSON(hostileWork()), &d); err != nil || d.Identifiers[0].IdentifierType != "DOI" || d.Creators[0].NameIdentifiers[0].NameIdentifierScheme != "ORCID" {
		t.Errorf("datacite %+v %v", d, err)
	}
}

// The registration payload is DataCite's JSON:API document whose
// attributes, without the request-only doi, event and url, are valid
// DataCite metadata naming the DOI.
func TestDataCitePayload(t *testing.T) {
	r := &Registrar{Prefix: "10.5072"}
	doi := r.DOIFor("0B7D7A9E-1111", "v-2")
	if doi != "10.5072/toxgate-0b7d7a9e-1111-v-2" {
		t.Fatalf("DOI %q", doi)
	}
	body, err := Payload(hostileWork(), doi)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data struct {
			ID, Type   string
			Attributes map[string]any
		}
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	a := doc.Data.Attributes
	if doc.Data.ID != doi || doc.Data.Type != "dois" || a["doi"] != doi || a["event"] != "publish" || a["url"] != "https://tox.example.org/dataset/herg-screen" {
		t.Fatalf("payload %s", body)
	}
	delete(a, "doi")
	delete(a, "event")
	delete(a, "url")
	sch, err := jsonschema.NewCompiler().Compile("testdata/datacite/datacite_4.3_schema.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(a)
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err := sch.Validate(v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if ids := a["identifiers"].([]any); ids[0].(map[string]any)["identifier"] != doi {
		t.Fatalf("identifiers %v", ids)
	}
}
