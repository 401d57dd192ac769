package modulehost

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tetratelabs/wazero"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	doxo "toxgate/modules/pbpk-doxorubicin/model"
	httk "toxgate/modules/pbpk-httk/model"
	tk2d "toxgate/modules/tk-2d/model"
	tk3d "toxgate/modules/tk-3d/model"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/modulehost/modelapi"
	"toxgate/gateway/modulehost/modtest"
	"toxgate/gateway/modulehost/wasmrt"
	"toxgate/internal/cputime"
	"toxgate/internal/wasmbuild"
	"toxgate/modules/example-units/units"
	"toxgate/modules/td-omics/omics"
	"toxgate/sdk/abi"
)

// loadBench loads wasm with its own compilation cache and retires it when the
// benchmark ends.
func loadBench(b *testing.B, wasm []byte) *wasmrt.Module {
	ctx := context.Background()
	m, err := wasmrt.Load(ctx, wasm, wasmrt.Options{Cache: wazero.NewCompilationCache(), Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Retire(ctx) })
	return m
}

// BenchmarkCallPooledVsNative measures one call of the example module's convert
// route on a pooled instance beside the same Go code run natively (decode JSON,
// convert, encode JSON), and reports the ratio pooled/native; pooled-go is the
// same module as the go tool writes it, without the internal/reloop rewrite that
// make applies, measured in the same run.
func BenchmarkCallPooledVsNative(b *testing.B) {
	ctx := context.Background()
	// The module as make builds it (rewritten by internal/reloop), and as the go
	// tool writes it: the same-run baseline of the rewrite.
	m, mGo := loadBench(b, modtest.Wasm(b, exampleDir)), loadBench(b, modtest.WasmGo(b, exampleDir))
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
	call := func(m *wasmrt.Module) []byte {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		out, err := m.Call(cctx, 0, input)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	pooled := func() []byte { return call(m) }
	if string(native()) != string(pooled()) || string(call(mGo)) != string(pooled()) {
		b.Fatalf("native %s, pooled %s, pooled as Go built it %s", native(), pooled(), call(mGo))
	}
	b.ResetTimer()
	t0, c0 := time.Now(), cputime.Process()
	for range b.N {
		native()
	}
	t1, c1 := time.Now(), cputime.Process()
	for range b.N {
		pooled()
	}
	t2, c2 := time.Now(), cputime.Process()
	for range b.N {
		call(mGo)
	}
	t3 := time.Now()
	b.StopTimer()
	nNative := float64(t1.Sub(t0).Nanoseconds()) / float64(b.N)
	nPooled := float64(t2.Sub(t1).Nanoseconds()) / float64(b.N)
	nGo := float64(t3.Sub(t2).Nanoseconds()) / float64(b.N)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(nNative, "native-ns/call")
	b.ReportMetric(nPooled, "pooled-ns/call")
	b.ReportMetric(nPooled/nNative, "pooled/native")
	b.ReportMetric(nGo, "pooled-go-ns/call")
	b.ReportMetric(nGo/nNative, "pooled-go/native")
	// CPU time of the process per call: steadier than the wall clock when the
	// machine is shared.
	b.ReportMetric((c1-c0)*1e9/float64(b.N), "native-cpu-ns/call")
	b.ReportMetric((c2-c1)*1e9/float64(b.N), "pooled-cpu-ns/call")
}

// BenchmarkStart measures New with every module of modules/ (built once):
// with an empty compilation cache loading one module at a time
// (cold-serial) and on every core (cold), and with the cache of a previous
// start (cached: modules restored from their snapshots); it reports the
// ratios serial/parallel and cold/cached. The gateway's own start (catalog
// serving, every model ready) is BenchmarkGatewayStart in gateway/server.
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
	start := func(cacheDir string, workers int) time.Duration {
		t0 := time.Now()
		h, err := New(context.Background(), Config{ModulesDir: dir, CacheDir: cacheDir, LoadWorkers: workers}, quietLogger(), nil)
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
	start(warm, 0)
	var serial, cold, cached time.Duration
	b.ResetTimer()
	for range b.N {
		serial += start(b.TempDir(), 1)
		cold += start(b.TempDir(), 0)
		cached += start(warm, 0)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(n), "modules")
	b.ReportMetric(float64(serial.Milliseconds())/float64(b.N), "cold-serial-ms/start")
	b.ReportMetric(float64(cold.Milliseconds())/float64(b.N), "cold-ms/start")
	b.ReportMetric(float64(cached.Milliseconds())/float64(b.N), "cached-ms/start")
	b.ReportMetric(float64(serial)/float64(cold), "serial/parallel")
	b.ReportMetric(float64(cold)/float64(cached), "cold/cached")
}

// nativeJSON runs fn as a module handler does natively: decode the JSON
// input, evaluate, encode the output.
func nativeJSON[In, Out any](fn func(In) (Out, error)) func([]byte) ([]byte, error) {
	return func(in []byte) ([]byte, error) {
		var v In
		if err := json.Unmarshal(in, &v); err != nil {
			return nil, err
		}
		out, err := fn(v)
		if err != nil {
			return nil, err
		}
		if raw, ok := any(out).(json.RawMessage); ok {
			return raw, nil // already encoded, as the module's RawJSON
		}
		return json.Marshal(out)
	}
}

// appendJSON encodes an output that writes its own JSON.
func appendJSON[T interface{ AppendJSON([]byte) ([]byte, error) }](out T, err error) (json.RawMessage, error) {
	if err != nil {
		return nil, err
	}
	return out.AppendJSON(nil)
}

// BenchmarkModelsVsNative measures one call of real model modules (built from
// modules/ with modtest) on a pooled instance beside the same model code run
// natively (decode the JSON input, evaluate, encode the output), and reports
// per-call milliseconds and the ratio module/native. As a same-run baseline
// it also times the module built without reloop.Finish (unfinished-ms/call,
// and finished/unfinished below 1 when Finish helps); the module's figures are
// the best of five rounds that alternate the two builds. The first call of an
// instance (lazy tables) is made before timing. Run with e.g.
//
//	go test -run XXX -bench ModelsVsNative -benchtime 5x ./gateway/modulehost/
func BenchmarkModelsVsNative(b *testing.B) {
	cache := wazero.NewCompilationCache()
	cases := []struct {
		name, dir, input string
		route            int
		native           func(input []byte) ([]byte, error)
	}{
		{"tk-2d", "../../modules/tk-2d", `{"compound":"DOX"}`, 0, nativeJSON(tk2d.Evaluate)},
		{"tk-3d", "../../modules/tk-3d", `{"compound":"DOX"}`, 0, nativeJSON(tk3d.Evaluate)},
		{"td-proteomics", "../../modules/td-omics", `{"compound":"DOX","protein":"P16403"}`, 0, nativeJSON(omics.Proteomics)},
		{"td-metabolomics", "../../modules/td-omics", `{"compound":"DOX"}`, 1,
			nativeJSON(func(v omics.CompoundInput) (any, error) { return omics.Metabolomics(v, false) })},
		{"td-lipidomics", "../../modules/td-omics", `{"compound":"DOX"}`, 2,
			nativeJSON(func(v omics.CompoundInput) (any, error) { return omics.Metabolomics(v, true) })},
		// The PBPK modules answer pre-encoded JSON (module.RawJSON); so does their native run.
		{"pbpk-doxorubicin-7d", "../../modules/pbpk-doxorubicin", `{"dose_mg":60,"age":50,"weight":70,"height":190,"days":7}`, 0,
			nativeJSON(func(v doxo.Input) (json.RawMessage, error) { return appendJSON(doxo.Simulate(v)) })},
		{"pbpk-httk-365d", "../../modules/pbpk-httk", `{"chem_name":"Bisphenol A","species":"human","daily_dose":1,"doses_per_day":1,"days":365}`, 0,
			nativeJSON(func(v httk.Input) (json.RawMessage, error) { return appendJSON(httk.Simulate(v)) })},
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
				out, err := m.Call(cctx, c.route, input)
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
			b.StopTimer()
			unfinished, err := wasmrt.Load(ctx, modtest.WasmOpt(b, c.dir), wasmrt.Options{Cache: cache, Logger: quietLogger(), Max: abi.Limits{MemoryPages: 4096}})
			if err != nil {
				b.Fatal(err)
			}
			defer unfinished.Retire(ctx)
			callUnfinished := func() {
				cctx, cancel := context.WithTimeout(ctx, time.Duration(m.Limits().TimeoutMS)*time.Millisecond)
				defer cancel()
				if _, err := unfinished.Call(cctx, c.route, input); err != nil {
					b.Fatal(err)
				}
			}
			callUnfinished()
			// The two builds alternate, five rounds, best of each: the
			// machine's load moves both alike.
			perCall := func(f func()) float64 {
				t := time.Now()
				for range b.N {
					f()
				}
				return float64(time.Since(t).Microseconds()) / 1e3 / float64(b.N)
			}
			msModule, msUnfinished := math.Inf(1), math.Inf(1)
			for range 5 {
				msModule = min(msModule, perCall(func() { call() }))
				msUnfinished = min(msUnfinished, perCall(callUnfinished))
			}
			msNative := float64(t1.Sub(t0).Microseconds()) / 1e3 / float64(b.N)
			b.ReportMetric(msUnfinished, "unfinished-ms/call")
			b.ReportMetric(msModule/msUnfinished, "finished/unfinished")
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(msNative, "native-ms/call")
			b.ReportMetric(msModule, "module-ms/call")
			b.ReportMetric(msModule/msNative, "module/native")
			b.ReportMetric(float64(len(mOut)), "output-bytes")
		})
	}
}

