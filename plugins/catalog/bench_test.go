package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"runtime"
	"testing"
	"time"

	"toxgate/catalog"
	"toxgate/gateway/store"
	"toxgate/plugins/contract"
)

// BenchmarkServerCall runs package_search (q plus two facets) through the
// plugin's contract handler in process over 10,000 datasets: the plugin's
// work without the RPC transport (-benchmem shows its allocations).
func BenchmarkServerCall(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := store.StartEmbedded(ctx, dir, quiet)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(context.Background())
	st, err := store.Open(ctx, store.Options{URI: e.URI(), Database: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close(context.Background())
	orgs := []string{"liver-lab", "heart-lab", "kidney-lab", "neuro-lab"}
	var orgDocs []any
	for i, o := range orgs {
		orgDocs = append(orgDocs, catalog.Organization{ID: fmt.Sprintf("00000000-0000-4000-8000-0000000000%02d", i), Name: o, Title: o, State: "active", Created: time.Now(), Rev: 1})
	}
	if _, err := st.DB().Collection(catalog.CollOrganizations).InsertMany(ctx, orgDocs); err != nil {
		b.Fatal(err)
	}
	words := []string{"hepatotoxicity", "cardiotoxicity", "herg", "ahr", "pbpk", "doxorubicin", "bisphenol", "assay", "rat", "human", "in vitro", "in vivo", "kinetics", "lipidomics", "proteomics"}
	var docs []any
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i := range 10000 {
		notes := fmt.Sprintf("Study %d of %s and %s in %s", i, words[i%len(words)], words[(i/3)%len(words)], words[(i/7)%len(words)])
		name := fmt.Sprintf("dataset-%05d", i)
		rn := "results " + words[i%len(words)]
		docs = append(docs, catalog.Dataset{
			ID: fmt.Sprintf("10000000-0000-4000-8000-%012d", i), Name: name, Title: fmt.Sprintf("%s study %d", words[(i/2)%len(words)], i),
			Notes: &notes, OwnerOrg: orgDocs[i%len(orgs)].(catalog.Organization).ID, State: "active", Type: "dataset",
			MetadataCreated: now, MetadataModified: now.Add(time.Duration(i) * time.Millisecond),
			Tags:      []string{words[i%len(words)], words[(i+5)%len(words)]},
			Resources: []catalog.Resource{{ID: fmt.Sprintf("20000000-0000-4000-8000-%012d", i), URL: "http://example.org/" + name + ".csv", Name: &rn, Format: "CSV", State: "active"}},
			Rev:       1,
		})
	}
	if _, err := st.DB().Collection(catalog.CollDatasets).InsertMany(ctx, docs); err != nil {
		b.Fatal(err)
	}
	svc, err := catalog.New(ctx, st.DB(), catalog.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	srv := &server{svc: svc, log: quiet}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.Logf("live heap after load: %.0f MB (includes the embedded store)", float64(ms.HeapAlloc)/(1<<20))
	qs := []string{"hepatotoxicity", "herg assay", "doxorubicin kinetics", "human in vitro"}
	reqs := make([]*contract.Request, len(qs))
	for i, q := range qs {
		v := url.Values{"q": {q}, "facet.field": {`["tags","organization"]`}}
		reqs[i] = &contract.Request{Action: "package_search", Method: "GET", Query: v.Encode(), SiteURL: "http://127.0.0.1:8080"}
	}
	i := 0
	for b.Loop() {
		resp, err := srv.Call(ctx, reqs[i%len(reqs)])
		i++
		if err != nil || resp.Status != 200 {
			b.Fatal(err, resp.Status)
		}
		if _, err := resp.MarshalBinary(); err != nil {
			b.Fatal(err)
		}
	}
}
