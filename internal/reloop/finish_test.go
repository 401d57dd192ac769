package reloop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"

	"toxgate/internal/testenv"
	"toxgate/internal/wasmbin"
)

// TestFinishedGoProgramBehavesTheSame runs testdata/goprog rewritten and
// finished, and, when binaryen's wasm-opt is installed, rewritten, optimised
// and finished as modules are built: it must print what it prints natively.
func TestFinishedGoProgramBehavesTheSame(t *testing.T) {
	want, err := os.ReadFile("testdata/goprog.want")
	if err != nil {
		t.Fatal(err)
	}
	re, _, err := Module(buildGoProg(t))
	if err != nil {
		t.Fatal(err)
	}
	builds := map[string][]byte{"rewritten": re}
	if opt, err := testenv.Find(testenv.WasmOpt); err != nil {
		t.Run("rewritten and optimised", func(t *testing.T) { testenv.Missing(t, testenv.WasmOpt, err.Error()) })
	} else {
		in, out := filepath.Join(t.TempDir(), "in.wasm"), filepath.Join(t.TempDir(), "out.wasm")
		if err := os.WriteFile(in, re, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(opt, "-O2", "--enable-bulk-memory", "--enable-sign-ext", "--enable-nontrapping-float-to-int", in, "-o", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("wasm-opt: %v\n%s", err, b)
		}
		if builds["rewritten and optimised"], err = os.ReadFile(out); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range builds {
		fin, st, err := Finish(b)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", name, st)
		if st.Elses == 0 || st.WrapReuses == 0 || st.Undecodable != 0 {
			t.Errorf("%s: Finish did little: %+v", name, st)
		}
		if name == "rewritten and optimised" && st.FrameFolds == 0 {
			t.Errorf("%s: no frame slot address folded: %+v", name, st)
		}
		if got := runCommand(t, fin); got != string(want) {
			t.Fatalf("%s and finished, the module prints\n%s\nwant\n%s", name, got, want)
		}
		again, _, err := Finish(b)
		if err != nil || !bytes.Equal(again, fin) {
			t.Fatal("Finish is not deterministic")
		}
	}
}

// finishCase is a function of the test module of TestFinishRewrites: its body
// (locals and code), the value it must return, and what Finish must do to it.
type finishCase struct {
	name   string
	body   []byte
	want   uint32
	folds  int
	reuses int
	elses  int
	args   int // argument loads read from a local
	// frame accesses moved to the frame base, and probes before
	// straight-line accesses
	rebases, probes int
	traps           bool // the function traps (before and after Finish)
}

// testModule assembles a module with one page of memory, global 0 (a mutable
// i32 starting at 1024, standing for Go's SP) and one exported function
// (param i32) (result i32) per body, named f0, f1...
func testModule(bodies [][]byte) []byte {
	sec := func(out []byte, id byte, payload []byte) []byte {
		out = wasmbin.AppendUint32(append(out, id), uint32(len(payload)))
		return append(out, payload...)
	}
	m := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	m = sec(m, 1, []byte{1, 0x60, 1, 0x7f, 1, 0x7f})
	funcs := wasmbin.AppendUint32(nil, uint32(len(bodies)))
	exports := wasmbin.AppendUint32(nil, uint32(len(bodies)))
	code := wasmbin.AppendUint32(nil, uint32(len(bodies)))
	for i, b := range bodies {
		funcs = append(funcs, 0)
		name := []byte(fmt.Sprintf("f%d", i))
		exports = append(wasmbin.AppendUint32(exports, uint32(len(name))), name...)
		exports = wasmbin.AppendUint32(append(exports, 0), uint32(i)) // kind func, index
		code = append(wasmbin.AppendUint32(code, uint32(len(b))), b...)
	}
	m = sec(m, 3, funcs)
	m = sec(m, 5, []byte{1, 0, 1})                            // memory 1 page
	m = sec(m, 6, []byte{1, 0x7f, 1, 0x41, 0x80, 0x08, 0x0b}) // global mut i32 = 1024
	m = sec(m, 7, exports)
	return sec(m, 10, code)
}

// TestFinishRewrites runs small functions before and after Finish: each must
// return the same value, and Finish must have rewritten what it should and
// left the rest.
func TestFinishRewrites(t *testing.T) {
	// The long form of the address of frame slot k: local.get 1;
	// i64.extend_i32_u; i64.const k; i64.add; i32.wrap_i64.
	slot := func(k byte) string { return "\x20\x01\xad\x42" + string([]byte{k}) + "\x7c\xa7" }
	cases := []finishCase{{
		name: "frame slot store and load",
		// (local i32) SP; store 42 at slot 16 (offset 4), load it back at offset 20
		body: []byte("\x01\x01\x7f" + getSP + slot(16) + "\x41\x2a\x36\x02\x04" + "\x20\x01\x28\x02\x14" + "\x0b"),
		want: 42, folds: 1,
	}, {
		name: "frame slot address as binaryen writes it",
		// local.get 1; i64.extend_i32_u; i64.const -16; i64.sub; i32.wrap_i64
		body: []byte("\x01\x01\x7f" + getSP + "\x20\x01\xad\x42\x70\x7d\xa7" + "\x41\x2b\x36\x02\x04" + "\x20\x01\x28\x02\x14" + "\x0b"),
		want: 43, folds: 1,
	}, {
		name: "frame slot address used as a value",
		// the long form stored as a value is not folded; returns SP+8 = 1032
		body: []byte("\x01\x01\x7f" + getSP + slot(8) + "\x0b"),
		want: 1032,
	}, {
		name: "pointer converted twice",
		// (local i64) p=100; store 7 at p; load at p (second conversion reused)
		body: []byte("\x01\x01\x7e" + "\x42\xe4\x00\x21\x01" +
			"\x20\x01\xa7\x41\x07\x36\x02\x00" + "\x20\x01\xa7\x28\x02\x00" + "\x0b"),
		want: 7, reuses: 1,
	}, {
		name: "pointer changed between conversions",
		// p=100; store 7 at p; p=104; store 9 at p; load at p-4... via a new conversion of p
		body: []byte("\x01\x01\x7e" + "\x42\xe4\x00\x21\x01" +
			"\x20\x01\xa7\x41\x07\x36\x02\x00" +
			"\x42\xe8\x00\x21\x01" + "\x20\x01\xa7\x41\x09\x36\x02\x00" +
			"\x20\x01\xa7\x28\x02\x00" + "\x0b"),
		want: 9, reuses: 1,
	}, {
		name: "pointer set in one arm of an if",
		// p=100; store 5 at p; if (param) { p=200; store 6 at p } else {}; load at p
		body: []byte("\x01\x01\x7e" + "\x42\xe4\x00\x21\x01" +
			"\x20\x01\xa7\x41\x05\x36\x02\x00" +
			"\x20\x00\x04\x40" + "\x42\xc8\x01\x21\x01" + "\x20\x01\xa7\x41\x06\x36\x02\x00" + "\x0b" +
			"\x20\x01\xa7\x28\x02\x00" + "\x0b"),
		want: 5, elses: 1, // the param is 0: p stays 100; the load after the if converts anew
	}, {
		name: "pointer unchanged across an if",
		// p=100; store 3 at p; if (param) { nop }; load at p: reused across the if
		body: []byte("\x01\x01\x7e" + "\x42\xe4\x00\x21\x01" +
			"\x20\x01\xa7\x41\x03\x36\x02\x00" +
			"\x20\x00\x04\x40\x01\x0b" +
			"\x20\x01\xa7\x28\x02\x00" + "\x0b"),
		want: 3, reuses: 1, elses: 1,
	}, {
		name: "conversion inside a loop",
		// p=100; store 1 at p; loop { load at p; drop }; load at p: neither the
		// loop's conversion nor the one after it is taken from before the loop
		body: []byte("\x01\x01\x7e" + "\x42\xe4\x00\x21\x01" +
			"\x20\x01\xa7\x41\x01\x36\x02\x00" +
			"\x03\x40" + "\x20\x01\xa7\x28\x02\x00\x1a" + "\x0b" +
			"\x20\x01\xa7\x28\x02\x00" + "\x0b"),
		want: 1, // nothing is reused across a loop
	}}
	cases = append(cases, argCases(len(cases))...)
	callee := len(cases) - len(argCases(0)) // the first of argCases pops
	cases = append(cases, frameCases(callee)...)
	cases = append(cases, probeCases(callee)...)
	var bodies [][]byte
	for _, c := range cases {
		bodies = append(bodies, c.body)
	}
	mod := testModule(bodies)
	fin, st, err := Finish(mod)
	if err != nil {
		t.Fatal(err)
	}
	var want FinishStats
	for _, c := range cases {
		want.FrameFolds += c.folds
		want.WrapReuses += c.reuses
		want.Elses += c.elses
		want.ArgReads += c.args
		want.FrameRebases += c.rebases
		want.Probes += c.probes
	}
	want.Bodies = len(cases)
	if st != want {
		t.Errorf("Finish did %+v, want %+v", st, want)
	}
	ctx := context.Background()
	for name, wasm := range map[string][]byte{"as written": mod, "finished": fin} {
		r := wazero.NewRuntime(ctx)
		m, err := r.Instantiate(ctx, wasm)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, c := range cases {
			res, err := m.ExportedFunction(fmt.Sprintf("f%d", i)).Call(ctx, 0)
			if c.traps {
				if err == nil {
					t.Errorf("%s: %s did not trap", name, c.name)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %s: %v", name, c.name, err)
			}
			if uint32(res[0]) != c.want {
				t.Errorf("%s: %s returned %d, want %d", name, c.name, uint32(res[0]), c.want)
			}
		}
		r.Close(ctx)
	}
}

// TestFinishRefusesBadInput checks the errors for input that is not a module,
// and that a body Finish cannot decode is left as it is.
func TestFinishRefusesBadInput(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":        nil,
		"not wasm":     []byte("hello, world"),
		"section size": {0, 'a', 's', 'm', 1, 0, 0, 0, 10, 0x7f},
		"body size":    {0, 'a', 's', 'm', 1, 0, 0, 0, 10, 3, 1, 9, 0},
	} {
		if _, _, err := Finish(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	mod := []byte{0, 'a', 's', 'm', 1, 0, 0, 0, 10, 5, 1, 3, 0, 0xfd, 0x0b}
	out, st, err := Finish(mod)
	if err != nil || !bytes.Equal(out, mod) || st.Undecodable != 1 {
		t.Fatalf("got %+v, %v", st, err)
	}
}

// FuzzFinish feeds Finish arbitrary bytes: it must answer an error or a
// module, never panic or hang.
func FuzzFinish(f *testing.F) {
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0})
	f.Add(testModule([][]byte{[]byte("\x01\x01\x7e\x42\x01\x21\x01\x20\x01\xa7\x20\x01\xa7\x1a\x1a\x41\x00\x0b")}))
	f.Fuzz(func(t *testing.T, b []byte) {
		Finish(b)
	})
}

// Pieces of functions of Go's shape for the test cases.
const (
	getSP    = "\x23\x00\x21\x01"                     // global.get 0; local.set 1
	prologue = "\x20\x01\x41\x10\x6b\x22\x01\x24\x00" // SP -= 16 (local and global)
	push     = "\x20\x01\x41\x08\x6b\x22\x01\x24\x00" // SP -= 8: a return address for a call
	retAddr  = "\x20\x01\x42\x63\x37\x03\x00"         // store 99 at SP
	pop      = "\x23\x00\x41\x08\x6a\x24\x00"         // a callee's return: global SP += 8
	wrap     = "\xa7\x0b"                             // i32.wrap_i64; end
)

// load is i64.load from local SP at off; store stores the i64 v there.
func load(off byte) string { return "\x20\x01\x29\x03" + string([]byte{off}) }
func store(off, v byte) string {
	return "\x20\x01\x42" + string([]byte{v}) + "\x37\x03" + string([]byte{off})
}

// callFn calls function f with PC_B 0 and drops its result.
func callFn(f int) string { return "\x41\x00\x10" + string([]byte{byte(f)}) + "\x1a" }

// argCases are functions of Go's shape that read an argument of theirs (the
// slot 8 bytes above the stack pointer they were called with) twice, after
// allocating a 16-byte frame: where nothing can write the slot in between,
// both reads come from a local.
func argCases(first int) []finishCase {
	arg5 := getSP + "\x20\x01\x42\x05\x37\x03\x08" // the caller stores 5 at SP+8
	call := callFn(first)                          // the first case, which pops
	return []finishCase{{
		name: "a callee: pops its return address",
		body: []byte("\x00" + pop + "\x41\x00\x0b"),
		want: 0,
	}, {
		name: "argument read twice",
		body: []byte("\x01\x01\x7f" + arg5 + prologue + load(24) + load(24) + "\x7c" + wrap),
		want: 10, args: 2, rebases: 1,
	}, {
		name: "argument read twice across a call's return address",
		body: []byte("\x01\x01\x7f" + arg5 + prologue + load(24) + push + retAddr + call + getSP + load(24) + "\x7c" + wrap),
		want: 10, args: 2, rebases: 2,
	}, {
		name: "argument slot written by the function",
		body: []byte("\x01\x01\x7f" + arg5 + prologue + load(24) + store(24, 9) + load(24) + "\x7c" + wrap),
		want: 14, rebases: 3,
	}, {
		name: "argument slot written while a return address is pushed",
		// SP+32 then is the frame's SP+24
		body: []byte("\x01\x01\x7f" + arg5 + prologue + load(24) + push + store(32, 7) + call + getSP + load(24) + "\x7c" + wrap),
		want: 12,
	}, {
		name: "argument whose address is taken",
		// (local i32 i32) the long form of SP+24 kept in local 2, 7 stored through it
		body: []byte("\x01\x02\x7f" + arg5 + prologue + load(24) +
			"\x20\x01\xad\x42\x18\x7c\xa7\x21\x02" + "\x20\x02\x42\x07\x37\x03\x00" + load(24) + "\x7c" + wrap),
		want: 12, rebases: 2,
	}, {
		name: "stack pointer copied to another local",
		body: []byte("\x01\x02\x7f" + arg5 + prologue + load(24) +
			"\x20\x01\x21\x02" + "\x20\x02\x42\x07\x37\x03\x18" + load(24) + "\x7c" + wrap),
		want: 12, rebases: 2,
	}, {
		name: "argument read once",
		body: []byte("\x01\x01\x7f" + arg5 + prologue + load(24) + wrap),
		want: 5, rebases: 1,
	}}
}

// frameCases are functions of Go's shape whose frame accesses move to the
// frame base (rebaseFrame), and one it must leave alone; callee is the index
// of a function that pops a return address.
func frameCases(callee int) []finishCase {
	return []finishCase{{
		name: "frame variable across a call",
		// 5 stored in the frame (at 8: a store at 0 right after the
		// allocation would look like the push of a return address), a call (its return address pushed), 5 read back
		body: []byte("\x01\x01\x7f" + getSP + prologue + store(8, 5) + push + retAddr + callFn(callee) + getSP + load(8) + wrap),
		want: 5, rebases: 3,
	}, {
		name: "frame variable counted up in a loop",
		// slot = 0; loop { slot++; br_if slot < 3 }; slot
		body: []byte("\x01\x01\x7f" + getSP + prologue + store(8, 0) +
			"\x03\x40" + "\x20\x01" + load(8) + "\x42\x01\x7c\x37\x03\x08" + load(8) + "\x42\x03\x54\x0d\x00" + "\x0b" +
			load(8) + wrap),
		want: 3, rebases: 5,
	}, {
		name: "stack pointer written other than by Go's bookkeeping",
		// local 1 set from another local: nothing moves
		body: []byte("\x01\x02\x7f" + getSP + prologue + store(8, 4) + "\x20\x01\x21\x02\x20\x02\x21\x01" + load(8) + wrap),
		want: 4,
	}}
}

// probeCases read and write through an i32 local p (local 2): a probe goes
// before a straight-line stretch of accesses that reach higher than its
// first, and nowhere else.
func probeCases(callee int) []finishCase {
	const (
		locals = "\x02\x01\x7e\x01\x7f" // (local i64 i32)
		p256   = "\x41\x80\x02\x21\x02" // p = 256
		add    = "\x6a\x0b"             // i32.add; end
	)
	st := func(off, v byte) string { return "\x20\x02\x41" + string([]byte{v}) + "\x36\x02" + string([]byte{off}) }
	ld := func(off byte) string { return "\x20\x02\x28\x02" + string([]byte{off}) }
	return []finishCase{{
		name:   "fields written and read in increasing order",
		body:   []byte(locals + p256 + st(0, 1) + st(4, 2) + ld(0) + ld(4) + add),
		want:   3,
		probes: 1,
	}, {
		name: "no probe across a branch",
		// store at p; if (param) { store at p+4 }; load p+0 + p+4 (0 stored there before? no: 0)
		body: []byte(locals + p256 + st(0, 1) + "\x20\x00\x04\x40" + st(4, 2) + "\x0b" + ld(0) + "\x41\x00" + add),
		want: 1, elses: 1,
	}, {
		name: "no probe across a call",
		body: []byte(locals + p256 + st(0, 1) + callFn(callee) + st(4, 2) + ld(0) + "\x41\x00" + add),
		want: 1,
	}, {
		name: "probe stops where the local is written",
		// store at p; p = 260; store at p; load p
		body: []byte(locals + p256 + st(0, 1) + "\x41\x84\x02\x21\x02" + st(0, 2) + ld(0) + "\x41\x00" + add),
		want: 2,
	}, {
		name: "probe at the end of memory",
		// p = 65528: its words at 0 and 4 are the last of the page
		body:   []byte(locals + "\x41\xf8\xff\x03\x21\x02" + ld(0) + ld(4) + add),
		want:   0,
		probes: 1,
	}, {
		name: "a trap stays a trap",
		// p = 65532: the word at p+4 lies past the page
		body:   []byte(locals + "\x41\xfc\xff\x03\x21\x02" + ld(0) + ld(4) + add),
		traps:  true,
		probes: 1,
	}}
}
