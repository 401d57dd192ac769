package catalog

import (
	"cmp"
	"flag"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	blevesearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"toxgate/catalog/search"
)

// bleveSizes are the catalog sizes BenchmarkBleve measures.
var bleveSizes = flag.String("bleve-scale", "10000,100000", "comma-separated catalog sizes for BenchmarkBleve")

// bleveBatch is the number of documents per bleve batch. An in-memory
// scorch index keeps one segment per batch (it merges only segments it
// persists), so the batch size sets how many segments a search visits.
const bleveBatch = 10000

// bleveQueries are package_search q values from the generator's
// vocabulary (genWords, genSpecies, genEndpoints), as BenchmarkScale uses.
var bleveQueries = []string{"hepatotoxicity", "herg assay", "doxorubicin kinetics", "human liver", "toxicology", "plasma clearance"}

// BenchmarkBleve measures the catalog's search index against a bleve v2
// in-memory index (scorch, no path) of the same generated datasets, in the
// same run: bytes per dataset of each index (live heap after building it,
// with the other index not alive), the time to index every dataset, and a
// package_search-like query (one or two words, facets on tags and
// organization, 10 rows, an anonymous caller: public datasets only):
// CPU per query and p50/p99 at 16 callers, and bleve's CPU per query
// sorted by score alone, without facets, and for the words in one field
// with and without facets. It also reports how far
// bleve's answer agrees with ours: the hit count, the facet counts and
// how many of the top 10 ids are the same (mean over bleveQueries).
//
// Both are asked at the index level (ids and facet counts, no reply
// rendering). bleve is given CKAN's qf boosts (title 4, tags 2, the
// other text 1) as a disjunction per word and a conjunction of the words
// (CKAN's mm for two words), sorted by score then metadata_modified.
//
//	go test -run '^$' -bench Bleve -benchtime 1x -timeout 60m ./catalog/ -args -bleve-scale=10000,100000
func BenchmarkBleve(b *testing.B) {
	for _, f := range strings.Split(*bleveSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("bad -bleve-scale entry %q", f)
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				bleveRun(b, n)
			}
		})
	}
}

