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
// datasets loaded per second: read, and indexed one by one (no snapshot).
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
	var took time.Duration
	for range b.N {
		m, err := s.c.readMarker(ctx)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := s.load(ctx, m.Seq, t0, false); err != nil {
			b.Fatal(err)
		}
		took += time.Since(t0)
		s.st.view(func() { n = len(s.st.datasets) })
	}
	b.ReportMetric(float64(n), "datasets")
	b.ReportMetric(float64(n)*float64(b.N)/took.Seconds(), "records/s")
}
