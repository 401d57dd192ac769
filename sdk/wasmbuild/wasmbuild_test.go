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
