package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"toxgate/gateway/harness"
	"toxgate/gateway/rdf/rdftest"
)

const schemaNS = "https://schema.org/"

// TestCitationsAndCroissant cites a dataset in every format through the
// real gateway, plugin and store, as the page, the paths and the
// dataset_citation action serve them; a private dataset is cited only to
// those who may read it; the Croissant description, parsed by rdflib,
// holds the dataset, its file and its DataStore table's fields.
func TestCitationsAndCroissant(t *testing.T) {
	g := harness.Start(t)
	admin := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": "tox-lab", "title": "Toxicology Lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	code, out := ckan(t, g, "package_create", admin, map[string]any{
		"name": "herg-screen", "title": "hERG {screen} & 50%", "owner_org": "tox-lab", "version": "2.1",
		"notes": "Patch clamp IC50\nof 40 drugs.", "license_id": "cc-by",
		"tags":   []any{map[string]any{"name": "cardiotoxicity"}},
		"extras": []any{map[string]any{"key": "creators", "value": `[{"given":"Ana","family":"Silva","orcid":"0000-0002-1825-0097"},"Costa, Bruno"]`}},
	})
	if code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}
	dsID := result(t, out)["id"].(string)
	code, out = ckan(t, g, "resource_create", admin, map[string]any{"package_id": dsID, "name": "IC50 table", "url": "https://example.org/ic50.csv", "format": "CSV"})
	if code != 200 {
		t.Fatalf("resource_create: %d %v", code, out)
	}
	resID := result(t, out)["id"].(string)
	if code, out := ckan(t, g, "datastore_create", admin, map[string]any{
		"resource_id": resID, "primary_key": "smiles", "force": true,
		"fields":  []any{map[string]any{"id": "smiles", "type": "text"}, map[string]any{"id": "blocker", "type": "int"}, map[string]any{"id": "ic50_um", "type": "float"}},
		"records": []any{map[string]any{"smiles": "CCO", "blocker": 0, "ic50_um": 300.5}},
	}); code != 200 {
		t.Fatalf("datastore_create: %d %v", code, out)
	}
	if code, out := ckan(t, g, "package_create", admin, map[string]any{"name": "secret", "owner_org": "tox-lab", "private": true, "author": "Eve Hidden"}); code != 200 {
		t.Fatalf("private package_create: %d %v", code, out)
	}

	// Each path serves its format, equal to the action's answer.
	auth := http.Header{"Authorization": {admin}}
	for _, c := range []struct{ path, format, mediaType, holds string }{
		{"citation.bib", "bibtex", "application/x-bibtex", `title = {{hERG \{screen\} \& 50\%}}`},
		{"citation.ris", "ris", "application/x-research-info-systems", "TY  - DATA\r\nAU  - Silva, Ana\r\nAU  - Costa, Bruno\r\n"},
		{"citation.json", "csl-json", "application/vnd.citationstyles.csl+json", `"family": "Silva"`},
		{"datacite.xml", "datacite-xml", "application/vnd.datacite.datacite+xml", `<nameIdentifier nameIdentifierScheme="ORCID" schemeURI="https://orcid.org">https://orcid.org/0000-0002-1825-0097</nameIdentifier>`},
		{"datacite.json", "datacite-json", "application/vnd.datacite.datacite+json", `"resourceTypeGeneral": "Dataset"`},
		{"citation.txt", "text", "text/plain", "Silva, A.; Costa, B. (20"},
	} {
		resp, body := fetch(t, g, http.MethodGet, g.URL+"/dataset/herg-screen/"+c.path, nil)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.mediaType) || !strings.Contains(string(body), c.holds) {
			t.Fatalf("GET %s: %d %s\n%s", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		code, out := ckan(t, g, "dataset_citation", "", map[string]any{"id": "herg-screen", "format": c.format})
		if code != 200 {
			t.Fatalf("dataset_citation %s: %d %v", c.format, code, out)
		}
		got := result(t, out)
		var text string
		if s, ok := got["citation"].(string); ok {
			text = s
		} else {
			b, _ := json.Marshal(got["citation"])
			var want any
			if err := json.Unmarshal(body, &want); err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
			w, _ := json.Marshal(want)
			if string(b) != string(w) {
				t.Fatalf("dataset_citation %s differs from %s:\n%s\n%s", c.format, c.path, b, w)
			}
			continue
		}
		if text != string(body) {
			t.Fatalf("dataset_citation %s differs from %s:\n%q\n%q", c.format, c.path, text, body)
		}
	}

	// Bad arguments are clear errors; a private dataset is not found for
	// anonymous callers and cited for its readers.
	if resp, body := fetch(t, g, http.MethodGet, g.URL+"/dataset/herg-screen/citation?format=mla", nil); resp.StatusCode != 400 || !strings.Contains(string(body), "bibtex") {
		t.Fatalf("unknown format: %d %s", resp.StatusCode, body)
	}
	if code, out := ckan(t, g, "dataset_citation", "", map[string]any{"id": "herg-screen", "format": "mla"}); code != 409 {
		t.Fatalf("dataset_citation format=mla: %d %v", code, out)
	}
	if code, out := ckan(t, g, "dataset_citation", "", map[string]any{}); code != 409 {
		t.Fatalf("dataset_citation without id: %d %v", code, out)
	}
	if resp, body := fetch(t, g, http.MethodGet, g.URL+"/dataset/secret/citation.bib", nil); resp.StatusCode != 404 || strings.Contains(string(body), "Hidden") {
		t.Fatalf("anonymous private citation: %d %s", resp.StatusCode, body)
	}
	if code, out := ckan(t, g, "dataset_citation", "", map[string]any{"id": "secret"}); code != 404 {
		t.Fatalf("anonymous dataset_citation of a private dataset: %d %v", code, out)
	}
	if resp, body := fetch(t, g, http.MethodGet, g.URL+"/dataset/secret/citation.bib", auth); resp.StatusCode != 200 || !strings.Contains(string(body), "Hidden, Eve") {
		t.Fatalf("sysadmin private citation: %d %s", resp.StatusCode, body)
	}
	if resp, _ := fetch(t, g, http.MethodGet, g.URL+"/dataset/secret/croissant.jsonld", nil); resp.StatusCode != 404 {
		t.Fatalf("anonymous private croissant: %d", resp.StatusCode)
	}

	// The page shows the citation and links the formats.
	resp, page := fetch(t, g, http.MethodGet, g.URL+"/dataset/herg-screen", http.Header{"Accept": {"text/html"}})
	if resp.StatusCode != 200 || !strings.Contains(string(page), `id="citation-text">Silva, A.; Costa, B.`) ||
		!strings.Contains(string(page), `href="/dataset/herg-screen/citation.bib"`) || !strings.Contains(string(page), `href="/dataset/herg-screen/croissant.jsonld"`) {
		t.Fatalf("dataset page: %d\n%s", resp.StatusCode, page)
	}

	// Croissant, parsed as JSON-LD by rdflib.
	doc := getRDF(t, g, "/dataset/herg-screen/croissant.jsonld", nil, "application/ld+json")
	gr := rdftest.Parse(t, rdftest.Doc{Format: "json-ld", Data: doc})
	ds := gr.Subjects(schemaNS + "Dataset")
	if len(ds) != 1 {
		t.Fatalf("croissant datasets %v\n%s", ds, doc)
	}
	if o := gr.Object(ds[0], "http://purl.org/dc/terms/conformsTo"); o.Value != "http://mlcommons.org/croissant/1.0" {
		t.Fatalf("conformsTo %+v", o)
	}
	if o := gr.Object(ds[0], schemaNS+"name"); o.Value != "hERG {screen} & 50%" {
		t.Fatalf("name %+v", o)
	}
	if o := gr.Object(ds[0], "http://mlcommons.org/croissant/citeAs"); !strings.Contains(o.Value, "@misc{herg-screen") {
		t.Fatalf("citeAs %+v", o)
	}
	if fo := gr.Subjects("http://mlcommons.org/croissant/FileObject"); len(fo) != 1 || gr.Object(fo[0], schemaNS+"contentUrl").Value != "https://example.org/ic50.csv" {
		t.Fatalf("file objects %v", fo)
	}
	types := map[string]string{}
	for _, f := range gr.Subjects("http://mlcommons.org/croissant/Field") {
		types[gr.Object(f, schemaNS+"name").Value] = gr.Object(f, "http://mlcommons.org/croissant/dataType").Value
	}
	want := map[string]string{"smiles": schemaNS + "Text", "blocker": schemaNS + "Integer", "ic50_um": schemaNS + "Float"}
	for k, v := range want {
		if types[k] != v {
			t.Fatalf("croissant fields %v, want %v\n%s", types, want, doc)
		}
	}
	if rs := gr.Subjects("http://mlcommons.org/croissant/RecordSet"); len(rs) != 1 {
		t.Fatalf("record sets %v", rs)
	}
}

