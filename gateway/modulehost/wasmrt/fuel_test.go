package wasmrt

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"toxgate/gateway/modulehost/modtest"
	"toxgate/internal/wasmbin"
	"toxgate/sdk/abi"
)

// wasmSection encodes one section.
func wasmSection(id byte, content ...[]byte) []byte {
	var p []byte
	for _, c := range content {
		p = append(p, c...)
	}
	return append(wasmbin.AppendUint32([]byte{id}, uint32(len(p))), p...)
}

func vec(items ...[]byte) []byte {
	p := wasmbin.AppendUint32(nil, uint32(len(items)))
	for _, it := range items {
		p = append(p, it...)
	}
	return p
}

func body(code ...byte) []byte { return bodyLocals([]byte{0}, code...) }

// bodyLocals encodes a function body with the given locals header.
func bodyLocals(locals []byte, code ...byte) []byte {
	b := append(append([]byte(nil), locals...), code...)
	return append(wasmbin.AppendUint32(nil, uint32(len(b))), b...)
}

// fuelTestModule is a hand-assembled module exercising everything the rewriter
// renumbers: an import, calls, call_indirect through an active element
// segment, a funcref global initialised with ref.func, the start function,
// exports and the name section, plus two runaway shapes (a loop, and a call
// tree without loops).
func fuelTestModule() []byte {
	m := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	m = append(m, wasmSection(1, vec(
		[]byte{0x60, 0, 0},             // 0: () -> ()
		[]byte{0x60, 0, 1, 0x7f},       // 1: () -> i32
		[]byte{0x60, 1, 0x7f, 1, 0x7f}, // 2: (i32) -> i32
	))...)
	m = append(m, wasmSection(2, vec(append(wasmbin.AppendName(wasmbin.AppendName(nil, "env"), "one"), 0x00, 1)))...) // func 0
	// Defined functions 1..7: spin, fanout, sum, seven, start, started, trap;
	// 8..14: spinIf, spinTable, spinNested, spinParam, countIf, countBr, spinManyEdges.
	m = append(m, wasmSection(3, vec([]byte{0}, []byte{2}, []byte{1}, []byte{1}, []byte{0}, []byte{1}, []byte{0},
		[]byte{0}, []byte{0}, []byte{0}, []byte{0}, []byte{1}, []byte{1}, []byte{0}))...)
	m = append(m, wasmSection(4, vec([]byte{0x70, 0x00, 2}))...) // table funcref min 2
	m = append(m, wasmSection(6, vec(
		[]byte{0x7f, 0x01, 0x41, 0x00, 0x0b}, // global 0: mut i32 = 0
		[]byte{0x70, 0x00, 0xd2, 4, 0x0b},    // global 1: funcref = ref.func 4 (seven)
	))...)
	m = append(m, wasmSection(7, vec(
		append(wasmbin.AppendName(nil, "spin"), 0, 1),
		append(wasmbin.AppendName(nil, "fanout"), 0, 2),
		append(wasmbin.AppendName(nil, "sum"), 0, 3),
		append(wasmbin.AppendName(nil, "started"), 0, 6),
		append(wasmbin.AppendName(nil, "trap"), 0, 7),
		append(wasmbin.AppendName(nil, "spinIf"), 0, 8),
		append(wasmbin.AppendName(nil, "spinTable"), 0, 9),
		append(wasmbin.AppendName(nil, "spinNested"), 0, 10),
		append(wasmbin.AppendName(nil, "spinParam"), 0, 11),
		append(wasmbin.AppendName(nil, "countIf"), 0, 12),
		append(wasmbin.AppendName(nil, "countBr"), 0, 13),
		append(wasmbin.AppendName(nil, "spinManyEdges"), 0, 14),
	))...)
	m = append(m, wasmSection(8, []byte{5})...)                                 // start: func 5
	m = append(m, wasmSection(9, vec([]byte{0x00, 0x41, 0x00, 0x0b, 1, 4}))...) // table[0] = seven
	m = append(m, wasmSection(10, vec(
		body(0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b), // spin: loop br 0 end
		// fanout(n): if n == 0 { 1 } else { fanout(n-1) + fanout(n-1) }
		body(0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x01, 0x05,
			0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 2,
			0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 2, 0x6a, 0x0b, 0x0b),
		// sum: call_indirect table[0] + env.one() + (table[1] = global 1; call_indirect table[1])
		body(0x41, 0x00, 0x11, 1, 0x00,
			0x10, 0,
			0x6a,
			0x41, 0x01, 0x23, 1, 0x26, 0x00,
			0x41, 0x01, 0x11, 1, 0x00,
			0x6a, 0x0b),
		body(0x41, 0x07, 0x0b),           // seven
		body(0x41, 42, 0x24, 0x00, 0x0b), // start: global 0 = 42
		body(0x23, 0x00, 0x0b),           // started
		body(0x00, 0x0b),                 // trap: unreachable
		// The back edges of loops take every form: br_if, br_table, br from
		// inside a block, and a loop with a parameter (type 2).
		body(0x03, 0x40, 0x41, 0x01, 0x0d, 0x00, 0x0b, 0x0b),             // spinIf: loop i32.const 1 br_if 0 end
		body(0x03, 0x40, 0x41, 0x00, 0x0e, 0x01, 0x00, 0x00, 0x0b, 0x0b), // spinTable: loop br_table 0 0 end
		body(0x03, 0x40, 0x02, 0x40, 0x0c, 0x01, 0x0b, 0x0b, 0x0b),       // spinNested: loop block br 1 end end
		body(0x41, 0x00, 0x03, 0x02, 0x0c, 0x00, 0x0b, 0x1a, 0x0b),       // spinParam: i32.const 0 loop (i32)->i32 br 0 end drop
		// countIf: (local i32) loop x = x+1; br_if 0 (x < 1000) end; x
		bodyLocals([]byte{1, 1, 0x7f}, 0x03, 0x40, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x22, 0x00,
			0x41, 0xe8, 0x07, 0x49, 0x0d, 0x00, 0x0b, 0x20, 0x00, 0x0b),
		// countBr: (local i32) loop x = x+1; if (x < 1000) br 1 end end; x
		bodyLocals([]byte{1, 1, 0x7f}, 0x03, 0x40, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x22, 0x00,
			0x41, 0xe8, 0x07, 0x49, 0x04, 0x40, 0x0c, 0x01, 0x0b, 0x0b, 0x20, 0x00, 0x0b),
		// spinManyEdges: loop (i32.const 0 br_if 0) x 9; br 0 end — more back
		// edges than maxBackEdges, so counted at the header
		body(append(append([]byte{0x03, 0x40}, bytes.Repeat([]byte{0x41, 0x00, 0x0d, 0x00}, 9)...), 0x0c, 0x00, 0x0b, 0x0b)...),
	))...)
	names := vec(
		append(wasmbin.AppendUint32(nil, 0), wasmbin.AppendName(nil, "one")...),
		append(wasmbin.AppendUint32(nil, 1), wasmbin.AppendName(nil, "spin")...),
		append(wasmbin.AppendUint32(nil, 2), wasmbin.AppendName(nil, "fanout")...),
		append(wasmbin.AppendUint32(nil, 7), wasmbin.AppendName(nil, "trap_here")...),
	)
	m = append(m, wasmSection(0, wasmbin.AppendName(nil, "name"), []byte{1}, wasmbin.AppendUint32(nil, uint32(len(names))), names)...)
	m = append(m, wasmSection(0, wasmbin.AppendName(nil, ".debug_info"), []byte{1, 2, 3})...)
	return m
}

