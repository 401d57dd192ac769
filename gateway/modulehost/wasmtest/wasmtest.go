// Package wasmtest lets a model module's tests run the module the way the
// gateway does: built to wasm from its folder (cached by modtest), checked
// against the module size limit, and loaded by the host's ABI core.
package wasmtest

import (
	"context"
	"testing"

	"toxgate/gateway/modulehost/modtest"
	"toxgate/gateway/modulehost/wasmrt"
)

// MaxModuleBytes is the size a model module must stay under (20 MB).
const MaxModuleBytes = 20 << 20

// Load builds the module in dir, checks its size and loads it with the
// host's defaults; the module is retired when the test ends. Tests that
// build wasm are skipped with -short.
func Load(tb testing.TB, dir string) *wasmrt.Module {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds a wasm module")
	}
	wasm := modtest.Wasm(tb, dir)
	if len(wasm) > MaxModuleBytes {
		tb.Fatalf("module is %d bytes, over %d", len(wasm), MaxModuleBytes)
	}
	ctx := context.Background()
	m, err := wasmrt.Load(ctx, wasm, wasmrt.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = m.Retire(context.Background()) })
	return m
}
