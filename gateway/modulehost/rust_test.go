package modulehost

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tetratelabs/wazero"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/modulehost/modtest"
	"toxgate/gateway/modulehost/wasmrt"
	"toxgate/modules/example-units/units"
	"toxgate/sdk/abi"
)

const rustExample = "../../modules/example-rust/lib.rs"

// The Rust example module, written against the raw ABI with no SDK, loads
// (fuel-instrumented like Go modules) and answers as the Go example module
// does for every pair of units; its input errors name the field.
func TestRustModuleMatchesGoExample(t *testing.T) {
	ctx := context.Background()
	m, err := wasmrt.Load(ctx, modtest.RustWasm(t, rustExample), wasmrt.Options{Cache: wazero.NewCompilationCache(), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Retire(ctx)
	if man := m.Manifest(); man.Name != "example-units-rust" || man.Routes[0].Path != "/example/rust/convert" || m.Limits().MemoryPages != 32 {
		t.Fatalf("manifest %+v, limits %+v", man, m.Limits())
	}
	for _, from := range units.Units() {
		for _, to := range units.Units() {
			in := units.ConvertInput{Value: 12.5, From: from, To: to, MolarMass: 543.52}
			body, _ := json.Marshal(in)
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			out, err := m.Call(cctx, 0, body)
			cancel()
			if err != nil {
				t.Fatalf("%s -> %s: %v", from, to, err)
			}
			var got units.ConvertOutput
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%s -> %s: %s: %v", from, to, out, err)
			}
			want, _ := units.Convert(in)
			if !nearly(got.Value, want.Value) || !nearly(got.Factor, want.Factor) || got.Unit != want.Unit || got.Input != want.Input {
				t.Errorf("%s -> %s: Rust %+v, Go %+v", from, to, got, want)
			}
		}
	}
	for _, c := range []struct{ body, field string }{
		{`{"value":1,"from":"mg/L","to":"furlong"}`, "to"},
		{`{"value":1,"from":"mg/L","to":"uM"}`, "molar_mass"},
		{`{"value":-1,"from":"mg/L","to":"g/L"}`, "value"},
	} {
		_, err := m.Call(ctx, 0, []byte(c.body))
		var ae *abi.Error
		if !errors.As(err, &ae) || ae.Kind != abi.KindInvalidInput || ae.Field != c.field {
			t.Errorf("%s: %v, want an input error naming %q", c.body, err, c.field)
		}
	}
}

// Served by the host like any module: the schema check before the guest, and
// the answer.
func TestRustModuleServed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "example-units-rust.wasm"), modtest.RustWasm(t, rustExample), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := New(context.Background(), Config{ModulesDir: dir, CacheDir: t.TempDir()}, quietLogger(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	serve := func(body string) *fasthttp.RequestCtx {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI("/example/rust/convert")
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.SetBodyString(body)
		if !h.ServeModel(&ctx) {
			t.Fatal("route not served")
		}
		return &ctx
	}
	ok := serve(`{"value":10,"from":"mg/L","to":"uM","molar_mass":543.52}`)
	var out units.ConvertOutput
	if ok.Response.StatusCode() != 200 || json.Unmarshal(ok.Response.Body(), &out) != nil || !nearly(out.Value, 10/543.52*1000) {
		t.Fatalf("%d %s", ok.Response.StatusCode(), ok.Response.Body())
	}
	if bad := serve(`{"value":"ten","from":"mg/L","to":"uM"}`); bad.Response.StatusCode() != 422 {
		t.Fatalf("schema check: %d %s", bad.Response.StatusCode(), bad.Response.Body())
	}
}

func nearly(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }
