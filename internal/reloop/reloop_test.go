package reloop

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// buildGoProg builds testdata/goprog for wasip1 (as a command) and returns
// the module.
func buildGoProg(t testing.TB) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "goprog.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = "testdata/goprog"
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building testdata/goprog: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runCommand runs a wasip1 command module in wazero and returns its stdout.
func runCommand(t testing.TB, wasm []byte) string {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	var stdout, stderr bytes.Buffer
	cfg := wazero.NewModuleConfig().WithStdout(&stdout).WithStderr(&stderr).WithName("")
	if _, err := r.InstantiateWithConfig(ctx, wasm, cfg); err != nil {
		t.Fatalf("running the module: %v\nstderr: %s", err, stderr.String())
	}
	return stdout.String()
}

// TestRewrittenGoProgramBehavesTheSame runs a Go program that exercises loops,
// goto, stack growth, panics, recover and goroutines blocking inside loops
// (which unwind the wasm stack and resume in the middle of functions), once as
// the go tool built it and once rewritten; both must print what the program
// prints natively (testdata/goprog.want, written by `go run .` in
// testdata/goprog).
func TestRewrittenGoProgramBehavesTheSame(t *testing.T) {
	want, err := os.ReadFile("testdata/goprog.want")
	if err != nil {
		t.Fatal(err)
	}
	plain := buildGoProg(t)
	re, st, err := Module(plain)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d functions rewritten (%d skipped), %d jumps made direct, %d -> %d bytes",
		st.Rewritten, st.Functions, st.Skipped, st.Jumps, st.InBytes, st.OutBytes)
	if st.Rewritten < st.Functions/2 || st.Jumps == 0 {
		t.Errorf("rewrote only %d of %d functions (%d jumps)", st.Rewritten, st.Functions, st.Jumps)
	}
	names, err := BodyNames(plain)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range names {
		found = found || n == "main.fib"
	}
	if !found {
		t.Errorf("BodyNames found %d names, not main.fib", len(names))
	}
	for _, s := range st.SkippedBodies {
		t.Logf("skipped body %d %s: %s", s.Body, names[s.Body], s.Reason)
	}
	if got := runCommand(t, plain); got != string(want) {
		t.Fatalf("the module as Go built it prints\n%s\nwant\n%s", got, want)
	}
	if got := runCommand(t, re); got != string(want) {
		t.Fatalf("the rewritten module prints\n%s\nwant\n%s", got, want)
	}
	// Rewriting is deterministic, and a rewritten module is left as it is.
	again, _, err := Module(plain)
	if err != nil || !bytes.Equal(again, re) {
		t.Fatal("a second rewrite of the same module differs")
	}
	twice, st2, err := Module(re)
	if err != nil || !st2.Already || !bytes.Equal(twice, re) {
		t.Fatalf("rewriting a rewritten module changed it: %+v, %v", st2, err)
	}
}

// TestModuleLeavesOtherCodeAlone checks that a module without Go's dispatch
// loops comes back byte for byte.
func TestModuleLeavesOtherCodeAlone(t *testing.T) {
	// (module (func (export "f") (param i32) (result i32)
	//   block local.get 0 br_if 0 end loop br 0 end unreachable))
	mod := []byte{
		0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 6, 1, 0x60, 1, 0x7f, 1, 0x7f, // type
		3, 2, 1, 0, // func
		7, 5, 1, 1, 'f', 0, 0, // export
		10, 22, 1, 20, 0, // code: one body, no locals
		0x02, 0x40, 0x20, 0, 0x0d, 0, 0x0b,
		0x03, 0x40, 0x0c, 0, 0x0b,
		0x00,
		0x41, 0x00, 0x1a, // i32.const 0, drop
		0x41, 0x00, // i32.const 0
		0x0b,
	}
	out, st, err := Module(mod)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rewritten != 0 || !bytes.Equal(out, mod) {
		t.Fatalf("rewrote a module without Go's shape: %+v", st)
	}
	if _, err := wazero.NewRuntime(context.Background()).CompileModule(context.Background(), out); err != nil {
		t.Fatalf("the test module is not valid: %v", err)
	}
}

// TestModuleRefusesBadInput checks the errors for input that is not a module.
func TestModuleRefusesBadInput(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":         nil,
		"not wasm":      []byte("hello, world"),
		"version 2":     {0, 'a', 's', 'm', 2, 0, 0, 0},
		"section size":  {0, 'a', 's', 'm', 1, 0, 0, 0, 10, 0x7f},
		"body size":     {0, 'a', 's', 'm', 1, 0, 0, 0, 10, 3, 1, 9, 0},
		"trailing code": {0, 'a', 's', 'm', 1, 0, 0, 0, 10, 5, 1, 2, 0, 0x0b, 0},
	} {
		if _, _, err := Module(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestModuleSkipsCodeItCannotDecode checks that a body with an instruction
// reloop does not know is left as it is, with the reason.
func TestModuleSkipsCodeItCannotDecode(t *testing.T) {
	mod := []byte{0, 'a', 's', 'm', 1, 0, 0, 0, 10, 5, 1, 3, 0, 0xfd, 0x0b}
	out, st, err := Module(mod)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, mod) || st.Skipped != 1 || len(st.SkippedBodies) != 1 {
		t.Fatalf("got %+v", st)
	}
	t.Log(st.SkippedBodies[0].Reason)
}

// FuzzModule feeds Module arbitrary bytes: it must answer an error or a
// module, never panic or hang.
func FuzzModule(f *testing.F) {
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0})
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0, 10, 5, 1, 3, 0, 0x0b, 0x0b})
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0, 10, 19, 1, 17, 0,
		0x03, 0x40, 0x02, 0x40, 0x02, 0x40, 0x20, 0, 0x0e, 1, 0, 1, 0x0b, 0x0b, 0x0b, 0x00, 0x0b, 0x0b})
	f.Fuzz(func(t *testing.T, b []byte) {
		Module(b)
	})
}
