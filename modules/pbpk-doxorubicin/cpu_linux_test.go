package main

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"toxgate/gateway/modulehost/wasmtest"
	"toxgate/modules/pbpk-doxorubicin/model"
)

// threadCPU is the CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// TestCPUTimeVsNative measures a 7-day run in the module (a pooled call, as
// gateway/modulehost's BenchmarkModelsVsNative, with the host's output check)
// beside the same code run natively (decode, Simulate, AppendJSON), in CPU
// time of the thread: on a shared, loaded machine the wall-clock benchmark
// varies by 2-3x, the thread's CPU time by a few percent. Run with
//
//	DOXO_CPU_CALLS=40 go test -run CPUTimeVsNative -v ./modules/pbpk-doxorubicin/
func TestCPUTimeVsNative(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("DOXO_CPU_CALLS"))
	if n <= 0 {
		t.Skip("set DOXO_CPU_CALLS to the number of calls to measure")
	}
	runtime.LockOSThread() // the module runs on the calling goroutine's thread
	defer runtime.UnlockOSThread()
	m := wasmtest.Load(t, ".")
	input := []byte(`{"dose_mg":60,"age":50,"weight":70,"height":190,"days":7}`)
	call := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := m.Call(ctx, 0, input); err != nil {
			t.Fatal(err)
		}
	}
	native := func() {
		var in model.Input
		if err := json.Unmarshal(input, &in); err != nil {
			t.Fatal(err)
		}
		out, err := model.Simulate(in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := out.AppendJSON(nil); err != nil {
			t.Fatal(err)
		}
	}
	call()
	native()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	var mod, nat, wall []float64
	for range n {
		c0, w0 := threadCPU(), time.Now()
		call()
		c1, w1 := threadCPU(), time.Now()
		native()
		c2 := threadCPU()
		mod, nat, wall = append(mod, ms(c1-c0)), append(nat, ms(c2-c1)), append(wall, ms(w1.Sub(w0)))
	}
	slices.Sort(mod)
	slices.Sort(nat)
	slices.Sort(wall)
	t.Logf("7-day run, thread CPU ms over %d calls: module min %.2f median %.2f, native min %.2f median %.2f, module/native (medians) %.2f; module wall ms min %.2f median %.2f",
		n, mod[0], mod[n/2], nat[0], nat[n/2], mod[n/2]/nat[n/2], wall[0], wall[n/2])
}
