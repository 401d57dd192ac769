package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"toxgate/gateway/harness"
	"toxgate/gateway/rdf/rdftest"
)

const (
	dcatNS  = "http://www.w3.org/ns/dcat#"
	dctNS   = "http://purl.org/dc/terms/"
	hydraNS = "http://www.w3.org/ns/hydra/core#"
	spdxNS  = "http://spdx.org/rdf/terms#"
	xsdNS   = "http://www.w3.org/2001/XMLSchema#"
)

// rdfFormats are the catalog's path extensions with rdflib's parser names.
var rdfFormats = []struct{ ext, parser, mediaType string }{
	{"ttl", "turtle", "text/turtle"}, {"jsonld", "json-ld", "application/ld+json"}, {"xml", "xml", "application/rdf+xml"},
}

// getRDF GETs path and checks the status and media type.
func getRDF(t *testing.T, g *harness.Gateway, path string, h http.Header, wantType string) []byte {
	t.Helper()
	resp, body := fetch(t, g, http.MethodGet, g.URL+path, h)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), wantType) {
		t.Fatalf("GET %s: %d %s: %.400s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return body
}

// createDatasets makes n public datasets name-0..n-1 in org, 8 at a time.
func createDatasets(t *testing.T, g *harness.Gateway, token, org, name string, n int, extra func(i int) map[string]any) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			data := map[string]any{"name": fmt.Sprintf("%s-%d", name, i), "title": fmt.Sprintf("Dataset %d", i), "owner_org": org}
			if extra != nil {
				for k, v := range extra(i) {
					data[k] = v
				}
			}
			if code, out := ckanQuiet(g, "package_create", token, data); code != 200 {
				errs <- fmt.Errorf("package_create %d: %d %v", i, code, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestDCATEndpoints reads the catalog and a dataset as DCAT-AP in Turtle,
// JSON-LD and RDF/XML, each parsed by rdflib: Hydra paging, who sees what,
// filters, and a distribution's download URL, size, media type and checksum.
func TestDCATEndpoints(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_CATALOG_DCAT_PER_PAGE=5"))
	admin := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": "tox-lab", "title": "Toxicology Lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	createDatasets(t, g, admin, "tox-lab", "screen", 11, nil)
	code, out := ckan(t, g, "package_create", admin, map[string]any{
		"name": "hepatotox", "title": "Hepatotoxicity <screen> & \"more\"", "owner_org": "tox-lab",
		"notes": "Cell viability of HepG2\nafter 24 h.", "license_id": "cc-by", "version": "1.2",
		"maintainer": "Ana Silva", "maintainer_email": "ana@example.org",
		"tags": []any{map[string]any{"name": "liver"}, map[string]any{"name": "HepG2"}},
	})
	if code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}
	ds := result(t, out)
	dsID := ds["id"].(string)
	if code, out := ckan(t, g, "package_create", admin, map[string]any{"name": "secret", "owner_org": "tox-lab", "private": true}); code != 200 {
		t.Fatalf("private package_create: %d %v", code, out)
	}
	data := testBytes(70000, 3)
	code, up := uploadAction(t, g, admin, "resource_create", map[string]string{"package_id": dsID, "name": "Viability"}, "viability.csv", data)
	if code != 200 {
		t.Fatalf("resource_create: %d %v", code, up)
	}
	res := result(t, up)
	if code, out := ckan(t, g, "resource_create", admin, map[string]any{"package_id": dsID, "name": "Protocol", "url": "https://example.org/protocol.pdf", "format": "PDF"}); code != 200 {
		t.Fatalf("link resource_create: %d %v", code, out)
	}

	// The catalog, anonymous: 12 public datasets, 5 a page.
	for _, f := range rdfFormats {
		var pages []int
		for page := 1; page <= 3; page++ {
			path := fmt.Sprintf("/catalog.%s?page=%d", f.ext, page)
			gr := rdftest.Parse(t, rdftest.Doc{Format: f.parser, Data: getRDF(t, g, path, nil, f.mediaType)})
			pages = append(pages, len(gr.Subjects(dcatNS+"Dataset")))
			pc := gr.Subjects(hydraNS + "PagedCollection")
			if len(pc) != 1 || pc[0] != g.URL+path {
				t.Fatalf("%s: paged collection %v", path, pc)
			}
			if o := gr.Object(pc[0], hydraNS+"totalItems"); o.Value != "12" || o.Datatype != xsdNS+"integer" {
				t.Fatalf("%s: totalItems %+v", path, o)
			}
			next := gr.Objects(pc[0], hydraNS+"next")
			if page < 3 && (len(next) != 1 || next[0].Value != fmt.Sprintf("%s/catalog.%s?page=%d", g.URL, f.ext, page+1)) {
				t.Fatalf("%s: hydra:next %v", path, next)
			}
			if page == 3 && len(next) != 0 {
				t.Fatalf("%s: hydra:next on the last page: %v", path, next)
			}
			if o := gr.Object(pc[0], hydraNS+"last"); o.Value != fmt.Sprintf("%s/catalog.%s?page=3", g.URL, f.ext) {
				t.Fatalf("%s: hydra:last %+v", path, o)
			}
			cat := gr.Subjects(dcatNS + "Catalog")
			if len(cat) != 1 || len(gr.Objects(cat[0], dcatNS+"dataset")) != pages[len(pages)-1] {
				t.Fatalf("%s: catalog %v lists %d datasets", path, cat, len(gr.Objects(cat[0], dcatNS+"dataset")))
			}
		}
		if fmt.Sprint(pages) != "[5 5 2]" {
			t.Fatalf("%s: datasets per page %v, want [5 5 2]", f.ext, pages)
		}
	}
	// A sysadmin also sees the private dataset.
	gr := rdftest.Parse(t, rdftest.Doc{Format: "turtle", Data: getRDF(t, g, "/catalog.ttl", http.Header{"Authorization": {admin}}, "text/turtle")})
	if o := gr.Object(g.URL+"/catalog.ttl?page=1", hydraNS+"totalItems"); o.Value != "13" {
		t.Fatalf("sysadmin totalItems %+v", o)
	}
	// DCAT-AP's mandatory catalog publisher; HEAD answers the headers alone.
	if pub := gr.Object(g.URL+"/catalog", dctNS+"publisher"); pub.Value != g.URL+"/" ||
		gr.Object(pub.Value, "http://xmlns.com/foaf/0.1/name").Value == "" {
		t.Fatalf("catalog publisher %+v", pub)
	}
	if resp, body, err := g.Do(context.Background(), http.MethodHead, "/catalog.ttl", nil, nil); err != nil || resp.StatusCode != 200 ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/turtle") || len(body) != 0 {
		t.Fatalf("HEAD /catalog.ttl: %v %v %q", err, resp, body)
	}
	// Filters: q, fq, modified_since.
	for path, want := range map[string]string{
		"/catalog.ttl?q=hepatotoxicity":                                  "1",
		"/catalog.ttl?fq=tags:liver":                                     "1",
		"/catalog.ttl?modified_since=2000-01-01":                         "12",
		"/catalog.ttl?modified_since=2999-01-01":                         "0",
		"/catalog?format=ttl&q=screen":                                   "",
		"/catalog.ttl?fq=tags:liver&modified_since=2000-01-01T00:00:00Z": "1",
	} {
		gr := rdftest.Parse(t, rdftest.Doc{Format: "turtle", Data: getRDF(t, g, path, nil, "text/turtle")})
		pc := gr.Subjects(hydraNS + "PagedCollection")
		if len(pc) != 1 || want != "" && gr.Object(pc[0], hydraNS+"totalItems").Value != want {
			t.Fatalf("%s: %v totalItems %+v, want %s", path, pc, gr.Object(pc[0], hydraNS+"totalItems"), want)
		}
	}
	// Content negotiation on /catalog.
	getRDF(t, g, "/catalog", http.Header{"Accept": {"application/rdf+xml;q=0.9, application/ld+json"}}, "application/ld+json")
	for path, want := range map[string]int{
		"/catalog.ttl?page=0": 400, "/catalog.ttl?page=x": 400, "/catalog.ttl?page=4": 404,
		"/catalog.ttl?modified_since=yesterday": 400, "/catalog?format=csv": 400, "/dataset/secret.ttl": 404,
		"/dataset/no-such.jsonld": 404,
	} {
		if resp, body := fetch(t, g, http.MethodGet, g.URL+path, nil); resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d: %.300s", path, resp.StatusCode, want, body)
		}
	}
	if resp, _ := fetch(t, g, http.MethodGet, g.URL+"/catalog", http.Header{"Accept": {"text/html"}}); resp.StatusCode != 406 {
		t.Fatalf("/catalog for text/html only: %d", resp.StatusCode)
	}

	// One dataset in the three syntaxes: the same graph (rdflib checks).
	var docs []rdftest.Doc
	for _, f := range rdfFormats {
		docs = append(docs, rdftest.Doc{Format: f.parser, Data: getRDF(t, g, "/dataset/hepatotox."+f.ext, nil, f.mediaType)})
	}
	gr = rdftest.Parse(t, docs...)
	d := g.URL + "/dataset/" + dsID
	if s := gr.Subjects(dcatNS + "Dataset"); len(s) != 1 || s[0] != d {
		t.Fatalf("datasets %v", s)
	}
	for pred, want := range map[string]string{
		dctNS + "title": `Hepatotoxicity <screen> & "more"`, dctNS + "description": "Cell viability of HepG2\nafter 24 h.",
		dctNS + "identifier": dsID, dcatNS + "landingPage": g.URL + "/dataset/hepatotox",
		dctNS + "license": "http://www.opendefinition.org/licenses/cc-by", "http://www.w3.org/2002/07/owl#versionInfo": "1.2", dcatNS + "version": "1.2",
	} {
		if o := gr.Object(d, pred); o.Value != want {
			t.Errorf("%s: %+v, want %q", pred, o, want)
		}
	}
	if kw := gr.Objects(d, dcatNS+"keyword"); len(kw) != 2 {
		t.Errorf("keywords %v", kw)
	}
	if o := gr.Object(d, dctNS+"modified"); o.Datatype != xsdNS+"dateTime" {
		t.Errorf("modified %+v", o)
	}
	pub := gr.Object(d, dctNS+"publisher")
	if gr.Object(pub.Value, "http://xmlns.com/foaf/0.1/name").Value != "Toxicology Lab" {
		t.Errorf("publisher %+v", pub)
	}
	cp := gr.Object(d, dcatNS+"contactPoint")
	if gr.Object(cp.Value, "http://www.w3.org/2006/vcard/ns#fn").Value != "Ana Silva" ||
		gr.Object(cp.Value, "http://www.w3.org/2006/vcard/ns#hasEmail").Value != "mailto:ana@example.org" {
		t.Errorf("contact point %+v", cp)
	}
	dists := gr.Objects(d, dcatNS+"distribution")
	if len(dists) != 2 {
		t.Fatalf("distributions %v", dists)
	}
	dist := d + "/resource/" + res["id"].(string)
	if o := gr.Object(dist, dcatNS+"downloadURL"); o.Kind != "iri" || o.Value != res["url"] {
		t.Errorf("downloadURL %+v, want %v", o, res["url"])
	}
	if o := gr.Object(dist, dcatNS+"byteSize"); o.Value != fmt.Sprint(len(data)) || o.Datatype != xsdNS+"nonNegativeInteger" {
		t.Errorf("byteSize %+v", o)
	}
	if o := gr.Object(dist, dcatNS+"mediaType"); o.Value != "https://www.iana.org/assignments/media-types/text/csv" {
		t.Errorf("mediaType %+v", o)
	}
	cs := gr.Object(dist, spdxNS+"checksum")
	if gr.Object(cs.Value, spdxNS+"checksumValue").Value != sha(data) ||
		gr.Object(cs.Value, spdxNS+"algorithm").Value != spdxNS+"checksumAlgorithm_sha256" {
		t.Errorf("checksum %+v: %+v", cs, gr.Object(cs.Value, spdxNS+"checksumValue"))
	}
	// The downloadURL serves the bytes the checksum names.
	if resp, body := fetch(t, g, http.MethodGet, res["url"].(string), nil); resp.StatusCode != 200 || sha(body) != sha(data) {
		t.Errorf("download: %d", resp.StatusCode)
	}
	link := d + "/resource/"
	for _, o := range dists {
		if o.Value != dist {
			link = o.Value
		}
	}
	if o := gr.Object(link, dcatNS+"accessURL"); o.Value != "https://example.org/protocol.pdf" || len(gr.Objects(link, dcatNS+"downloadURL")) != 0 {
		t.Errorf("link distribution: %+v", o)
	}

	// The private dataset for its reader; Accept on the dataset page.
	getRDF(t, g, "/dataset/secret.xml", http.Header{"Authorization": {admin}}, "application/rdf+xml")
	getRDF(t, g, "/dataset/hepatotox", http.Header{"Accept": {"text/turtle"}}, "text/turtle")
	getRDF(t, g, "/dataset/hepatotox", http.Header{"Accept": {"text/html,application/xhtml+xml,*/*;q=0.8"}}, "text/html")
	// The pages advertise the RDF, as ckanext-dcat's templates do.
	if page := getRDF(t, g, "/dataset/hepatotox", nil, "text/html"); !strings.Contains(string(page), `<link rel="alternate" type="text/turtle" href="/dataset/hepatotox.ttl">`) {
		t.Errorf("dataset page without its RDF alternates")
	}
	if page := getRDF(t, g, "/dataset", nil, "text/html"); !strings.Contains(string(page), `<link rel="alternate" type="text/turtle" href="/catalog.ttl">`) {
		t.Errorf("dataset search without the catalog's RDF alternates")
	}
}

// ckanQuiet is ckan for goroutines: it reports failures in its result.
func ckanQuiet(g *harness.Gateway, action, token string, data map[string]any) (int, map[string]any) {
	b, _ := json.Marshal(data)
	h := http.Header{"Content-Type": {"application/json"}}
	if token != "" {
		h.Set("Authorization", token)
	}
	resp, body, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/"+action, h, b)
	if err != nil {
		return 0, map[string]any{"error": err.Error()}
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		return resp.StatusCode, map[string]any{"error": string(body)}
	}
	return resp.StatusCode, out
}
