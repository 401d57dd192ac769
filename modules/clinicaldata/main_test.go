package main

import (
	"context"
	"encoding/json"
	"testing"

	"toxgate/gateway/modulehost/modtest"
	"toxgate/gateway/modulehost/wasmrt"
)

// TestModuleEndToEnd builds the module to wasm and calls its three routes through the host runtime.
func TestModuleEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	wasm := modtest.Wasm(t, ".")
	if len(wasm) > 20<<20 {
		t.Fatalf("module is %d bytes, over 20 MB", len(wasm))
	}
	ctx := context.Background()
	m, err := wasmrt.Load(ctx, wasm, wasmrt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Retire(ctx)
	man := m.Manifest()
	want := []string{"/clinicaldata/ml/evaluate", "/clinicaldata/ai/evaluate", "/clinicaldata/aop/evaluate"}
	if len(man.Routes) != 3 {
		t.Fatalf("routes %+v", man.Routes)
	}
	for i, path := range want {
		r := man.Routes[i]
		if r.Path != path || r.Output.Table == nil || r.Output.Table.Field != "results" {
			t.Fatalf("route %d: %+v", i, r)
		}
		out, err := m.Call(ctx, i, []byte(`{"smiles":"C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C"}`))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var o struct {
			Model   string           `json:"model"`
			Results []map[string]any `json:"results"`
		}
		if err := json.Unmarshal(out, &o); err != nil || len(o.Results) != 1 {
			t.Fatalf("%s: %s", path, out)
		}
		if p, ok := o.Results[0]["probability"].(float64); !ok || p <= 0 || p >= 1 {
			t.Fatalf("%s: %v", path, o.Results[0])
		}
	}
}
