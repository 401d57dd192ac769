package modulehost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/modulehost/modelapi"
	"toxgate/gateway/modulehost/modtest"
)

const (
	exampleDir = "../../modules/example-units"
	faultsDir  = "testdata/faults"
	counter1   = "testdata/counter1"
	counter2   = "testdata/counter2"
	badDir     = "testdata/badmanifest"
)

// compileCache is shared by all tests of the package, as a gateway's is across restarts.
var compileCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "modulehost-cache")
	if err != nil {
		panic(err)
	}
	compileCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type env struct {
	t    *testing.T
	host *Host
	base string
	dir  string
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newEnv starts a Host on a modules dir holding the given modules (name → source
// dir) and serves it with fasthttp on loopback, as the gateway will.
func newEnv(t *testing.T, cfg Config, modules map[string]string) *env {
	t.Helper()
	if cfg.ModulesDir == "" {
		cfg.ModulesDir = t.TempDir()
	}
	cfg.CacheDir = compileCache
	if cfg.CallerRunning == 0 {
		// Every test client is one caller (its address); the cap across
		// models has its own test (TestCallerRunningCapAcrossModules).
		cfg.CallerRunning = 64
	}
	for name, src := range modules {
		modtest.Install(t, src, cfg.ModulesDir, name)
	}
	h, err := New(context.Background(), cfg, quietLogger(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := router.New()
	h.RegisterRoutes(r, func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Request.Header.Peek("Authorization")) != "Bearer sysadmin" {
				httpcore.WriteError(ctx, fasthttp.StatusForbidden, "forbidden", "sysadmin only", "")
				return
			}
			next(ctx)
		}
	})
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		if !h.ServeModel(ctx) {
			httpcore.WriteError(ctx, fasthttp.StatusNotFound, modelapi.CodeNotFound, "no such path", "")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: r.Handler, MaxRequestBodySize: 64 << 20}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Shutdown()
		h.Close(context.Background())
	})
	return &env{t: t, host: h, base: "http://" + ln.Addr().String(), dir: cfg.ModulesDir}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) errBody() httpcore.ErrorDetail {
	var e httpcore.ErrorBody
	json.Unmarshal(r.body, &e)
	return e.Error
}

func (e *env) do(method, path, contentType, body string, hdr ...string) resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

func (e *env) post(path, body string, hdr ...string) resp {
	e.t.Helper()
	return e.do("POST", path, "application/json", body, hdr...)
}

