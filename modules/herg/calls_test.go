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

// TestCallCounts prints the functions called most per molecule inside wasm
// when the hERG pipeline runs up to a stage of testdata/stages (calls cost
// far more in Go's wasm than natively). Run with
//
//	HERG_CALLS=full go test -run CallCounts -v ./modules/herg/
func TestCallCounts(t *testing.T) {
	stage := os.Getenv("HERG_CALLS")
	if stage == "" {
		t.Skip("set HERG_CALLS to a stage (parse, describe, morgan, features, gbt, predict, full)")
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
	if _, err := m.Call(context.Background(), 0, in); err != nil {
		t.Fatal(err)
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
	t.Logf("stage %s: %d calls per molecule", stage, total/len(list))
	for _, e := range all[:min(40, len(all))] {
		t.Logf("%8.1f %s", float64(e.n)/float64(len(list)), e.name)
	}
}
