package catalog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
	"toxgate/gateway/store"
)

// BenchmarkDataStoreSearchDo is datastore_search in process (freshness
// check, authorization, engine, encoding; no transport) on a 10,000-row
// table with an indexed filter, beside the engine's own share:
//
//	go test -run '^$' -bench DataStoreSearchDo ./catalog/
func BenchmarkDataStoreSearchDo(b *testing.B) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ds, err := datastore.Open(ctx, datastore.Config{Dir: b.TempDir(), Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer ds.Close()
	st, err := store.Open(ctx, store.Options{URI: testURI, Database: fmt.Sprintf("dsbench_%d", dbSeq.Add(1))})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close(ctx)
	svc, err := New(ctx, st.DB(), Options{Logger: quiet, DataStore: ds})
	if err != nil {
		b.Fatal(err)
	}
	admin := Caller{UserID: "u-admin", Name: "admin", Sysadmin: true}
	do := func(action string, data map[string]any) any {
		res, err := svc.Do(ctx, Request{Action: action, Caller: admin, Data: data, SiteURL: site})
		if err != nil {
			b.Fatalf("%s: %v", action, err)
		}
		return res
	}
	org := do("organization_create", map[string]any{"name": "lab"}).(map[string]any)
	d := do("package_create", map[string]any{"name": "bench", "owner_org": org["id"], "resources": []any{map[string]any{"url": ""}}}).(*DatasetDict)
	rid := d.Resources[0]["id"].(string)
	var recs []any
	for i := 0; i < 10000; i++ {
		recs = append(recs, map[string]any{"id": float64(i), "name": fmt.Sprint("c", i), "conc": float64(i) / 7})
	}
	do("datastore_create", map[string]any{"resource_id": rid, "records": recs, "indexes": "id"})
	b.ResetTimer()
	var engine time.Duration
	for i := 0; i < b.N; i++ {
		data, _ := ckan.ParseData(ckan.Request{Method: "GET", Query: fmt.Sprintf(`resource_id=%s&filters={"id":%d}&limit=10`, rid, i%10000)}, true)
		res := do("datastore_search", data)
		if _, err := ckan.Marshal(res); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if _, err := ds.Search(ctx, rid, data); err != nil {
			b.Fatal(err)
		}
		engine += time.Since(t0)
	}
	b.ReportMetric(float64(engine.Microseconds())/float64(b.N), "store-search-µs/op")
}