// eventually polls cond until it holds or 3 minutes pass (a compile on a
// machine busy with other builds takes long; a wait that never ends fails).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestModelCallValidationAndErrorShape(t *testing.T) {
	e := newEnv(t, Config{}, map[string]string{"example-units": exampleDir, "faults": faultsDir})

	r := e.post("/example/units/convert", `{"value":543.52,"from":"mg/L","to":"mM","molar_mass":543.52}`)
	var out struct {
		Value float64
		Unit  string
	}
	if json.Unmarshal(r.body, &out); r.status != 200 || out.Value != 1 || out.Unit != "mM" {
		t.Fatalf("convert = %d %s", r.status, r.body)
	}
	if got := r.header.Get("X-Model"); got != "example-units/1.0.0" {
		t.Errorf("X-Model = %q", got)
	}

	cases := []struct {
		name, method, path, ctype, body string
		status                          int
		code, field                     string
	}{
		{"GET on a model route", "GET", "/example/units/convert", "", "", 405, modelapi.CodeMethodNotAllowed, ""},
		{"wrong content type", "POST", "/example/units/convert", "text/plain", `{}`, 415, modelapi.CodeUnsupportedMediaType, ""},
		{"not JSON", "POST", "/example/units/convert", "application/json", `{"value":`, 400, modelapi.CodeInvalidJSON, ""},
		{"missing field", "POST", "/example/units/convert", "application/json", `{"value":1,"from":"M"}`, 422, modelapi.CodeInvalidInput, "to"},
		{"wrong type", "POST", "/example/units/convert", "application/json", `{"value":"ten","from":"M","to":"mM"}`, 422, modelapi.CodeInvalidInput, "value"},
		{"unknown field", "POST", "/example/units/convert", "application/json", `{"value":1,"from":"M","to":"mM","colour":1}`, 422, modelapi.CodeInvalidInput, "colour"},
		{"below minimum", "POST", "/example/units/convert", "application/json", `{"value":-1,"from":"M","to":"mM"}`, 422, modelapi.CodeInvalidInput, "value"},
		{"model refuses input", "POST", "/example/units/convert", "application/json; charset=utf-8", `{"value":1,"from":"mg/L","to":"uM"}`, 422, modelapi.CodeInvalidInput, "molar_mass"},
		{"model does not know it", "POST", "/faults/lookup", "application/json", `{"compound":"DOX","protein":"Q9"}`, 404, modelapi.CodeNotFound, "protein"},
		{"enum", "POST", "/faults/lookup", "application/json", `{"compound":"XYZ"}`, 422, modelapi.CodeInvalidInput, "compound"},
		{"body over the module's limit", "POST", "/faults/echo", "application/json", `{"id":1,"pad":"` + strings.Repeat("x", 5000) + `"}`, 413, modelapi.CodePayloadTooLarge, ""},
		{"unknown path", "POST", "/nope/evaluate", "application/json", `{}`, 404, modelapi.CodeNotFound, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, c.ctype, c.body)
			got := r.errBody()
			if r.status != c.status || got.Code != c.code || got.Field != c.field || got.Message == "" {
				t.Fatalf("%s %s = %d %s; want %d code %q field %q", c.method, c.path, r.status, r.body, c.status, c.code, c.field)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
	if r := e.do("GET", "/example/units/convert", "", ""); r.header.Get("Allow") != "POST" {
		t.Errorf("405 without Allow: POST: %v", r.header)
	}
}

func TestCSVWhereTheOutputIsATable(t *testing.T) {
	e := newEnv(t, Config{}, map[string]string{"example-units": exampleDir, "faults": faultsDir})
	r := e.post("/example/units/series", `{"start":90,"unit":"uM","dilution":3,"steps":3,"to":"nM"}`, "Accept", "text/csv")
	want := "step,value,converted\n1,90,90000\n2,30,30000\n3,10,10000\n"
	if r.status != 200 || string(r.body) != want || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("series as CSV = %d %q (%s); want %q", r.status, r.body, r.header.Get("Content-Type"), want)
	}
	r = e.post("/faults/table", `{"n":2}`, "Accept", "application/json;q=0.5, text/csv")
	if want := "t,c,note\n0,100,\"row, \"\"quoted\"\"\"\n1,50,\"row, \"\"quoted\"\"\"\n"; string(r.body) != want {
		t.Fatalf("quoted CSV = %q, want %q", r.body, want)
	}
	// JSON by default; an output that is neither a table nor a time series
	// is refused with 406 when only CSV is acceptable, JSON otherwise.
	if r := e.post("/example/units/series", `{"start":1,"unit":"uM","dilution":2,"steps":2}`); !strings.HasPrefix(string(r.body), `{"unit":"uM"`) {
		t.Fatalf("series without Accept = %s", r.body)
	}
	if r := e.post("/example/units/convert", `{"value":1,"from":"M","to":"mM"}`, "Accept", "text/csv"); r.status != 406 || !strings.Contains(string(r.body), `"not_acceptable"`) {
		t.Fatalf("non-table output with Accept: text/csv = %d %s", r.status, r.body)
	}
	if r := e.post("/example/units/convert", `{"value":1,"from":"M","to":"mM"}`, "Accept", "text/csv, */*;q=0.1"); r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("non-table output with Accept: text/csv, */*;q=0.1 = %d %s", r.status, r.body)
	}
}

// A simulation's time series (parallel lists beside a time* list, at the
// top level or in an object, with nested objects of lists) is its CSV.
func TestSeriesCSV(t *testing.T) {
	out := `{"summary":{"cmax":1.5},"time_series":{"time_h":[0,0.5,1],"ng_per_mL":{"plasma":[0,2.5,1e-7],"heart":[0,1,2]},"note":"x","short":[1]},"units":{"time_h":"h"}}`
	b, ok := seriesCSV([]byte(out))
	if want := "time_h,ng_per_mL.plasma,ng_per_mL.heart\n0,0,0\n0.5,2.5,1\n1,1e-7,2\n"; !ok || string(b) != want {
		t.Fatalf("nested series = %v %q, want %q", ok, b, want)
	}
	b, ok = seriesCSV([]byte(`{"time":[1,2],"Cplasma":[3,null],"AUC":4,"layers":[[1,2],[3,4]]}`))
	if want := "time,Cplasma\n1,3\n2,\n"; !ok || string(b) != want {
		t.Fatalf("top-level series = %v %q, want %q", ok, b, want)
	}
	if _, ok := seriesCSV([]byte(`{"value":1,"time_note":"none"}`)); ok {
		t.Fatal("an output without a series gave CSV")
	}
}

