package catalog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"toxgate/catalog/ckan"
	"toxgate/gateway/identity"
	"toxgate/gateway/store"
)

// benchCatalog is a catalog over 10,000 generated datasets, written
// straight to the store and loaded by New.
func benchCatalog(b testing.TB) *Service {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{URI: testURI, Database: fmt.Sprintf("bench_%d", dbSeq.Add(1))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close(context.Background()) })
	orgs := []string{"liver-lab", "heart-lab", "kidney-lab", "neuro-lab"}
	var orgDocs []any
	for i, o := range orgs {
		orgDocs = append(orgDocs, Organization{ID: fmt.Sprintf("00000000-0000-4000-8000-0000000000%02d", i), Name: o, Title: o, State: StateActive, Created: time.Now(), Rev: 1})
	}
	if _, err := st.DB().Collection(CollOrganizations).InsertMany(ctx, orgDocs); err != nil {
		b.Fatal(err)
	}
	words := []string{"hepatotoxicity", "cardiotoxicity", "herg", "ahr", "pbpk", "doxorubicin", "bisphenol", "assay", "rat", "human", "in vitro", "in vivo", "kinetics", "lipidomics", "proteomics"}
	var docs []any
	at := now()
	for i := range 10000 {
		notes := fmt.Sprintf("Study %d of %s and %s in %s", i, words[i%len(words)], words[(i/3)%len(words)], words[(i/7)%len(words)])
		rn := "results " + words[i%len(words)]
		docs = append(docs, Dataset{ID: fmt.Sprintf("10000000-0000-4000-8000-%012d", i), Name: fmt.Sprintf("dataset-%05d", i),
			Title: fmt.Sprintf("%s study %d", words[(i/2)%len(words)], i), Notes: &notes, OwnerOrg: orgDocs[i%4].(Organization).ID,
			State: StateActive, Type: "dataset", MetadataCreated: at, MetadataModified: at.Add(time.Duration(i) * time.Millisecond),
			Tags:      []string{words[i%len(words)], words[(i+5)%len(words)]},
			Resources: []Resource{{ID: fmt.Sprintf("20000000-0000-4000-8000-%012d", i), URL: "http://example.org/x.csv", Name: &rn, Format: "CSV", State: StateActive}}, Rev: 1})
	}
	if _, err := st.DB().Collection(CollDatasets).InsertMany(ctx, docs); err != nil {
		b.Fatal(err)
	}
	// the change marker as after 100 writes (every action's freshness
	// check reads it, or since its sequence document exists, that)
	var recent []map[string]any
	for i := 37; i <= 100; i++ {
		recent = append(recent, map[string]any{"seq": int64(i), "k": "d", "id": fmt.Sprintf("10000000-0000-4000-8000-%012d", i)})
	}
	if _, err := st.DB().Collection(CollChanges).InsertOne(ctx, map[string]any{"_id": "catalog", "seq": int64(100), "recent": recent}); err != nil {
		b.Fatal(err)
	}
	svc, err := New(ctx, st.DB(), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Users: identity.NewStore(st.DB())})
	if err != nil {
		b.Fatal(err)
	}
	return svc
}

// BenchmarkSearchDomain runs package_search (q plus two facets) in process,
// without HTTP or plugin RPC, and encodes the reply.
func BenchmarkSearchDomain(b *testing.B) {
	svc := benchCatalog(b)
	qs := []string{"hepatotoxicity", "herg assay", "doxorubicin kinetics", "human in vitro"}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		data := map[string]any{"q": qs[i%len(qs)], "facet.field": `["tags","organization"]`}
		i++
		res, err := svc.Do(ctx, Request{Action: "package_search", Data: data, SiteURL: site})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ckan.Marshal(res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShowDomain runs package_show by name in process and encodes it.
func BenchmarkShowDomain(b *testing.B) {
	svc := benchCatalog(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		res, err := svc.Do(ctx, Request{Action: "package_show", Data: map[string]any{"id": fmt.Sprintf("dataset-%05d", i%10000)}, SiteURL: site})
		i++
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ckan.Marshal(res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateDomain runs package_create in process on top of 10,000
// datasets.
func BenchmarkCreateDomain(b *testing.B) {
	svc := benchCatalog(b)
	ctx := context.Background()
	sys := Caller{UserID: "u-sys", Name: "sys", Sysadmin: true}
	i := 0
	for b.Loop() {
		i++
		data := map[string]any{"name": fmt.Sprintf("created-%d", i), "owner_org": "liver-lab", "notes": "benchmark", "tags": []any{map[string]any{"name": "bench"}}}
		if _, err := svc.Do(ctx, Request{Action: "package_create", Caller: sys, Data: data, SiteURL: site}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchAction runs package_search's action alone (no freshness
// check, no encoding beyond its own), for profiling the search itself.
func BenchmarkSearchAction(b *testing.B) {
	svc := benchCatalog(b)
	qs := []string{"hepatotoxicity", "herg assay", "doxorubicin kinetics", "human in vitro"}
	ctx := context.Background()
	for i, q := range qs {
		res, err := packageSearch(ctx, svc, &Request{Action: "package_search", Data: map[string]any{"q": q, "rows": 0}, SiteURL: site})
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := ckan.Marshal(res)
		b.Logf("query %d %q: %.40s", i, q, raw)
	}
	i := 0
	for b.Loop() {
		data := map[string]any{"q": qs[i%len(qs)], "facet.field": `["tags","organization"]`}
		i++
		if _, err := packageSearch(ctx, svc, &Request{Action: "package_search", Data: data, SiteURL: site}); err != nil {
			b.Fatal(err)
		}
	}
}
