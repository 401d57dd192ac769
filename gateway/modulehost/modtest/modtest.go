// Package modtest builds module sources into .wasm for tests and benchmarks,
// once per source content: builds are cached by source hash in CacheDir, and
// memoized within the test process.
package modtest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"toxgate/internal/wasmbuild"
)

var (
	mu    sync.Mutex
	built = map[string]string{}
)

// CacheDir is where built test modules are kept: $TOXGATE_WASM_CACHE, or
// the cache that modbuild (make build) uses too, wasmbuild.DefaultCacheDir.
func CacheDir() string {
	if d := os.Getenv("TOXGATE_WASM_CACHE"); d != "" {
		return d
	}
	return wasmbuild.DefaultCacheDir()
}

// Build returns the path of the module in dir built to wasm, failing tb on error.
func Build(tb testing.TB, dir string) string {
	tb.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[abs]; ok {
		return p
	}
	p, err := wasmbuild.Cached(context.Background(), abs, CacheDir())
	if err != nil {
		tb.Fatalf("building test module %s: %v", dir, err)
	}
	built[abs] = p
	return p
}

// Wasm returns the bytes of the module in dir built to wasm.
func Wasm(tb testing.TB, dir string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Build(tb, dir))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Install copies the module in dir, built, into modulesDir as name.wasm (via a
// temporary file and a rename, as an operator should) and returns its path.
func Install(tb testing.TB, dir, modulesDir, name string) string {
	tb.Helper()
	dst := filepath.Join(modulesDir, name+".wasm")
	tmp := filepath.Join(modulesDir, "."+name+".tmp")
	if err := os.WriteFile(tmp, Wasm(tb, dir), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// WasmGo returns the bytes of the module in dir as the go tool builds it,
// without the reloop rewrite and wasm-opt pass of Wasm: the baseline of
// benchmarks that measure what they gain.
func WasmGo(tb testing.TB, dir string) []byte {
	tb.Helper()
	return wasmStage(tb, dir, wasmbuild.StageGo)
}

// WasmReloop returns the bytes of the module in dir rewritten by reloop but
// not optimised by wasm-opt: the baseline that shows wasm-opt's share.
func WasmReloop(tb testing.TB, dir string) []byte {
	tb.Helper()
	return wasmStage(tb, dir, wasmbuild.StageReloop)
}

// WasmOpt returns the bytes of the module in dir rewritten by reloop and
// optimised by wasm-opt, but not finished by reloop.Finish: the baseline that
// shows Finish's share.
func WasmOpt(tb testing.TB, dir string) []byte {
	tb.Helper()
	return wasmStage(tb, dir, wasmbuild.StageOpt)
}

func wasmStage(tb testing.TB, dir string, stage wasmbuild.Stage) []byte {
	tb.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := wasmbuild.CachedStage(context.Background(), abs, CacheDir(), stage)
	if err != nil {
		tb.Fatalf("building test module %s: %v", dir, err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