func instantiateFuel(t *testing.T, wasm []byte) api.Module {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(false))
	t.Cleanup(func() { rt.Close(ctx) })
	_, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) { s[0] = 1 }), nil, []api.ValueType{api.ValueTypeI32}).
		Export("one").Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.NewHostModuleBuilder(fuelModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(refuel), nil, []api.ValueType{api.ValueTypeI32}).
		Export(fuelName).Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatalf("instantiating the instrumented module: %v", err)
	}
	return mod
}

func TestFuelKeepsSemanticsAndRenumbers(t *testing.T) {
	orig := fuelTestModule()
	if _, err := wazero.NewRuntime(context.Background()).CompileModule(context.Background(), orig); err != nil {
		t.Fatalf("the test module itself is invalid: %v", err)
	}
	wasm, err := instrumentFuel(orig)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(wasm), ".debug_info") {
		t.Fatal("DWARF section kept")
	}
	mod := instantiateFuel(t, wasm)
	ctx := context.Background()
	for name, want := range map[string]uint64{"sum": 15, "started": 42, "countIf": 1000, "countBr": 1000} {
		res, err := mod.ExportedFunction(name).Call(ctx)
		if err != nil || res[0] != want {
			t.Fatalf("%s() = %v, %v; want %d", name, res, err, want)
		}
	}
	res, err := mod.ExportedFunction("fanout").Call(ctx, 10)
	if err != nil || res[0] != 1024 {
		t.Fatalf("fanout(10) = %v, %v; want 1024", res, err)
	}
	_, err = mod.ExportedFunction("trap").Call(ctx)
	if err == nil || !strings.Contains(err.Error(), "trap_here") {
		t.Fatalf("trap error = %v; want the renumbered name in the stack trace", err)
	}
}

