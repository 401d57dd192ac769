package modulehost

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"toxgate/gateway/modulehost/modtest"
	"toxgate/gateway/modulehost/wasmrt"
	"toxgate/modules/example-units/units"
	"toxgate/sdk/wasmbuild"
)

// BenchmarkCallPooledVsNative measures one call of the example module's convert
// route on a pooled instance beside the same Go code run natively (decode JSON,
// convert, encode JSON), and reports the ratio pooled/native.
func BenchmarkCallPooledVsNative(b *testing.B) {
	ctx := context.Background()
	m, err := wasmrt.Load(ctx, modtest.Wasm(b, exampleDir), wasmrt.Options{Cache: wazero.NewCompilationCache(), Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Retire(ctx)
	input := []byte(`{"value":10,"from":"mg/L","to":"uM","molar_mass":543.52}`)
	native := func() []byte {
		var in units.ConvertInput
		if err := json.Unmarshal(input, &in); err != nil {
			b.Fatal(err)
		}
		out, err := units.Convert(in)
		if err != nil {
			b.Fatal(err)
		}
		res, _ := json.Marshal(out)
		return res
	}
	pooled := func() []byte {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		out, err := m.Call(cctx, 0, input)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	if string(native()) != string(pooled()) {
		b.Fatalf("native %s != pooled %s", native(), pooled())
	}
	b.ResetTimer()
	t0 := time.Now()
	for range b.N {
		native()
	}
	t1 := time.Now()
	for range b.N {
		pooled()
	}
	t2 := time.Now()
	b.StopTimer()
	nNative := float64(t1.Sub(t0).Nanoseconds()) / float64(b.N)
	nPooled := float64(t2.Sub(t1).Nanoseconds()) / float64(b.N)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(nNative, "native-ns/call")
	b.ReportMetric(nPooled, "pooled-ns/call")
	b.ReportMetric(nPooled/nNative, "pooled/native")
}

// BenchmarkStart measures New with every module of modules/ (built once), with
// an empty compilation cache (cold) and with the cache of a previous start, and
// reports the ratio cold/cached.
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	entries, _ := os.ReadDir("../../modules")
	n := 0
	for _, e := range entries {
		src := filepath.Join("../../modules", e.Name())
		if !e.IsDir() || !wasmbuild.IsModule(src) {
			continue
		}
		modtest.Install(b, src, dir, e.Name())
		n++
	}
	start := func(cacheDir string) time.Duration {
		t0 := time.Now()
		h, err := New(context.Background(), Config{ModulesDir: dir, CacheDir: cacheDir}, quietLogger(), nil)
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
	warm := b.TempDir()
	start(warm)
	var cold, cached time.Duration
	b.ResetTimer()
	for range b.N {
		cold += start(b.TempDir())
		cached += start(warm)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(n), "modules")
	b.ReportMetric(float64(cold.Milliseconds())/float64(b.N), "cold-ms/start")
	b.ReportMetric(float64(cached.Milliseconds())/float64(b.N), "cached-ms/start")
	b.ReportMetric(float64(cold)/float64(cached), "cold/cached")
}
