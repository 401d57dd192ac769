package wasmbuild

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func TestCachedBuildsOnceAndProducesWasm(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	p1, err := Cached(ctx, "../../modules/example-units", cache)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x00asm\x01\x00\x00\x00")) {
		t.Fatalf("%s is not a WebAssembly 1.0 binary", p1)
	}
	st1, _ := os.Stat(p1)
	p2, err := Cached(ctx, "../../modules/example-units", cache)
	if err != nil {
		t.Fatal(err)
	}
	st2, _ := os.Stat(p2)
	if p1 != p2 || !st1.ModTime().Equal(st2.ModTime()) {
		t.Fatalf("second Cached call rebuilt: %s (%v) vs %s (%v)", p1, st1.ModTime(), p2, st2.ModTime())
	}
}

func TestBuildReportsCompilerErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/go.mod", []byte("module broken\n\ngo 1.24\n"), 0o644)
	os.WriteFile(dir+"/main.go", []byte("package main\n\nfunc main() { undefinedThing() }\n"), 0o644)
	err := Build(context.Background(), dir, dir+"/out.wasm")
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("undefinedThing")) {
		t.Fatalf("Build error = %v, want the compiler's message", err)
	}
	if _, statErr := os.Stat(dir + "/out.wasm"); statErr == nil {
		t.Fatal("a failed build left an output file")
	}
}

// TestInstallWritesOnlyChanges checks that Install puts the cached build in
// place, readable by others, and leaves the file alone (same inode, same
// modification time) when it has not changed, so a watching gateway does not
// reload it.
func TestInstallWritesOnlyChanges(t *testing.T) {
	ctx := context.Background()
	cache, outDir := t.TempDir(), t.TempDir()
	out := outDir + "/example-units.wasm"
	if err := Install(ctx, "../../modules/example-units", out, cache); err != nil {
		t.Fatal(err)
	}
	st1, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if st1.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st1.Mode().Perm())
	}
	p, err := Cached(ctx, "../../modules/example-units", cache)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(p)
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Fatal("installed module differs from the cached build")
	}
	if err := Install(ctx, "../../modules/example-units", out, cache); err != nil {
		t.Fatal(err)
	}
	st2, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(st1, st2) || !st2.ModTime().Equal(st1.ModTime()) {
		t.Error("an unchanged module was written again")
	}
}

// TestModulesCollectWithTheWorldStopped builds a reactor that allocates 32 MB
// in 1 KB pieces, with Build and with BuildGo, runs each with
// GODEBUG=gctrace=1 and reads the collector's trace: in Build's module
// (GuestGODEBUG) every cycle is marked by the collector's own worker with the
// world stopped, so no allocation assists at all; as the go tool writes it,
// the marking is done by assists, interleaved with the program.
func TestModulesCollectWithTheWorldStopped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(dir+"/go.mod", []byte("module churn\n\ngo 1.24\n"), 0o644)
	os.WriteFile(dir+"/main.go", []byte(`package main

var sink [][]byte

//go:wasmexport churn
func churn() {
	for i := 0; i < 32<<10; i++ {
		sink = append(sink[:i%64], make([]byte, 1024))
	}
}

func main() {}
`), 0o644)
	// gc N @T P%: clock phases ms clock, STW+assist/background/idle+STW ms cpu, ...
	cpuRe := regexp.MustCompile(`(?m)^gc \d+ .* ms clock, [0-9.]+\+([0-9.]+)/([0-9.]+)/[0-9.]+\+`)
	trace := func(build func(context.Context, string, string) error) [][]string {
		out := dir + "/churn.wasm"
		if err := build(ctx, dir, out); err != nil {
			t.Fatal(err)
		}
		wasm, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		rt := wazero.NewRuntime(ctx)
		defer rt.Close(ctx)
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		var stderr bytes.Buffer
		cfg := wazero.NewModuleConfig().WithStartFunctions("_initialize").WithEnv("GODEBUG", "gctrace=1").WithStderr(&stderr)
		mod, err := rt.InstantiateWithConfig(ctx, wasm, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mod.ExportedFunction("churn").Call(ctx); err != nil {
			t.Fatal(err)
		}
		cycles := cpuRe.FindAllStringSubmatch(stderr.String(), -1)
		if len(cycles) < 3 {
			t.Fatalf("want at least 3 collections in the trace, got:\n%s", stderr.String())
		}
		return cycles
	}
	ms := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	for _, c := range trace(Build) {
		if ms(c[1]) != 0 || ms(c[2]) == 0 {
			t.Errorf("Build's module: %q: want no assist time and the mark in the background worker", c[0])
		}
	}
	assisted := 0
	for _, c := range trace(BuildGo) {
		if ms(c[1]) > 0 {
			assisted++
		}
	}
	if assisted == 0 {
		t.Error("the go tool's module: no cycle marked by assists; the trace cannot tell the two apart")
	}
}