// TestDOIRegistrationRefusals: dataset_doi_register says when it is off,
// and with datacite.* set it is for editors of public datasets only; its
// call to DataCite goes through the egress policy (a loopback API is
// refused before a packet is sent). No DataCite system is reachable from
// the tests, so a registration itself is not run here.
func TestDOIRegistrationRefusals(t *testing.T) {
	off := harness.Start(t)
	if code, out := ckan(t, off, "dataset_doi_register", adminToken(t, off), map[string]any{"id": "x"}); code != 400 ||
		!strings.Contains(strings.Join(strings.Fields(jsonString(out)), " "), "datacite.repository_id") {
		t.Fatalf("registration off: %d %v", code, out)
	}

	g := harness.Start(t, harness.WithEnv("TOXGATE_DATACITE_REPOSITORY_ID=TOX.GATE", "TOXGATE_DATACITE_PASSWORD=pw",
		"TOXGATE_DATACITE_PREFIX=10.5072", "TOXGATE_DATACITE_API_URL=http://127.0.0.1:9"))
	admin := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": "lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	for _, d := range []map[string]any{{"name": "open", "owner_org": "lab", "author": "Ana Silva"}, {"name": "closed", "owner_org": "lab", "private": true}} {
		if code, out := ckan(t, g, "package_create", admin, d); code != 200 {
			t.Fatalf("package_create: %d %v", code, out)
		}
	}
	provision(t, g, admin, "reader", "reader-pass-1", true)
	reader := tokenFor(t, g, admin, "reader", nil)
	for _, c := range []struct {
		who, token, id string
		status         int
		holds          string
	}{
		{"anonymous", "", "open", 403, ""},
		{"a user who is not an editor", reader, "open", 403, ""},
		{"an editor, private dataset", admin, "closed", 409, "private"},
		{"an editor, unknown dataset", admin, "nope", 404, ""},
		{"an editor, DataCite on loopback", admin, "open", 502, "10.5072/toxgate-"},
	} {
		code, out := ckan(t, g, "dataset_doi_register", c.token, map[string]any{"id": c.id})
		if code != c.status || !strings.Contains(jsonString(out), c.holds) {
			t.Errorf("%s: %d %v, want %d holding %q", c.who, code, out, c.status, c.holds)
		}
	}
	// Nothing was recorded by the refused registration.
	_, out := ckan(t, g, "package_show", admin, map[string]any{"id": "open"})
	if strings.Contains(jsonString(out), "10.5072") {
		t.Fatalf("a refused registration left a DOI: %v", out)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestVersionCitations: a version is cited as it was frozen (its title,
// its name as the version, its date, IsVersionOf the dataset), through
// every form and Croissant, while the dataset has changed since; DCAT
// links the dataset to its versions.
func TestVersionCitations(t *testing.T) {
	g := harness.Start(t)
	admin := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": "lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	code, out := ckan(t, g, "package_create", admin, map[string]any{"name": "ames", "title": "Ames test 2026", "owner_org": "lab", "author": "Ana Silva"})
	if code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}
	dsID := result(t, out)["id"].(string)
	code, out = ckan(t, g, "dataset_version_create", admin, map[string]any{"dataset": "ames", "name": "v1", "description": "first release"})
	if code != 200 {
		t.Fatalf("dataset_version_create: %d %v", code, out)
	}
	verID := result(t, out)["id"].(string)
	if code, out := ckan(t, g, "package_patch", admin, map[string]any{"id": "ames", "title": "Ames test, revised"}); code != 200 {
		t.Fatalf("package_patch: %d %v", code, out)
	}

	resp, body := fetch(t, g, http.MethodGet, g.URL+"/dataset/ames/citation.bib?version=v1", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "title = {{Ames test 2026}}") || !strings.Contains(string(body), "version = {v1}") ||
		!strings.Contains(string(body), "@misc{ames_v1,") || !strings.Contains(string(body), "/dataset/ames?version=v1") {
		t.Fatalf("version BibTeX: %d\n%s", resp.StatusCode, body)
	}
	if _, now := fetch(t, g, http.MethodGet, g.URL+"/dataset/ames/citation.bib", nil); !strings.Contains(string(now), "Ames test, revised") {
		t.Fatalf("current BibTeX:\n%s", now)
	}
	_, dc := fetch(t, g, http.MethodGet, g.URL+"/dataset/ames/datacite.json?version="+verID, nil)
	if !strings.Contains(string(dc), `"relationType": "IsVersionOf"`) || !strings.Contains(string(dc), `"version": "v1"`) {
		t.Fatalf("version DataCite JSON:\n%s", dc)
	}
	if resp, body := fetch(t, g, http.MethodGet, g.URL+"/dataset/ames/citation.ris?version=v9", nil); resp.StatusCode != 404 {
		t.Fatalf("unknown version: %d %s", resp.StatusCode, body)
	}
	doc := getRDF(t, g, "/dataset/ames/croissant.jsonld?version=v1", nil, "application/ld+json")
	gr := rdftest.Parse(t, rdftest.Doc{Format: "json-ld", Data: doc})
	ds := gr.Subjects(schemaNS + "Dataset")
	if len(ds) != 1 || gr.Object(ds[0], schemaNS+"version").Value != "v1" || gr.Object(ds[0], schemaNS+"name").Value != "Ames test 2026" {
		t.Fatalf("version croissant:\n%s", doc)
	}

	// DCAT: the dataset has its version.
	ttl := getRDF(t, g, "/dataset/ames.ttl", nil, "text/turtle")
	dg := rdftest.Parse(t, rdftest.Doc{Format: "turtle", Data: ttl})
	vs := dg.Objects(g.URL+"/dataset/"+dsID, dcatNS+"hasVersion")
	if len(vs) != 1 || dg.Object(vs[0].Value, dcatNS+"version").Value != "v1" || dg.Object(vs[0].Value, dcatNS+"isVersionOf").Value != g.URL+"/dataset/"+dsID {
		t.Fatalf("DCAT versions %v\n%s", vs, ttl)
	}
}