// BenchmarkServeVsIsAlive measures end-to-end HTTP requests per second over an
// in-memory listener (fasthttp server and client, 4 concurrent clients): POST
// of the example module's convert route (schema validation, pooled call, JSON
// answer) beside a GET of a handler shaped like the gateway's /IsAlive, and
// reports the ratio module/IsAlive of requests per second.
//
//	go test -run XXX -bench ServeVsIsAlive -benchtime 20000x ./gateway/modulehost/
func BenchmarkServeVsIsAlive(b *testing.B) {
	dir := b.TempDir()
	modtest.Install(b, exampleDir, dir, "example-units")
	h, err := New(context.Background(), Config{ModulesDir: dir, CacheDir: b.TempDir()}, quietLogger(), prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	r := router.New()
	r.GET("/IsAlive", func(ctx *fasthttp.RequestCtx) {
		buf := append(make([]byte, 0, 96), `{"alive":true,"version":"bench","uptime_s":`...)
		buf = strconv.AppendInt(buf, 1, 10)
		ctx.SetContentType("application/json")
		ctx.Response.Header.Set("Cache-Control", "no-store")
		ctx.SetBody(append(buf, '}'))
	})
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		if !h.ServeModel(ctx) {
			httpcore.WriteError(ctx, fasthttp.StatusNotFound, modelapi.CodeNotFound, "no such path", "")
		}
	}
	ln := fasthttputil.NewInmemoryListener()
	srv := &fasthttp.Server{Handler: r.Handler}
	go srv.Serve(ln)
	defer srv.Shutdown()
	client := &fasthttp.HostClient{Addr: "bench", Dial: func(string) (net.Conn, error) { return ln.Dial() }, MaxConns: 16}
	body := []byte(`{"value":10,"from":"mg/L","to":"uM","molar_mass":543.52}`)
	run := func(method, path string, body []byte, n int) time.Duration {
		const clients = 4
		var wg sync.WaitGroup
		t0 := time.Now()
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				defer fasthttp.ReleaseRequest(req)
				defer fasthttp.ReleaseResponse(res)
				for i := c; i < n; i += clients {
					req.Reset()
					req.SetRequestURI("http://bench" + path)
					req.Header.SetMethod(method)
					if body != nil {
						req.Header.SetContentType("application/json")
						req.SetBody(body)
					}
					if err := client.Do(req, res); err != nil || res.StatusCode() != 200 {
						b.Errorf("%s %s: %v %d %s", method, path, err, res.StatusCode(), res.Body())
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(t0)
	}
	run("POST", "/example/units/convert", body, 200) // start the pool's instances
	run("GET", "/IsAlive", nil, 200)
	b.ResetTimer()
	alive := run("GET", "/IsAlive", nil, b.N)
	module := run("POST", "/example/units/convert", body, b.N)
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(b.N)/alive.Seconds(), "isalive-req/s")
	b.ReportMetric(float64(b.N)/module.Seconds(), "module-req/s")
	b.ReportMetric(alive.Seconds()/module.Seconds(), "module/isalive")
}

// BenchmarkFirstCall measures the first call on a fresh instance of modules
// that build lazy tables (httk's chemical table), beside the second call on
// the same instance. Each op loads the module anew (compiled once, cached).
//
//	go test -run '^$' -bench FirstCall -benchtime 5x ./gateway/modulehost/
func BenchmarkFirstCall(b *testing.B) {
	ctx := context.Background()
	cache := wazero.NewCompilationCache()
	wasm := modtest.Wasm(b, "../../modules/pbpk-httk")
	in := []byte(`{"chem_name":"Bisphenol A","species":"Rat","daily_dose":1,"doses_per_day":1,"days":1}`)
	var first, second time.Duration
	for range b.N {
		m, err := wasmrt.Load(ctx, wasm, wasmrt.Options{Cache: cache, Logger: quietLogger(), Max: abi.Limits{MemoryPages: 4096}})
		if err != nil {
			b.Fatal(err)
		}
		for k := range 2 {
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			t0 := time.Now()
			_, err := m.Call(cctx, 0, in)
			d := time.Since(t0)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			if k == 0 {
				first += d
			} else {
				second += d
			}
		}
		m.Retire(ctx)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "httk-first-ms")
	b.ReportMetric(float64(second.Microseconds())/1000/float64(b.N), "httk-second-ms")
}
