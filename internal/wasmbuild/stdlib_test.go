package wasmbuild

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"toxgate/internal/reloop"
	"toxgate/internal/testenv"
)

// TestStdlibTestsPassRewritten runs the tests of standard library packages
// (compiled for wasip1 by go test -c) rewritten by reloop, then optimised by
// wasm-opt when it is installed, then finished by reloop.Finish, each step as
// modules are built: they must
// pass as they do unrewritten. sync and context block and switch goroutines all the
// time, so functions unwind and resume in the middle; the others are large,
// branchy code (parsers, sorting, reflection). When a package's
// tests fail here, the unrewritten binary is run too: failing both ways is
// this machine (a skip), failing only rewritten is a bug. TOXGATE_STDLIB_PKGS
// (space-separated import paths) replaces the list.
func TestStdlibTestsPassRewritten(t *testing.T) {
	goroot := runtime.GOROOT()
	pkgs := []string{"strconv", "sort", "regexp", "encoding/json", "sync", "context"}
	if list := os.Getenv("TOXGATE_STDLIB_PKGS"); list != "" {
		pkgs = strings.Fields(list) // e.g. "fmt strings math/big"
	}
	if opt, _ := Optimizer(context.Background()); opt == "" && os.Getenv("TOXGATE_WASM_OPT") != "off" {
		t.Run("rewritten and optimised", func(t *testing.T) { testenv.RequireTool(t, testenv.WasmOpt) })
	}
	for _, pkg := range pkgs {
		t.Run(pkg, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(t.TempDir(), "pkg.test.wasm")
			cmd := exec.Command("go", "test", "-c", "-o", bin, pkg)
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go test -c %s: %v\n%s", pkg, err, out)
			}
			plain, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			re, st, err := reloop.Module(plain)
			if err != nil {
				t.Fatal(err)
			}
			if st.Rewritten == 0 {
				t.Fatalf("nothing rewritten in %s's test binary", pkg)
			}
			builds := map[string][]byte{"rewritten": re}
			last := re
			if opt, _ := Optimizer(context.Background()); opt != "" {
				if err := os.WriteFile(bin, re, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := optimize(context.Background(), bin); err != nil {
					t.Fatal(err)
				}
				if builds["rewritten and optimised"], err = os.ReadFile(bin); err != nil {
					t.Fatal(err)
				}
				last = builds["rewritten and optimised"]
			}
			// Finish comes last, as in Build.
			fin, fst, err := reloop.Finish(last)
			if err != nil {
				t.Fatal(err)
			}
			if fst.Elses == 0 || fst.Undecodable > 0 {
				t.Fatalf("Finish on %s's test binary: %+v", pkg, fst)
			}
			builds["finished"] = fin
			dir := filepath.Join(goroot, "src", pkg)
			for name, wasm := range builds {
				out, ok := runTests(t, wasm, dir)
				if ok {
					continue
				}
				if _, okPlain := runTests(t, plain, dir); !okPlain {
					t.Skipf("%s's tests fail here even as Go built them:\n%s", pkg, tail(out))
				}
				t.Fatalf("%s's tests fail %s and pass as Go built them:\n%s", pkg, name, tail(out))
			}
		})
	}
}

// runTests runs a wasip1 test binary with the package directory mounted as
// its working directory and reports its output and whether it passed.
func runTests(t *testing.T, wasm []byte, dir string) (string, bool) {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	var out bytes.Buffer
	cfg := wazero.NewModuleConfig().WithStdout(&out).WithStderr(&out).
		WithSysNanotime().WithSysWalltime().WithSysNanosleep().WithRandSource(nil).
		WithFSConfig(wazero.NewFSConfig().WithReadOnlyDirMount(dir, "/")).WithEnv("PWD", "/").
		WithArgs("pkg.test", "-test.short", "-test.run", "^Test").WithName("")
	_, err := r.InstantiateWithConfig(ctx, wasm, cfg)
	var ee *sys.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 0) {
		return out.String() + "\n" + err.Error(), false
	}
	return out.String(), strings.HasSuffix(strings.TrimSpace(out.String()), "PASS")
}

// tail returns the last lines of s.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}
