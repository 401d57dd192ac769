package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"toxgate/gateway/modulehost/wasmtest"
	"toxgate/sdk/abi"
)

// TestModuleEndToEnd builds the module to wasm and calls it through the host runtime.
func TestModuleEndToEnd(t *testing.T) {
	m := wasmtest.Load(t, ".")
	ctx := context.Background()
	man := m.Manifest()
	if man.Name != "herg" || len(man.Routes) != 1 || man.Routes[0].Path != "/hERG/evaluate" || man.Card.Validation == "" {
		t.Fatalf("manifest %+v", man)
	}
	out, err := m.Call(ctx, 0, []byte(`{"smiles":["CC(C)(C)c1ccc(C(O)CCCN2CCC(C(O)(c3ccccc3)c3ccccc3)CC2)cc1","CC(=O)Oc1ccccc1C(=O)O"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Results []struct {
			Prediction int    `json:"prediction"`
			AD         string `json:"applicability_domain"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &o); err != nil || len(o.Results) != 2 || o.Results[0].Prediction != 1 || o.Results[1].Prediction != 0 {
		t.Fatalf("output %s (%v)", out, err)
	}
	out, err = m.Call(ctx, 0, []byte(`{"smiles":["CCO","C1CC"]}`))
	var mixed struct {
		Results []struct {
			Prediction *int `json:"prediction"`
			Error      *struct {
				Field    string `json:"field"`
				Position int    `json:"position"`
			} `json:"error"`
		} `json:"results"`
	}
	if err != nil || json.Unmarshal(out, &mixed) != nil || len(mixed.Results) != 2 || mixed.Results[0].Prediction == nil ||
		mixed.Results[1].Error == nil || mixed.Results[1].Error.Field != "smiles[1]" || mixed.Results[1].Error.Position != 1 {
		t.Fatalf("list with an invalid SMILES: %s (%v)", out, err)
	}
	_, err = m.Call(ctx, 0, []byte(`{"smiles":"C1CC"}`))
	var ge *abi.Error
	if !errors.As(err, &ge) || ge.Kind != abi.KindInvalidInput || ge.Field != "smiles" {
		t.Fatalf("invalid SMILES: %v", err)
	}
}

// BenchmarkWasmOne is one /hERG/evaluate call with one SMILES inside wasm.
func BenchmarkWasmOne(b *testing.B) {
	m := wasmtest.Load(b, ".")
	in := []byte(`{"smiles":"COc1ccc(CCN2CCC(Nc3nc4ccccc4n3Cc3ccc(F)cc3)CC2)cc1"}`)
	for b.Loop() {
		if _, err := m.Call(context.Background(), 0, in); err != nil {
			b.Fatal(err)
		}
	}
}

var batchSMILES = []string{"COc1ccc(CCN2CCC(Nc3nc4ccccc4n3Cc3ccc(F)cc3)CC2)cc1", "CC(=O)Oc1ccccc1C(=O)O",
	"C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C", "CN(CCOc1ccc(NS(C)(=O)=O)cc1)CCc1ccc(NS(C)(=O)=O)cc1"}

// BenchmarkWasmBatch1000 is one call with 1000 SMILES inside wasm.
func BenchmarkWasmBatch1000(b *testing.B) {
	m := wasmtest.Load(b, ".")
	list := make([]string, 1000)
	for i := range list {
		list[i] = batchSMILES[i%len(batchSMILES)]
	}
	in, _ := json.Marshal(map[string]any{"smiles": list})
	for b.Loop() {
		if _, err := m.Call(context.Background(), 0, in); err != nil {
			b.Fatal(err)
		}
	}
}
