package catalog

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"toxgate/gateway/store"
)

// BenchmarkLoadFromStore times a full load of the catalog in the store
// named by TOXGATE_CATALOG_TEST_STORE (database "toxgate", as "toxgate
// catalog generate" fills it), in process: the embedded store's work and
// the read model's are in one profile (-cpuprofile). It reports the
// records read per second, the time to read them (readAll) and the time
// to index them (indexLoaded, every dataset: no snapshot).
//
//	TOXGATE_CATALOG_TEST_STORE=/tmp/cat20k/store go test -run '^$' -bench LoadFromStore -benchtime 1x ./catalog/
func BenchmarkLoadFromStore(b *testing.B) {
	if os.Getenv("TOXGATE_CATALOG_TEST_STORE") == "" {
		b.Skip("TOXGATE_CATALOG_TEST_STORE names no store")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{URI: testURI, Database: "toxgate"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = st.Close(ctx) }()
	s, err := New(ctx, st.DB(), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var n int
	var read, index time.Duration
	for range b.N {
		m, err := s.c.readMarker(ctx)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		fresh, err := s.readAll(ctx, false)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		s.indexLoaded(fresh, m.Seq)
		read, index = read+t1.Sub(t0), index+time.Since(t1)
		n = len(fresh.datasets)
	}
	b.ReportMetric(float64(n), "datasets")
	b.ReportMetric(float64(n)*float64(b.N)/read.Seconds(), "records/s")
	b.ReportMetric(float64(n)*float64(b.N)/(read+index).Seconds(), "load-records/s")
	b.ReportMetric(read.Seconds()/float64(b.N), "read-s")
	b.ReportMetric(index.Seconds()/float64(b.N), "index-s")
}
