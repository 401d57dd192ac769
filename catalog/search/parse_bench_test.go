package search

import "testing"

// benchQueries are the q and fq shapes of the catalog's benchmarks and of
// CKAN's own filters.
var benchQueries = []string{
	"tags:rat", "organization:heart-lab", "title:herg", "name:private-set", "+capacity:public +state:active",
	`tags:"in vitro" AND organization:tox-lab`, "-tags:herg", "groups:hepatotox OR groups:liver",
	"metadata_modified:[2024-01-01T00:00:00Z TO *]", "+(tags:x OR organization:tox-lab) +tags:herg",
	`vocab_cyanotoxin:microcystin AND groups:cyanobacteria`, "res_format:CSV -(tags:a OR !tags:b)",
}

// BenchmarkParse parses benchQueries with Parse and with the unbounded
// recursive reference, for comparison.
func BenchmarkParse(b *testing.B) {
	for _, p := range []struct {
		name  string
		parse func(string) (node, error)
	}{{"Parse", Parse}, {"reference", refParse}} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, q := range benchQueries {
					if _, err := p.parse(q); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
