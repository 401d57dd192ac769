package main

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"toxgate/gateway/modulehost/modtest"
	"toxgate/gateway/modulehost/wasmrt"
)

// callCounter counts the calls of every function of a module (a wazero
// function listener; it slows the module down, so only for this diagnosis).
type callCounter struct{ n map[string]int }

func (c *callCounter) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	name := def.DebugName()
	return experimental.FunctionListenerFunc(func(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
		c.n[name]++
	})
}

// BenchmarkCallCounts reports the calls per molecule inside wasm when the
// hERG pipeline runs up to a stage of testdata/stages (calls cost far more in
// Go's wasm than natively), and logs the functions called most. HERG_CALLS
// chooses the stage (parse, describe, morgan, features, gbt, predict; default
// full):
//
//	HERG_CALLS=parse go test -run '^$' -bench CallCounts -benchtime 1x -v ./modules/herg/
func BenchmarkCallCounts(b *testing.B) {
	t := b
	stage := os.Getenv("HERG_CALLS")
	if stage == "" {
		stage = "full"
	}
	c := &callCounter{n: map[string]int{}}
	ctx := experimental.WithFunctionListenerFactory(context.Background(), c)
	m, err := wasmrt.Load(ctx, modtest.Wasm(t, "testdata/stages"), wasmrt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Retire(context.Background())
	list := make([]string, 100)
	for i := range list {
		list[i] = batchSMILES[i%len(batchSMILES)]
	}
	in, _ := json.Marshal(map[string]any{"smiles": list, "stage": stage})
	if _, err := m.Call(context.Background(), 0, in); err != nil { // warm-up
		t.Fatal(err)
	}
	clear(c.n)
	for range b.N {
		if _, err := m.Call(context.Background(), 0, in); err != nil {
			t.Fatal(err)
		}
	}
	type kv struct {
		name string
		n    int
	}
	var all []kv
	total := 0
	for k, v := range c.n {
		all, total = append(all, kv{k, v}), total+v
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n })
	perMolecule := float64(total) / float64(b.N*len(list))
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(perMolecule, "calls/molecule")
	t.Logf("stage %s: %.0f calls per molecule", stage, perMolecule)
	for _, e := range all[:min(40, len(all))] {
		t.Logf("%8.1f %s", float64(e.n)/float64(b.N*len(list)), e.name)
	}
}
