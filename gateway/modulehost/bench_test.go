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
	doxo "toxgate/modules/pbpk-doxorubicin/model"
	httk "toxgate/modules/pbpk-httk/model"
	tk2d "toxgate/modules/tk-2d/model"
	"toxgate/sdk/abi"
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

// BenchmarkModelsVsNative measures one call of real model modules (built from
// modules/ with modtest) on a pooled instance beside the same model code run
// natively (decode the JSON input, evaluate, encode the output), and reports
// per-call milliseconds and the ratio module/native. The first call of an
// instance (lazy tables) is made before timing. Run with e.g.
//
//	go test -run XXX -bench ModelsVsNative -benchtime 5x ./gateway/modulehost/
func BenchmarkModelsVsNative(b *testing.B) {
	cache := wazero.NewCompilationCache()
	cases := []struct {
		name, dir, input string
		native           func(input []byte) ([]byte, error)
	}{
		{"tk-2d", "../../modules/tk-2d", `{"compound":"DOX"}`, func(in []byte) ([]byte, error) {
			var v tk2d.Input
			if err := json.Unmarshal(in, &v); err != nil {
				return nil, err
			}
			out, err := tk2d.Evaluate(v)
			if err != nil {
				return nil, err
			}
			return json.Marshal(out)
		}},
		{"pbpk-doxorubicin-7d", "../../modules/pbpk-doxorubicin", `{"dose_mg":60,"age":50,"weight":70,"height":190,"days":7}`, func(in []byte) ([]byte, error) {
			var v doxo.Input
			if err := json.Unmarshal(in, &v); err != nil {
				return nil, err
			}
			out, err := doxo.Simulate(v)
			if err != nil {
				return nil, err
			}
			return json.Marshal(out)
		}},
		{"pbpk-httk-365d", "../../modules/pbpk-httk", `{"chem_name":"Bisphenol A","species":"human","daily_dose":1,"doses_per_day":1,"days":365}`, func(in []byte) ([]byte, error) {
			var v httk.Input
			if err := json.Unmarshal(in, &v); err != nil {
				return nil, err
			}
			out, err := httk.Simulate(v)
			if err != nil {
				return nil, err
			}
			return json.Marshal(out)
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			m, err := wasmrt.Load(ctx, modtest.Wasm(b, c.dir), wasmrt.Options{Cache: cache, Logger: quietLogger(), Max: abi.Limits{MemoryPages: 4096}})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Retire(ctx)
			input := []byte(c.input)
			call := func() []byte {
				cctx, cancel := context.WithTimeout(ctx, time.Duration(m.Limits().TimeoutMS)*time.Millisecond)
				defer cancel()
				out, err := m.Call(cctx, 0, input)
				if err != nil {
					b.Fatal(err)
				}
				return out
			}
			native := func() []byte {
				out, err := c.native(input)
				if err != nil {
					b.Fatal(err)
				}
				return out
			}
			nOut, mOut := native(), call() // warm both up
			if len(nOut) != len(mOut) {
				b.Logf("output sizes differ: native %d bytes, module %d", len(nOut), len(mOut))
			}
			b.ResetTimer()
			t0 := time.Now()
			for range b.N {
				native()
			}
			t1 := time.Now()
			for range b.N {
				call()
			}
			t2 := time.Now()
			b.StopTimer()
			msNative := float64(t1.Sub(t0).Microseconds()) / 1e3 / float64(b.N)
			msModule := float64(t2.Sub(t1).Microseconds()) / 1e3 / float64(b.N)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(msNative, "native-ms/call")
			b.ReportMetric(msModule, "module-ms/call")
			b.ReportMetric(msModule/msNative, "module/native")
			b.ReportMetric(float64(len(mOut)), "output-bytes")
		})
	}
}
