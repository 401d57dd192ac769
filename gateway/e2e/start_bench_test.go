package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"toxgate/gateway/harness"
	"toxgate/gateway/modulehost"
)

// BenchmarkGatewayStart measures, with every module of bin/modules, the
// time from starting the gateway process to the catalog serving
// (package_list 200) and to every model ready (/readyz 200): fresh (an
// empty compilation cache) and restarted on the cache of the fresh run;
// beside, in the same run, the time to compile and check the same modules
// alone (modulehost.New in this process, empty caches) one at a time and
// on every core (modules.load_workers 0). Run with
//
//	TOXGATE_BIN_DIR=$PWD/bin go test -run '^$' -bench GatewayStart -benchtime 1x ./gateway/server/
func BenchmarkGatewayStart(b *testing.B) {
	bins, err := harness.BuildBinaries()
	if err != nil {
		b.Fatal(err)
	}
	entries, err := os.ReadDir(bins.Modules)
	if err != nil || len(entries) == 0 {
		b.Fatalf("no modules in %s (run make build): %v", bins.Modules, err)
	}
	compile := func(workers int) time.Duration {
		t0 := time.Now()
		h, err := modulehost.New(context.Background(), modulehost.Config{ModulesDir: bins.Modules, CacheDir: b.TempDir(), LoadWorkers: workers}, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(t0)
		if err := h.Ready(); err != nil {
			b.Fatal(err)
		}
		h.Close(context.Background())
		return took
	}
	launch := func(cache, data string) (catalog, models time.Duration) {
		t0 := time.Now()
		g, err := harness.Launch(bins, harness.WithAllModules(), harness.WithoutReadyWait(), harness.WithLogSink(io.Discard),
			harness.WithDataDir(data), harness.WithEnv("TOXGATE_MODULES_CACHE_DIR="+cache))
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		until := func(path string) time.Duration {
			deadline := time.Now().Add(10 * time.Minute)
			for time.Now().Before(deadline) {
				if resp, err := http.Get(g.URL + path); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 200 {
						return time.Since(t0)
					}
				}
				time.Sleep(10 * time.Millisecond) // polling a benchmark's clock, not an assertion
			}
			b.Fatalf("%s not 200 within 10 minutes", path)
			return 0
		}
		return until("/api/3/action/package_list"), until("/readyz")
	}
	ms := func(d time.Duration) float64 { return float64(d.Milliseconds()) }
	b.ResetTimer()
	for range b.N {
		serial, parallel := compile(1), compile(0)
		cache, data := b.TempDir(), filepath.Join(b.TempDir(), "data")
		freshCatalog, freshModels := launch(cache, data)
		warmCatalog, warmModels := launch(cache, data)
		b.ReportMetric(ms(serial), "compile-serial-ms")
		b.ReportMetric(ms(parallel), "compile-parallel-ms")
		b.ReportMetric(ms(freshCatalog), "fresh-catalog-ms")
		b.ReportMetric(ms(freshModels), "fresh-models-ms")
		b.ReportMetric(ms(warmCatalog), "warm-catalog-ms")
		b.ReportMetric(ms(warmModels), "warm-models-ms")
		b.ReportMetric(float64(freshModels)/float64(parallel), "fresh-models/parallel")
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(len(entries)), "modules")
}