func bleveRun(b *testing.B, n int) {
	rm := genModel(b, n)
	ds := make([]*Dataset, 0, len(rm.datasets))
	for _, d := range rm.datasets {
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(x, y *Dataset) int { return strings.Compare(x.Name, y.Name) })

	// ours: a second index of the same documents, weighed, then searched
	base := heapInUse()
	start := time.Now()
	ix := search.New()
	for _, d := range ds {
		ix.Put(rm.docFor(d))
	}
	b.ReportMetric(time.Since(start).Seconds(), "ours-index-s")
	b.ReportMetric(float64(heapInUse()-base)/float64(n), "ours-B/dataset")
	oursOne := func(i int) {
		if _, err := ix.Search(oursQuery(bleveQueries[i%len(bleveQueries)])); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(cpuPer(200, oursOne)*1000, "ours-search-cpu-µs")
	p50, p99, _ := loadRun(16, 2*time.Second, oursOne)
	b.ReportMetric(float64(p50.Microseconds())/1000, "ours-p50-ms@16")
	b.ReportMetric(float64(p99.Microseconds())/1000, "ours-p99-ms@16")
	runtime.KeepAlive(ix)
	ix = nil

	// bleve: built with our second index gone, weighed, then searched
	base = heapInUse()
	start = time.Now()
	bx, err := bleve.NewUsing("", bleveMapping(), scorch.Name, scorch.Name, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = bx.Close() }()
	for lo := 0; lo < len(ds); lo += bleveBatch {
		batch := bx.NewBatch()
		for _, d := range ds[lo:min(lo+bleveBatch, len(ds))] {
			if err := batch.Index(d.ID, rm.bleveDoc(d)); err != nil {
				b.Fatal(err)
			}
		}
		if err := bx.Batch(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(time.Since(start).Seconds(), "bleve-index-s")
	b.ReportMetric(float64(heapInUse()-base)/float64(n), "bleve-B/dataset")
	bleveOne := func(i int) {
		if _, err := bx.Search(bleveRequest(bleveQueries[i%len(bleveQueries)])); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(cpuPer(200, bleveOne)*1000, "bleve-search-cpu-µs")
	// where bleve's time goes: the same request sorted by score alone, and
	// without the facets
	b.ReportMetric(cpuPer(50, func(i int) {
		req := bleveRequest(bleveQueries[i%len(bleveQueries)])
		req.SortBy([]string{"-_score"})
		if _, err := bx.Search(req); err != nil {
			b.Fatal(err)
		}
	})*1000, "bleve-score-sort-cpu-µs")
	b.ReportMetric(cpuPer(50, func(i int) {
		req := bleveRequest(bleveQueries[i%len(bleveQueries)])
		req.Facets = nil
		if _, err := bx.Search(req); err != nil {
			b.Fatal(err)
		}
	})*1000, "bleve-no-facets-cpu-µs")
	// and the cheapest query bleve has for it: the words in one field
	// (notes), all required, sorted by score, with and without facets
	b.ReportMetric(cpuPer(50, func(i int) {
		if _, err := bx.Search(bleveOneField(bleveQueries[i%len(bleveQueries)], true)); err != nil {
			b.Fatal(err)
		}
	})*1000, "bleve-one-field-cpu-µs")
	b.ReportMetric(cpuPer(50, func(i int) {
		if _, err := bx.Search(bleveOneField(bleveQueries[i%len(bleveQueries)], false)); err != nil {
			b.Fatal(err)
		}
	})*1000, "bleve-one-field-no-facets-cpu-µs")
	p50, p99, _ = loadRun(16, 2*time.Second, bleveOne)
	b.ReportMetric(float64(p50.Microseconds())/1000, "bleve-p50-ms@16")
	b.ReportMetric(float64(p99.Microseconds())/1000, "bleve-p99-ms@16")

	// exactness: bleve's answer beside ours (the read model's index)
	var overlap, sameCount, sameFacets int
	for _, q := range bleveQueries {
		ours, err := rm.index.Search(oursQuery(q))
		if err != nil {
			b.Fatal(err)
		}
		theirs, err := bx.Search(bleveRequest(q))
		if err != nil {
			b.Fatal(err)
		}
		var ids []string
		for _, h := range theirs.Hits {
			ids = append(ids, h.ID)
		}
		k := 0
		for _, id := range ours.IDs {
			if slices.Contains(ids, id) {
				k++
			}
		}
		overlap += k
		if uint64(ours.Count) == theirs.Total {
			sameCount++
		}
		fs := 0
		for _, f := range []string{"tags", "organization"} {
			if sameFacetCounts(ours.Facets[f], bleveFacets(theirs.Facets[f])) {
				fs++
			}
		}
		if fs == 2 {
			sameFacets++
		}
		b.Logf("%d datasets, q=%q: hits ours %d bleve %d, top 10 shared %d, facets equal %v",
			n, q, ours.Count, theirs.Total, k, fs == 2)
	}
	nq := float64(len(bleveQueries))
	b.ReportMetric(float64(overlap)/nq, "top10-shared")
	b.ReportMetric(float64(sameCount)/nq, "same-count-frac")
	b.ReportMetric(float64(sameFacets)/nq, "same-facets-frac")
	runtime.KeepAlive(rm)
}

// oursQuery is the index query package_search makes for q with facets on
// tags and organization and 10 rows, for an anonymous caller.
func oursQuery(q string) search.Query {
	return search.Query{
		Q: q, Sort: "score desc, metadata_modified desc", Rows: 10,
		FacetFields: []string{"tags", "organization"}, FacetLimit: 50, FacetMinCount: 1,
		PublicOnly: true, Allow: func(d *search.Doc) bool { return d.Public },
	}
}

// bleveMapping indexes the fields a package_search reads: text fields
// with bleve's English analyzer (lowercase, stop words, Porter stems),
// facet and filter fields as keywords with doc values. Nothing is
// stored and no term vectors are kept (no highlighting): the leanest
// mapping that answers the query.
func bleveMapping() *mapping.IndexMappingImpl {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = false
	text.IncludeTermVectors = false
	text.IncludeInAll = false
	text.DocValues = false
	kw := bleve.NewKeywordFieldMapping()
	kw.Analyzer = keyword.Name
	kw.Store = false
	kw.IncludeTermVectors = false
	kw.IncludeInAll = false
	kw.DocValues = true
	dm := bleve.NewDocumentStaticMapping()
	for _, f := range []string{"title", "notes", "res_description", "extras"} {
		dm.AddFieldMappingsAt(f, text)
	}
	for _, f := range []string{"name", "tags", "organization", "res_format", "license_id", "capacity", "metadata_modified"} {
		dm.AddFieldMappingsAt(f, kw)
	}
	im := bleve.NewIndexMapping()
	im.DefaultMapping = dm
	im.DefaultAnalyzer = en.AnalyzerName
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false
	return im
}

// bleveDoc is d as a bleve document (the fields of bleveMapping).
// Callers hold a lock.
func (st *readModel) bleveDoc(d *Dataset) map[string]any {
	doc := map[string]any{
		"name": d.Name, "title": d.Title, "tags": d.Tags,
		"metadata_modified": isoZ(d.MetadataModified), "capacity": "public",
	}
	if d.Private {
		doc["capacity"] = "private"
	}
	if d.Notes != nil {
		doc["notes"] = *d.Notes
	}
	if d.LicenseID != nil {
		doc["license_id"] = *d.LicenseID
	}
	if o := st.orgs[d.OwnerOrg]; o != nil {
		doc["organization"] = o.Name
	}
	var formats, descs, extras []string
	for _, r := range d.Resources {
		if r.Format != "" {
			formats = append(formats, r.Format)
		}
		if r.Description != nil && *r.Description != "" {
			descs = append(descs, *r.Description)
		}
	}
	for _, e := range d.Extras {
		extras = append(extras, e.Value)
	}
	doc["res_format"], doc["res_description"], doc["extras"] = formats, descs, extras
	return doc
}

// bleveRequest is oursQuery for bleve: each word looked up in title
// (boost 4), tags (2) and the other text fields (1), every word required,
// public datasets only, sorted by score then metadata_modified.
func bleveRequest(q string) *bleve.SearchRequest {
	var must []query.Query
	for _, w := range strings.Fields(q) {
		var either []query.Query
		for _, fb := range []struct {
			field string
			boost float64
		}{{"title", 4}, {"tags", 2}, {"notes", 1}, {"res_description", 1}, {"extras", 1}} {
			m := bleve.NewMatchQuery(w)
			m.SetField(fb.field)
			m.SetBoost(fb.boost)
			either = append(either, m)
		}
		must = append(must, bleve.NewDisjunctionQuery(either...))
	}
	public := bleve.NewTermQuery("public")
	public.SetField("capacity")
	must = append(must, public)
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(must...), 10, 0, false)
	req.SortBy([]string{"-_score", "-metadata_modified"})
	req.AddFacet("tags", bleve.NewFacetRequest("tags", 50))
	req.AddFacet("organization", bleve.NewFacetRequest("organization", 50))
	return req
}

// bleveOneField is bleve's cheapest form of the query: every word of q
// in notes alone, public datasets only, sorted by score; with facets on
// tags and organization if facets is set.
func bleveOneField(q string, facets bool) *bleve.SearchRequest {
	m := bleve.NewMatchQuery(q)
	m.SetField("notes")
	m.SetOperator(query.MatchQueryOperatorAnd)
	public := bleve.NewTermQuery("public")
	public.SetField("capacity")
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(m, public), 10, 0, false)
	if facets {
		req.AddFacet("tags", bleve.NewFacetRequest("tags", 50))
		req.AddFacet("organization", bleve.NewFacetRequest("organization", 50))
	}
	return req
}

// bleveFacets is a bleve terms facet as the index's facet list.
func bleveFacets(fr *blevesearch.FacetResult) []search.Facet {
	if fr == nil || fr.Terms == nil {
		return nil
	}
	var out []search.Facet
	for _, t := range fr.Terms.Terms() {
		out = append(out, search.Facet{Value: t.Term, Count: t.Count})
	}
	return out
}

// sameFacetCounts says whether two facet lists of up to the facet limit
// count the same values alike, leaving out the values at the lowest count
// of a list, where the limit may cut a tie differently.
func sameFacetCounts(a, b []search.Facet) bool {
	norm := func(l []search.Facet) []search.Facet {
		l = slices.Clone(l)
		slices.SortFunc(l, func(x, y search.Facet) int {
			return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Value, y.Value))
		})
		if len(l) > 0 {
			low := l[len(l)-1].Count
			l = slices.DeleteFunc(l, func(f search.Facet) bool { return f.Count == low })
		}
		return l
	}
	return slices.Equal(norm(a), norm(b))
}
