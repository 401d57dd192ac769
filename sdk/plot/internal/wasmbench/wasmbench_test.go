//go:build linux

// Package wasmbench runs sdk/plot's benchmarks inside WebAssembly, as the
// model modules run the plot: the package's test binary built for wasip1 and
// run by wazero, its clock the CPU time of the calling thread (so the
// reported ns/op are CPU time of the wasm code, steady on a loaded machine).
//
//	PLOT_WASM_BENCH='Doxorubicin' go test -v -run WasmBench ./sdk/plot/internal/wasmbench/
//	PLOT_WASM_RUN=. go test -v -run WasmBench ./sdk/plot/internal/wasmbench/
//
// PLOT_WASM_BENCH is the -test.bench pattern; PLOT_WASM_BENCHTIME the
// -test.benchtime (default 1s); PLOT_WASM_RUN the -test.run pattern: the
// package's tests inside wasm (the golden digests as the modules compute
// them, the checks of random plots, Thin against its reference, and
// TestLog10MatchesMath, which checks the wasm-only Log10 bit for bit). With neither set, as in make
// test, every test of the package runs inside wasm and a failure fails this
// test.
package wasmbench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0) // CLOCK_THREAD_CPUTIME_ID
	return ts.Nano()
}

func TestWasmBench(t *testing.T) {
	pattern, run := os.Getenv("PLOT_WASM_BENCH"), os.Getenv("PLOT_WASM_RUN")
	if pattern == "" && run == "" {
		run = "." // by default (make test): every test of the package, inside wasm
	}
	args := []string{"plot.test", "-test.v", "-test.run=^$"}
	if run != "" {
		args[2] = "-test.run=" + run
	}
	benchtime := os.Getenv("PLOT_WASM_BENCHTIME")
	if benchtime == "" {
		benchtime = "1s"
	}
	if pattern != "" {
		args = append(args, "-test.bench="+pattern, "-test.benchtime="+benchtime, "-test.benchmem")
	}
	dir, err := filepath.Abs("../..") // sdk/plot
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "plot.test.wasm")
	cmd := exec.Command("go", "test", "-c", "-trimpath", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the wasm test binary: %v\n%s", err, out)
	}
	wasm, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread() // wazero runs the guest on the calling thread
	defer runtime.UnlockOSThread()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	cfg := wazero.NewModuleConfig().
		WithArgs(args...).
		WithStdout(os.Stdout).WithStderr(os.Stderr).
		WithFSConfig(wazero.NewFSConfig().WithReadOnlyDirMount(dir, "/")).
		WithNanotime(threadCPU, sys.ClockResolution(1)).
		WithWalltime(func() (int64, int32) { n := threadCPU(); return n / 1e9, int32(n % 1e9) }, sys.ClockResolution(1))
	if _, err := rt.InstantiateWithConfig(ctx, wasm, cfg); err != nil {
		if e, ok := err.(*sys.ExitError); !ok || e.ExitCode() != 0 {
			t.Fatal(err) // the failures are in the output above
		}
	}
}
