package main

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"toxgate/gateway/modulehost/modtest"
	"toxgate/gateway/modulehost/wasmtest"
	"toxgate/modules/pbpk-doxorubicin/model"
	"toxgate/sdk/abi"
)

// threadCPU is the CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// BenchmarkCPUTimeVsNative measures a 7-day run in the module (a pooled call, as
// gateway/modulehost's BenchmarkModelsVsNative, with the host's fuel checks
// and output check) beside the same code run natively (decode, Simulate,
// AppendJSON) and the module's own code alone (plain wazero, no fuel checks,
// no output check), in CPU time of the thread: on a shared, loaded machine
// the wall-clock benchmark varies by 2-3x, the thread's CPU time by a few
// percent. Run with
//
//	go test -run '^$' -bench CPUTimeVsNative -benchtime 40x ./modules/pbpk-doxorubicin/
//
// It reports medians over b.N calls of each kind, in milliseconds.
func BenchmarkCPUTimeVsNative(b *testing.B) {
	t, n := b, b.N
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
	plain := plainCall(t, input)
	call()
	native()
	plain()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	var mod, nat, raw, wall []float64
	for range n {
		c0, w0 := threadCPU(), time.Now()
		call()
		c1, w1 := threadCPU(), time.Now()
		native()
		c2 := threadCPU()
		plain()
		c3 := threadCPU()
		mod, nat, raw = append(mod, ms(c1-c0)), append(nat, ms(c2-c1)), append(raw, ms(c3-c2))
		wall = append(wall, ms(w1.Sub(w0)))
	}
	for _, s := range [][]float64{mod, nat, raw, wall} {
		slices.Sort(s)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(mod[n/2], "module-cpu-ms")
	b.ReportMetric(nat[n/2], "native-cpu-ms")
	b.ReportMetric(mod[n/2]/nat[n/2], "module/native")
	b.ReportMetric(raw[n/2], "plain-wazero-cpu-ms")
	b.ReportMetric(wall[n/2], "module-wall-ms")
}

// plainCall instantiates the module in a plain wazero runtime (WASI and a
// no-op toxgate.log; no fuel instrumentation) and returns a call of its first
// route with input, the result left unread.
func plainCall(t testing.TB, input []byte) func() {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	_, err := rt.NewHostModuleBuilder(abi.ImportModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) {}),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, nil).
		Export(abi.ImportLog).Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := rt.InstantiateWithConfig(ctx, modtest.Wasm(t, "."),
		wazero.NewModuleConfig().WithName("").WithStartFunctions(abi.ExportInitialize))
	if err != nil {
		t.Fatal(err)
	}
	alloc, eval := mod.ExportedFunction(abi.ExportAlloc), mod.ExportedFunction(abi.ExportEvaluate)
	return func() {
		r, err := alloc.Call(ctx, uint64(len(input)))
		if err != nil {
			t.Fatal(err)
		}
		if !mod.Memory().Write(uint32(r[0]), input) {
			t.Fatal("input outside guest memory")
		}
		if _, err := eval.Call(ctx, 0, r[0], uint64(len(input))); err != nil {
			t.Fatal(err)
		}
	}
}