// Each limit answers its JSON error, while calls to another model and to the
// same model keep succeeding.
func TestLimitsOverHTTPLeaveEverythingElseHealthy(t *testing.T) {
	e := newEnv(t, Config{MaxOutputBytes: 256 << 10}, map[string]string{"example-units": exampleDir, "faults": faultsDir})
	stop := make(chan struct{})
	var bystanderOK, bystanderFail atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := e.post("/example/units/convert", `{"value":2,"from":"g/L","to":"mg/L"}`)
			if r.status == 200 && strings.Contains(string(r.body), `"value":2000`) {
				bystanderOK.Add(1)
			} else {
				bystanderFail.Add(1)
			}
		}
	}()
	cases := []struct {
		path, body string
		status     int
		code       string
	}{
		{"/faults/loop", `{}`, 504, modelapi.CodeTimeout},
		{"/faults/membomb", `{}`, 500, modelapi.CodeOutOfMemory},
		{"/faults/panic", `{}`, 500, modelapi.CodeModuleCrashed},
		{"/faults/huge", `{"kib":400}`, 500, modelapi.CodeOutputTooLarge},
	}
	for _, c := range cases {
		start := time.Now()
		r := e.post(c.path, c.body)
		t.Logf("%s answered %d in %v", c.path, r.status, time.Since(start))
		if r.status != c.status || r.errBody().Code != c.code {
			t.Errorf("%s = %d %s; want %d %s", c.path, r.status, r.body, c.status, c.code)
		}
		if r := e.post("/faults/echo", `{"id":3}`); r.status != 200 {
			t.Errorf("faults/echo after %s = %d %s", c.path, r.status, r.body)
		}
	}
	close(stop)
	wg.Wait()
	if bystanderFail.Load() != 0 || bystanderOK.Load() == 0 {
		t.Fatalf("calls to another model during the faults: %d ok, %d failed", bystanderOK.Load(), bystanderFail.Load())
	}
}

