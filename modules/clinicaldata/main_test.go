package main

import (
	"context"
	"encoding/json"
	"testing"

	"toxgate/gateway/modulehost/wasmtest"
)

// TestModuleEndToEnd builds the module to wasm and calls its three routes through the host runtime.
func TestModuleEndToEnd(t *testing.T) {
	m := wasmtest.Load(t, ".")
	ctx := context.Background()
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