func TestFuelStopsRunawayShapes(t *testing.T) {
	wasm, err := instrumentFuel(fuelTestModule())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fn     string
		params []uint64
	}{{"spin", nil}, {"fanout", []uint64{60}}, {"spinIf", nil}, {"spinTable", nil}, {"spinNested", nil}, {"spinParam", nil}, {"spinManyEdges", nil}} {
		t.Run(c.fn, func(t *testing.T) {
			mod := instantiateFuel(t, wasm)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := mod.ExportedFunction(c.fn).Call(ctx, c.params...)
			var ee *sys.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != sys.ExitCodeDeadlineExceeded {
				t.Fatalf("error = %v, want exit on deadline", err)
			}
			if took := time.Since(start); took > time.Second {
				t.Fatalf("stopped after %v", took)
			}
			if !mod.IsClosed() {
				t.Fatal("module not closed")
			}
		})
	}
	t.Run("canceled", func(t *testing.T) {
		mod := instantiateFuel(t, wasm)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := mod.ExportedFunction("spin").Call(ctx)
		var ee *sys.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != sys.ExitCodeContextCanceled {
			t.Fatalf("error = %v, want exit on cancel", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		mod := instantiateFuel(t, wasm)
		time.AfterFunc(20*time.Millisecond, func() { mod.Close(context.Background()) })
		_, err := mod.ExportedFunction("spin").Call(context.Background())
		if err == nil {
			t.Fatal("spin returned after Close without an error")
		}
	})
}

func TestFuelRefusesWhatItDoesNotKnow(t *testing.T) {
	m := fuelTestModule()
	// Turn spin's loop into an unknown opcode (0xd6 br_on_non_null).
	i := strings.Index(string(m), string([]byte{0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b}))
	bad := append([]byte(nil), m...)
	bad[i] = 0xd6
	if _, err := instrumentFuel(bad); !errors.Is(err, errFuelUnsupported) {
		t.Fatalf("unknown opcode: %v", err)
	}
	if _, err := instrumentFuel([]byte("garbage")); !errors.Is(err, errFuelUnsupported) {
		t.Fatalf("garbage: %v", err)
	}
	already := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	already = append(already, wasmSection(1, vec([]byte{0x60, 0, 1, 0x7f}))...)
	already = append(already, wasmSection(2, vec(append(wasmbin.AppendName(wasmbin.AppendName(nil, fuelModule), fuelName), 0x00, 0)))...)
	if _, err := instrumentFuel(already); !errors.Is(err, errFuelUnsupported) {
		t.Fatalf("a module importing the fuel function: %v", err)
	}
}

// Every Go module the tests build is instrumented, not left to the slow path.
func TestGoModulesAreInstrumented(t *testing.T) {
	for _, dir := range []string{"../testdata/faults", "../../../modules/example-units"} {
		if _, err := instrumentFuel(modtest.Wasm(t, dir)); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
	if m := load(t, "../testdata/faults", Options{}); !m.fuel {
		t.Error("Load did not instrument the faults module")
	}
}

// More runaway calls than processors: every one still ends at its deadline,
// since the fuel check compares the clock itself and leaves native code.
func TestConcurrentRunawayCallsAllTimeOut(t *testing.T) {
	m := load(t, "../testdata/faults", Options{})
	n := 2*runtime.GOMAXPROCS(0) + 1
	errs := make(chan error, n)
	start := time.Now()
	for range n {
		go func() {
			_, err := call(t, m, "/faults/loop", `{}`, 200*time.Millisecond)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; failureKind(err) != FailTimeout && failureKind(err) != FailBusy {
			t.Errorf("error = %v, want timeout (or busy when the pool is full)", err)
		}
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("%d runaway calls took %v", n, took)
	}
}

// A new instance whose initialization the fuel check stopped at the deadline
// is a timeout even before ctx's own timer has fired (the race CI once hit).
func TestInstanceFailureKinds(t *testing.T) {
	live := context.Background()
	canceled, cancel := context.WithCancel(live)
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want FailureKind
	}{
		{live, sys.NewExitError(sys.ExitCodeDeadlineExceeded), FailTimeout},
		{canceled, context.Canceled, FailCanceled},
		{live, sys.NewExitError(sys.ExitCodeContextCanceled), FailCanceled},
		{live, context.DeadlineExceeded, FailBusy},
		{live, errors.New("start: bad import"), FailCrash},
	} {
		if got := instanceFailure(c.ctx, c.err); got != c.want {
			t.Errorf("instanceFailure(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}

// TestFuelMarkerChoosesBackEdges checks the two ways a loop with more back
// edges than maxBackEdges is counted: at its header in a module as the go
// tool writes it (one count), on every back edge in a module that carries
// reloop's marker (a count per edge, so the module grows). Both must stop
// the runaway loop and keep the finite ones right.
func TestFuelMarkerChoosesBackEdges(t *testing.T) {
	plain := fuelTestModule()
	marked := append(append([]byte(nil), plain...), wasmSection(0, wasmbin.AppendName(nil, abi.ReloopSection), []byte{'1'})...)
	plainOut, err := instrumentFuel(plain)
	if err != nil {
		t.Fatal(err)
	}
	markedOut, err := instrumentFuel(marked)
	if err != nil {
		t.Fatal(err)
	}
	// spinManyEdges has 10 back edges: counted on each, each gets an add, a
	// compare, a branch, a reset and a call of $tick (well over 10 bytes).
	if grow := len(markedOut) - len(plainOut) - (len(marked) - len(plain)); grow < 10*10 {
		t.Fatalf("the marked module grew by %d bytes more than the plain one; its many-edge loop is not counted on its back edges", grow)
	}
	for name, wasm := range map[string][]byte{"plain": plainOut, "marked": markedOut} {
		mod := instantiateFuel(t, wasm)
		for fn, want := range map[string]uint64{"countIf": 1000, "countBr": 1000} {
			if res, err := mod.ExportedFunction(fn).Call(context.Background()); err != nil || res[0] != want {
				t.Fatalf("%s: %s() = %v, %v; want %d", name, fn, res, err, want)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := mod.ExportedFunction("spinManyEdges").Call(ctx)
		cancel()
		var ee *sys.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != sys.ExitCodeDeadlineExceeded {
			t.Fatalf("%s: spinManyEdges error = %v, want exit on deadline", name, err)
		}
	}
}