func TestConcurrentCallsOverHTTP(t *testing.T) {
	// One caller (one client address) with 32 calls at once: its queue
	// must hold the 28 that wait for the 4 instances, however long a busy
	// machine makes them wait (the queue's capacity is checked, not its
	// timeout).
	e := newEnv(t, Config{CallerQueue: 32, QueueTimeout: 10 * time.Minute}, map[string]string{"faults": faultsDir})
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 4 {
				id := i*10 + j
				r := e.post("/faults/echo", fmt.Sprintf(`{"id":%d,"work":100000}`, id))
				var got struct{ ID int }
				if json.Unmarshal(r.body, &got); r.status != 200 || got.ID != id {
					errs <- fmt.Sprintf("id %d: %d %s", id, r.status, r.body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mi := e.host.Models()[0]
	if mi.Stats.Instances > mi.Limits.PoolSize || mi.Stats.Discarded != 0 || mi.Stats.Calls != 128 {
		t.Fatalf("stats %+v with pool size %d", *mi.Stats, mi.Limits.PoolSize)
	}
}

func (e *env) index() map[string]ModelInfo {
	e.t.Helper()
	r := e.do("GET", "/models", "", "")
	var idx struct{ Models []ModelInfo }
	if err := json.Unmarshal(r.body, &idx); err != nil || r.status != 200 {
		e.t.Fatalf("GET /models = %d %s", r.status, r.body)
	}
	out := map[string]ModelInfo{}
	for _, m := range idx.Models {
		out[m.Name] = m
	}
	return out
}

func TestIndexHealthAndOIPMetadata(t *testing.T) {
	e := newEnv(t, Config{}, map[string]string{"example-units": exampleDir, "badmanifest": badDir})
	idx := e.index()
	m := idx["example-units"]
	if m.Status != "ready" || m.Version != "1.0.0" || len(m.SHA256) != 64 || len(m.Routes) != 2 ||
		m.Card == nil || m.Card.Summary == "" || !strings.Contains(string(m.Routes[0].InputSchema), `"molar_mass"`) ||
		m.Routes[1].Output.Table == nil {
		t.Fatalf("index entry = %+v", m)
	}
	if b := idx["badmanifest"]; b.Status != "failed" || !strings.Contains(b.Error, "not a semantic version") {
		t.Fatalf("bad module in index = %+v", b)
	}
	if r := e.do("GET", "/models/example-units", "", ""); r.status != 200 || !strings.Contains(string(r.body), `"model_card"`) {
		t.Fatalf("GET /models/example-units = %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/models/nope", "", ""); r.status != 404 || r.errBody().Code != modelapi.CodeNotFound {
		t.Fatalf("GET /models/nope = %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v2/health/live", "", ""); r.status != 200 || string(r.body) != `{"live":true}` {
		t.Fatalf("live = %d %s", r.status, r.body)
	}
	r := e.do("GET", "/v2/health/ready", "", "")
	if r.status != 503 || !strings.Contains(string(r.body), "badmanifest.wasm") {
		t.Fatalf("ready with a broken module file = %d %s", r.status, r.body)
	}
	os.Remove(filepath.Join(e.dir, "badmanifest.wasm"))
	if err := e.host.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v2/health/ready", "", ""); r.status != 200 || string(r.body) != `{"ready":true}` {
		t.Fatalf("ready = %d %s", r.status, r.body)
	}
	var md OIPModelMetadata
	r = e.do("GET", "/v2/models/example-units", "", "")
	if json.Unmarshal(r.body, &md); r.status != 200 || md.Name != "example-units" || md.Versions[0] != "1.0.0" || len(md.Inputs) != 4 {
		t.Fatalf("OIP metadata = %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v2/models/example-units/ready", "", ""); r.status != 200 || !strings.Contains(string(r.body), `"ready":true`) {
		t.Fatalf("OIP model ready = %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v2/models/nope/ready", "", ""); r.status != 404 {
		t.Fatalf("OIP unknown model ready = %d", r.status)
	}
}

func TestWatchHotLoadsSwapsKeepsOldOnBrokenFileAndRemoves(t *testing.T) {
	e := newEnv(t, Config{Watch: true}, nil)
	version := func() string {
		r := e.post("/counter/next", `{"n":1}`)
		if r.status != 200 {
			return fmt.Sprint(r.status)
		}
		var out struct{ Version string }
		json.Unmarshal(r.body, &out)
		return out.Version
	}
	modtest.Install(t, counter1, e.dir, "counter")
	eventually(t, "counter v1 serves", func() bool { return version() == "1" })
	sha1 := e.index()["counter"].SHA256

	modtest.Install(t, counter2, e.dir, "counter")
	eventually(t, "counter v2 serves", func() bool { return version() == "2" })
	if e.index()["counter"].SHA256 == sha1 {
		t.Fatal("sha256 did not change with the new version")
	}

	// A broken file is refused; version 2 keeps serving and the index says why.
	if err := os.WriteFile(filepath.Join(e.dir, ".tmp"), []byte("\x00asm broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Rename(filepath.Join(e.dir, ".tmp"), filepath.Join(e.dir, "counter.wasm"))
	eventually(t, "the index reports the refused file", func() bool { return e.index()["counter"].Error != "" })
	if v := version(); v != "2" {
		t.Fatalf("after a broken replacement the model answers %s, want version 2", v)
	}
	if err := e.host.Ready(); err != nil {
		t.Fatalf("Ready with the old version serving: %v", err)
	}

	os.Remove(filepath.Join(e.dir, "counter.wasm"))
	eventually(t, "counter is removed", func() bool { return version() == "404" })
}

func TestAdminUploadAndDelete(t *testing.T) {
	// An upload is compiled within the longest call deadline; a busy
	// machine gets a long one.
	e := newEnv(t, Config{MaxTimeout: 5 * time.Minute}, nil)
	wasm := string(modtest.Wasm(t, counter1))
	admin := []string{"Authorization", "Bearer sysadmin"}
	if r := e.do("POST", "/admin/modules", "application/wasm", wasm); r.status != 403 {
		t.Fatalf("upload without sysadmin = %d", r.status)
	}
	r := e.do("POST", "/admin/modules", "application/wasm", wasm, admin...)
	if r.status != 201 || !strings.Contains(string(r.body), `"name":"counter"`) {
		t.Fatalf("upload = %d %s", r.status, r.body)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "counter.wasm")); err != nil {
		t.Fatalf("upload not persisted: %v", err)
	}
	if r := e.post("/counter/next", `{"n":41}`); !strings.HasPrefix(string(r.body), `{"version":"1","next":42,"provenance":{"model":"counter","version":"1.0.0","module_sha256":"`) {
		t.Fatalf("uploaded model = %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/admin/modules", "application/wasm", wasm, admin...); r.status != 200 || !strings.Contains(string(r.body), `"unchanged":true`) {
		t.Fatalf("same upload again = %d %s", r.status, r.body)
	}
	r = e.do("POST", "/admin/modules", "application/wasm", string(modtest.Wasm(t, badDir)), admin...)
	if r.status != 422 || r.errBody().Code != modelapi.CodeModuleRejected || !strings.Contains(r.errBody().Message, "model_card.summary") &&
		!strings.Contains(r.errBody().Message, "semantic version") {
		t.Fatalf("bad upload = %d %s", r.status, r.body)
	}
	r = e.do("POST", "/admin/modules", "application/wasm", string(modtest.Wasm(t, counter2)), admin...)
	if r.status != 201 || !strings.Contains(string(r.body), `"replaced_version":"1.0.0"`) {
		t.Fatalf("upload v2 = %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", "/admin/modules/counter", "", "", admin...); r.status != 200 {
		t.Fatalf("delete = %d %s", r.status, r.body)
	}
	if r := e.post("/counter/next", `{"n":1}`); r.status != 404 {
		t.Fatalf("removed model still answers: %d %s", r.status, r.body)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "counter.wasm")); !os.IsNotExist(err) {
		t.Fatalf("module file left after delete: %v", err)
	}
	if r := e.do("DELETE", "/admin/modules/counter", "", "", admin...); r.status != 404 {
		t.Fatalf("second delete = %d", r.status)
	}
}

// Under a steady load, swapping versions back and forth loses no request.
func TestSwapUnderLoadLosesNoRequest(t *testing.T) {
	e := newEnv(t, Config{}, map[string]string{"counter": counter1})
	v1, v2 := modtest.Wasm(t, counter1), modtest.Wasm(t, counter2)
	stop := make(chan struct{})
	var ok, failed atomic.Int64
	seen := sync.Map{}
	var wg sync.WaitGroup
	var firstFailure atomic.Value
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &fasthttp.Client{}
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				req.SetRequestURI(e.base + "/counter/next")
				req.Header.SetMethod("POST")
				req.Header.SetContentType("application/json")
				req.SetBodyString(`{"n":1}`)
				err := c.Do(req, res)
				var out struct{ Version string }
				if err == nil && res.StatusCode() == 200 && json.Unmarshal(res.Body(), &out) == nil && out.Version != "" {
					ok.Add(1)
					seen.Store(out.Version, true)
				} else {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%v %d %s", err, res.StatusCode(), res.Body()))
				}
				fasthttp.ReleaseRequest(req)
				fasthttp.ReleaseResponse(res)
			}
		}()
	}
	eventually(t, "load is running", func() bool { return ok.Load() > 50 })
	for i := range 6 {
		wasm := v2
		if i%2 == 1 {
			wasm = v1
		}
		if _, err := e.host.Load(context.Background(), wasm); err != nil {
			t.Fatal(err)
		}
		before := ok.Load()
		eventually(t, "requests flow after the swap", func() bool { return ok.Load() > before+20 })
	}
	close(stop)
	wg.Wait()
	_, saw1 := seen.Load("1")
	_, saw2 := seen.Load("2")
	if failed.Load() != 0 || !saw1 || !saw2 {
		t.Fatalf("%d ok, %d failed (first: %v); saw v1 %v v2 %v", ok.Load(), failed.Load(), firstFailure.Load(), saw1, saw2)
	}
	t.Logf("%d requests across 6 swaps, none failed", ok.Load())
}

func TestRefusesRouteClaimedByAnotherModuleOrReserved(t *testing.T) {
	e := newEnv(t, Config{ReservedPrefixes: []string{"/faults/"}}, map[string]string{"faults": faultsDir})
	idx := e.index()
	if f := idx["faults"]; f.Status != "failed" || !strings.Contains(f.Error, "reserved") {
		t.Fatalf("module on a reserved prefix = %+v", f)
	}
	e2 := newEnv(t, Config{}, map[string]string{"counter": counter1})
	dup := filepath.Join(e2.dir, "counter-copy.wasm")
	if err := os.WriteFile(dup, bytes.Clone(modtest.Wasm(t, counter2)), 0o644); err != nil {
		t.Fatal(err)
	}
	e2.host.Sync(context.Background())
	if f := e2.index()["counter-copy"]; f.Status != "failed" || !strings.Contains(f.Error, "already served from") {
		t.Fatalf("second file with the same module name = %+v", f)
	}
}
