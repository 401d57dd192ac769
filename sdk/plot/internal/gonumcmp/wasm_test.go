//go:build linux && !wasm

package gonumcmp

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

func wasmBuild(t *testing.T, out string, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), out)
	cmd := exec.Command("go", append(append([]string{}, args[0]), append([]string{"-trimpath", "-ldflags=-s -w", "-o", bin}, args[1:]...)...)...)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, b)
	}
	return bin
}

// TestWasm reports the size of a wasm program that draws the plot with each
// library, and runs BenchmarkDoxorubicin inside wasm (wazero, the clock the
// CPU time of the calling thread):
//
//	cd sdk/plot/internal/gonumcmp && go test -v -run Wasm .
func TestWasm(t *testing.T) {
	for _, name := range []string{"sdkplot", "gonum"} {
		bin := wasmBuild(t, name+".wasm", "build", "./cmd/"+name)
		st, err := os.Stat(bin)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes (%.2f MB) of wasm", name, st.Size(), float64(st.Size())/1e6)
	}
	bin := wasmBuild(t, "cmp.test.wasm", "test", "-c", ".")
	wasm, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs("../..") // sdk/plot, for its testdata
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
		WithArgs("cmp.test", "-test.run=^$", "-test.bench=.", "-test.benchmem", "-test.benchtime=2s").
		WithStdout(os.Stdout).WithStderr(os.Stderr).
		WithFSConfig(wazero.NewFSConfig().WithReadOnlyDirMount(dir, "/sdk/plot")).
		WithEnv("PWD", "/sdk/plot/internal/gonumcmp").
		WithNanotime(threadCPU, sys.ClockResolution(1)).
		WithWalltime(func() (int64, int32) { n := threadCPU(); return n / 1e9, int32(n % 1e9) }, sys.ClockResolution(1))
	if _, err := rt.InstantiateWithConfig(ctx, wasm, cfg); err != nil {
		if e, ok := err.(*sys.ExitError); !ok || e.ExitCode() != 0 {
			t.Fatal(err)
		}
	}
}
