package wasmbuild

import (
	"bytes"
	"context"
	"os"
	"testing"
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
