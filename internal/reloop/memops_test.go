package reloop

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/tetratelabs/wazero"

	"toxgate/internal/wasmbin"
)

// TestFinishMemOps runs memory.fill and memory.copy of every size up to past
// smallMem, constant and given at run time, with disjoint and overlapping
// operands, before and after Finish: the memory must end up the same.
func TestFinishMemOps(t *testing.T) {
	i32 := func(v int64) string { return string(wasmbin.AppendInt64([]byte{opI32Const}, v)) }
	const (
		fill = "\xfc\x0b\x00"
		cp   = "\xfc\x0a\x00\x00"
		ret  = "\x41\x00\x0b" // i32.const 0; end
		size = "\x20\x00"     // local.get 0: the size, the call's argument
	)
	// body 0 writes byte i*7+3 at address i, for i < 512
	bodies := [][]byte{[]byte("\x01\x01\x7f" + "\x03\x40" +
		"\x20\x01\x20\x01\x41\x07\x6c\x41\x03\x6a\x3a\x00\x00" +
		"\x20\x01\x41\x01\x6a\x22\x01\x41\x80\x04\x49\x0d\x00" + "\x0b" + ret)}
	type memCase struct {
		name string
		arg  int // the size passed, for the run-time cases
	}
	var cases []memCase
	add := func(name, code string, arg int) {
		bodies = append(bodies, []byte("\x00"+code+ret))
		cases = append(cases, memCase{name, arg})
	}
	sizes := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 23, 24, 31, 32, 33, 40, 48, 56, 63, 64, 65, 100}
	for _, n := range sizes {
		for _, v := range []int64{0, 0xab} {
			add(fmt.Sprintf("fill %d with %#x, constant size", n, v), i32(100)+i32(v)+i32(int64(n))+fill, 0)
			add(fmt.Sprintf("fill %d with %#x, run-time size", n, v), i32(100)+i32(v)+size+fill, n)
		}
		for _, d := range []int64{300, 105, 95, 100} { // disjoint, overlapping above, below, the same
			add(fmt.Sprintf("copy %d from 100 to %d, constant size", n, d), i32(d)+i32(100)+i32(int64(n))+cp, 0)
			add(fmt.Sprintf("copy %d from 100 to %d, run-time size", n, d), i32(d)+i32(100)+size+cp, n)
		}
	}
	add("fill 0, run-time size", i32(100)+i32(1)+size+fill, 0)
	add("copy 0, run-time size", i32(100)+i32(200)+size+cp, 0)
	mod := testModule(bodies)
	fin, st, err := Finish(mod)
	if err != nil {
		t.Fatal(err)
	}
	// every case but the constant sizes over smallMem (65 and 100: two fills
	// and four copies each)
	if want := len(cases) - 2*6; st.MemOps != want {
		t.Errorf("Finish expanded %d operations, want %d", st.MemOps, want)
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	orig, err := r.CompileModule(ctx, mod)
	if err != nil {
		t.Fatal(err)
	}
	finished, err := r.CompileModule(ctx, fin)
	if err != nil {
		t.Fatal(err)
	}
	memAfter := func(cm wazero.CompiledModule, i int, arg int) []byte {
		m, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close(ctx)
		if _, err := m.ExportedFunction("f0").Call(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := m.ExportedFunction(fmt.Sprintf("f%d", i+1)).Call(ctx, uint64(arg)); err != nil {
			t.Fatalf("%s: %v", cases[i].name, err)
		}
		b, _ := m.Memory().Read(0, 1024)
		return bytes.Clone(b)
	}
	for i, c := range cases {
		want, got := memAfter(orig, i, c.arg), memAfter(finished, i, c.arg)
		if !bytes.Equal(got, want) {
			for k := range want {
				if got[k] != want[k] {
					t.Errorf("%s: byte %d is %#x, want %#x", c.name, k, got[k], want[k])
					break
				}
			}
		}
	}
}
