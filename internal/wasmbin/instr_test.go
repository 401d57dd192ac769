package wasmbin

import (
	"slices"
	"strings"
	"testing"
)

// TestDecodeReadsImmediates checks the length and first immediate Decode
// reads for one instruction of each immediate shape.
func TestDecodeReadsImmediates(t *testing.T) {
	for _, c := range []struct {
		name string
		code []byte
		imm  int64
		sub  uint32
	}{
		{"nop", []byte{OpNop}, 0, 0},
		{"block empty", []byte{OpBlock, BlockEmpty}, -64, 0},
		{"loop i32", []byte{OpLoop, I32}, -1, 0},
		{"if type index", []byte{OpIf, 0x05}, 5, 0},
		{"br", []byte{OpBr, 0x83, 0x01}, 131, 0},
		{"call", []byte{OpCall, 0xe5, 0x8e, 0x26}, 624485, 0},
		{"call_indirect", []byte{OpCallIndirect, 0x02, 0x00}, 2, 0},
		{"select t", []byte{OpSelectT, 0x01, F64}, 0, 0},
		{"local.tee", []byte{OpLocalTee, 0x07}, 7, 0},
		{"i32.load memarg", []byte{OpFirstLoadStore, 0x02, 0x80, 0x80, 0x04}, 0, 0},
		{"i32.const -1", []byte{OpI32Const, 0x7f}, -1, 0},
		{"i64.const", []byte{OpI64Const, 0xc0, 0xbb, 0x78}, -123456, 0},
		{"f32.const", []byte{OpF32Const, 0, 0, 0x80, 0x3f}, 0, 0},
		{"f64.const", []byte{OpF64Const, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, 0, 0},
		{"ref.null", []byte{OpRefNull, FuncRef}, 0, 0},
		{"memory.copy", []byte{PrefixMisc, 10, 0, 0}, 0, 10},
		{"v128.const", append([]byte{PrefixSIMD, 12}, make([]byte, 16)...), 0, 12},
		{"extract lane", []byte{PrefixSIMD, 21, 3}, 0, 21},
		{"atomic.fence", []byte{PrefixAtomic, AtomicFence, 0}, 0, AtomicFence},
		{"try_table", []byte{OpTryTable, BlockEmpty, 0x02, 0x00, 0x01, 0x00, 0x02, 0x00}, -64, 0},
	} {
		code := append(append([]byte{OpNop}, c.code...), OpEnd)
		in, err := Decode(code, 1)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if in.Off != 1 || in.End != 1+len(c.code) || in.Op != c.code[0] || in.Imm != c.imm || in.Sub != c.sub {
			t.Errorf("%s: got %+v, want end %d, imm %d, sub %d", c.name, in, 1+len(c.code), c.imm, c.sub)
		}
	}
}

// TestDecodeBrTable checks that br_table's targets come back in order with
// the default last.
func TestDecodeBrTable(t *testing.T) {
	in, err := Decode([]byte{OpBrTable, 0x02, 0x00, 0x01, 0x05}, 0)
	if err != nil || in.End != 5 || !slices.Equal(in.Labels, []uint32{0, 1, 5}) {
		t.Fatalf("br_table: %+v, %v", in, err)
	}
}

// TestDecodeRefuses checks that unknown and truncated instructions are errors
// that name their offset, and that the reader keeps the first error.
func TestDecodeRefuses(t *testing.T) {
	for _, code := range [][]byte{
		{0x27},                   // not an opcode
		{PrefixMisc, 18},         // past the 0xfc instructions
		{PrefixSIMD, 0xff, 0x02}, // past the SIMD instructions
		{OpCall},                 // truncated
		{OpBrTable, 0x7f, 0x00},  // more targets than bytes
		{OpSelectT, 0x01, 0x60},  // not a value type
	} {
		if _, err := Decode(code, 0); err == nil || !strings.HasPrefix(err.Error(), "at byte 0: ") {
			t.Errorf("% x: err = %v, want an error at byte 0", code, err)
		}
	}
	r := NewReader([]byte{OpNop, 0x27, OpNop})
	if _, err := r.Instr(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Instr(); err == nil {
		t.Fatal("0x27 decoded")
	}
	if _, err := r.Instr(); err == nil || r.Err() == nil {
		t.Fatal("the reader went on after an error")
	}
}
