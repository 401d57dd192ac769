package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// BenchmarkDCATCatalogPage measures a full page of the DCAT catalog (100
// datasets with 2 distributions each) in each syntax against its baseline,
// the package_search of the same 100 datasets as CKAN JSON, requests taking
// turns in the same run, one at a time.
func BenchmarkDCATCatalogPage(b *testing.B) {
	g := harness.Start(b)
	admin := adminToken(b, g)
	if code, out := ckan(b, g, "organization_create", admin, map[string]any{"name": "tox-lab", "title": "Toxicology Lab"}); code != 200 {
		b.Fatalf("organization_create: %d %v", code, out)
	}
	for i := range 100 {
		code, out := ckan(b, g, "package_create", admin, map[string]any{"name": fmt.Sprintf("ds-%d", i), "owner_org": "tox-lab",
			"notes": "Cell viability after 24 h", "license_id": "cc-by", "maintainer": "Ana", "maintainer_email": "ana@example.org",
			"tags": []any{map[string]any{"name": "liver"}, map[string]any{"name": "HepG2"}},
			"resources": []any{
				map[string]any{"name": "Table", "url": "https://example.org/t.csv", "format": "CSV", "mimetype": "text/csv", "size": 1234, "hash": "sha256:" + sha([]byte{byte(i)})},
				map[string]any{"name": "Protocol", "url": "https://example.org/p.pdf", "format": "PDF"}}})
		if code != 200 {
			b.Fatalf("package_create: %d %v", code, out)
		}
	}
	get := func(path string) time.Duration {
		start := time.Now()
		resp, body := fetch(b, g, http.MethodGet, g.URL+path, nil)
		if resp.StatusCode != 200 || len(body) == 0 {
			b.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		return time.Since(start)
	}
	paths := []string{"/api/3/action/package_search?rows=100", "/catalog.ttl", "/catalog.jsonld", "/catalog.xml"}
	for _, p := range paths { // warm up
		get(p)
	}
	total := make([]time.Duration, len(paths))
	b.ResetTimer()
	for b.Loop() {
		for i, p := range paths {
			total[i] += get(p)
		}
	}
	n := float64(b.N)
	base := total[0].Seconds() / n
	b.ReportMetric(base*1000, "search_ms")
	for i, name := range []string{"ttl", "jsonld", "xml"} {
		v := total[i+1].Seconds() / n
		b.ReportMetric(v*1000, name+"_ms")
		b.ReportMetric(v/base, name+"/search")
	}
}
