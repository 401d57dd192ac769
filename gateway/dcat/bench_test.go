package dcat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"toxgate/gateway/rdf"
)

// samplePage is a package_search result of 100 datasets with 2 resources each.
func samplePage(b *testing.B) []byte {
	var res []map[string]any
	for i := range 100 {
		res = append(res, map[string]any{"id": fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), "name": fmt.Sprintf("ds-%d", i),
			"title": "Dataset", "notes": "Cell viability after 24 h", "license_url": "http://www.opendefinition.org/licenses/cc-by",
			"metadata_created": "2026-11-25T14:10:17.123456", "metadata_modified": "2026-11-25T14:10:17.123456",
			"maintainer": "Ana", "maintainer_email": "ana@example.org", "organization": map[string]any{"id": "o1", "name": "lab", "title": "Lab"},
			"tags": []any{map[string]any{"name": "liver"}, map[string]any{"name": "HepG2"}},
			"resources": []any{
				map[string]any{"id": fmt.Sprintf("r%d-1", i), "name": "Table", "url": "https://example.org/t.csv", "format": "CSV", "mimetype": "text/csv", "size": 1234,
					"hash": "sha256:" + fmt.Sprintf("%064x", i), "created": "2026-11-25T14:10:17.123456", "metadata_modified": "2026-11-25T14:10:17.123456"},
				map[string]any{"id": fmt.Sprintf("r%d-2", i), "name": "Protocol", "url": "https://example.org/p.pdf", "format": "PDF"}}})
	}
	out, err := json.Marshal(map[string]any{"count": 100, "results": res})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkCatalogPageInProcess decodes a page of 100 datasets, maps it to
// DCAT and writes it in each syntax, beside decoding alone (the baseline).
func BenchmarkCatalogPageInProcess(b *testing.B) {
	page := samplePage(b)
	decode := func() []Package {
		var res struct{ Results []Package }
		if err := json.Unmarshal(page, &res); err != nil {
			b.Fatal(err)
		}
		return res.Results
	}
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			decode()
		}
	})
	for _, f := range []format{turtle, jsonld, rdfxml} {
		b.Run(f.ext, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				pkgs := decode()
				g := rdf.NewGraph(prefixes...)
				g.Triples = make([]rdf.Triple, 0, 16+40*len(pkgs))
				m := &mapper{g: g, site: "http://127.0.0.1:8080"}
				for i := range pkgs {
					m.addDataset(&pkgs[i])
				}
				buf.Reset()
				if err := f.write(g, &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes")
		})
	}
}
