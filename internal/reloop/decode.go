package reloop

import (
	"errors"
	"fmt"

	"toxgate/internal/wasmbin"
)

// errShape marks a function whose code is not the shape reloop understands; such a
// function is left as it is.
var errShape = errors.New("not Go's dispatch-loop shape")

// errNoLoop marks a function without a dispatch loop: nothing to rewrite.
var errNoLoop = fmt.Errorf("%w: no dispatch loop", errShape)

// Opcodes that reloop reads or writes, by their names in internal/wasmbin.
const (
	opUnreachable = wasmbin.OpUnreachable
	opBlock       = wasmbin.OpBlock
	opLoop        = wasmbin.OpLoop
	opIf          = wasmbin.OpIf
	opElse        = wasmbin.OpElse
	opEnd         = wasmbin.OpEnd
	opBr          = wasmbin.OpBr
	opBrIf        = wasmbin.OpBrIf
	opBrTable     = wasmbin.OpBrTable
	opReturn      = wasmbin.OpReturn
	opCall        = wasmbin.OpCall
	opGlobalGet   = wasmbin.OpGlobalGet
	opLocalGet    = wasmbin.OpLocalGet
	opLocalSet    = wasmbin.OpLocalSet
	opLocalTee    = wasmbin.OpLocalTee
	opI32Const    = wasmbin.OpI32Const
	opI32Eqz      = wasmbin.OpI32Eqz
	blockEmpty    = wasmbin.BlockEmpty
)

// instr is one decoded instruction: where it is in the body, its opcode and the
// immediates reloop needs (a label, an index or a constant).
type instr struct {
	off, end int      // byte range in the body
	op       byte     // first opcode byte
	imm      int64    // label (br, br_if), local, global or function index, or i32 constant
	labels   []uint32 // br_table: targets, the default last
}

// decode reads the instruction at b[i:] with wasmbin.Decode. Instructions that
// Go does not emit (exception handling, SIMD, atomics) are refused, so that a
// function holding one is left as it is.
func decode(b []byte, i int) (instr, error) {
	if i < len(b) {
		switch op := b[i]; {
		case op >= wasmbin.OpTry && op <= wasmbin.OpThrowRef, op == wasmbin.OpDelegate, op == wasmbin.OpCatchAll,
			op == wasmbin.OpTryTable, op == wasmbin.PrefixSIMD, op == wasmbin.PrefixAtomic:
			return instr{off: i, op: op}, fmt.Errorf("at byte %d: unknown opcode 0x%02x", i, op)
		}
	}
	d, err := wasmbin.Decode(b, i)
	in := instr{off: d.Off, end: d.End, op: d.Op, labels: d.Labels}
	switch op := d.Op; {
	case op == opBr || op == opBrIf || op == opCall || op == opI32Const,
		op >= opLocalGet && op <= wasmbin.OpGlobalSet:
		in.imm = d.Imm
	}
	return in, err
}

// decodeAll decodes an expression (a function body after its locals).
func decodeAll(b []byte) ([]instr, error) {
	var out []instr
	for i := 0; i < len(b); {
		in, err := decode(b, i)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
		i = in.end
	}
	return out, nil
}

// localTypes returns the value types of a body's declared locals and the
// length of its locals header.
func localTypes(body []byte) ([]byte, int, error) {
	groups, p, err := wasmbin.Locals(body)
	if err != nil {
		return nil, 0, err
	}
	var types []byte
	for _, g := range groups {
		if len(types)+int(g.Count) > 1<<16 {
			return nil, 0, errors.New("locals run past the body")
		}
		for range g.Count {
			types = append(types, g.Type)
		}
	}
	return types, p, nil
}
