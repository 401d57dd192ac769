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

// Opcodes that reloop reads or writes (WebAssembly core specification, 5.4).
const (
	opUnreachable = 0x00
	opBlock       = 0x02
	opLoop        = 0x03
	opIf          = 0x04
	opElse        = 0x05
	opEnd         = 0x0b
	opBr          = 0x0c
	opBrIf        = 0x0d
	opBrTable     = 0x0e
	opReturn      = 0x0f
	opCall        = 0x10
	opGlobalGet   = 0x23
	opLocalGet    = 0x20
	opLocalSet    = 0x21
	opLocalTee    = 0x22
	opI32Const    = 0x41
	opI32Eqz      = 0x45
	blockEmpty    = 0x40 // the empty block type []->[]
)

// instr is one decoded instruction: where it is in the body, its opcode and the
// immediates reloop needs (a label, an index or a constant).
type instr struct {
	off, end int      // byte range in the body
	op       byte     // first opcode byte
	imm      int64    // label (br, br_if), local or function index, or i32 constant
	labels   []uint32 // br_table: targets, the default last
}

// decode reads the instruction at b[i:].
func decode(b []byte, i int) (instr, error) {
	in := instr{off: i, op: b[i]}
	i++
	var err error
	var u uint32
	skipU32 := func(n int) {
		for ; n > 0 && err == nil; n-- {
			_, i, err = wasmbin.Uint32(b, i)
		}
	}
	switch op := in.op; {
	case op == opBlock || op == opLoop || op == opIf:
		if i >= len(b) {
			return in, errors.New("truncated block type")
		}
		if c := b[i]; c == blockEmpty || c >= 0x6f && c <= 0x7f {
			i++
		} else {
			_, i, err = wasmbin.Int64(b, i) // a type index, as s33
		}
	case op == opBr || op == opBrIf:
		u, i, err = wasmbin.Uint32(b, i)
		in.imm = int64(u)
	case op == opBrTable:
		var n uint32
		n, i, err = wasmbin.Uint32(b, i)
		if err == nil && int(n) > len(b)-i {
			err = errors.New("br_table longer than the body")
		}
		for k := uint32(0); k <= n && err == nil; k++ {
			u, i, err = wasmbin.Uint32(b, i)
			in.labels = append(in.labels, u)
		}
	case op == opUnreachable || op == 0x01 || op == opElse || op == opEnd || op == opReturn,
		op == 0x1a || op == 0x1b, // drop, select
		op >= 0x45 && op <= 0xc4, // numeric instructions without immediates
		op == 0xd1:               // ref.is_null
	case op == opCall:
		u, i, err = wasmbin.Uint32(b, i)
		in.imm = int64(u)
	case op == 0xd2: // ref.func
		skipU32(1)
	case op == 0x11: // call_indirect type table
		skipU32(2)
	case op == 0x12: // return_call
		skipU32(1)
	case op == 0x13: // return_call_indirect
		skipU32(2)
	case op == 0x1c: // select t*
		var n uint32
		n, i, err = wasmbin.Uint32(b, i)
		if err == nil && int(n) > len(b)-i {
			err = errors.New("select type vector longer than the body")
		}
		i += int(n)
	case op >= opLocalGet && op <= 0x24: // local.get/set/tee, global.get/set
		u, i, err = wasmbin.Uint32(b, i)
		in.imm = int64(u)
	case op == 0x25 || op == 0x26: // table.get/set
		skipU32(1)
	case op >= 0x28 && op <= 0x3e: // loads and stores: align, offset
		skipU32(2)
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		skipU32(1)
	case op == opI32Const:
		in.imm, i, err = wasmbin.Int64(b, i)
	case op == 0x42: // i64.const
		_, i, err = wasmbin.Int64(b, i)
	case op == 0x43: // f32.const
		i += 4
	case op == 0x44: // f64.const
		i += 8
	case op == 0xd0: // ref.null t
		i++
	case op == 0xfc:
		u, i, err = wasmbin.Uint32(b, i)
		switch {
		case err != nil:
		case u <= 7: // trunc_sat
		case u == 8: // memory.init data mem
			skipU32(2)
		case u == 9 || u == 13 || u == 15 || u == 16 || u == 17: // data.drop, elem.drop, table.grow/size/fill
			skipU32(1)
		case u == 10 || u == 12 || u == 14: // memory.copy, table.init, table.copy
			skipU32(2)
		case u == 11: // memory.fill
			skipU32(1)
		default:
			err = fmt.Errorf("unknown 0xfc opcode %d", u)
		}
	default:
		err = fmt.Errorf("unknown opcode 0x%02x", op)
	}
	if err != nil {
		return in, fmt.Errorf("at byte %d: %w", in.off, err)
	}
	if i > len(b) {
		return in, fmt.Errorf("at byte %d: instruction runs past the body", in.off)
	}
	in.end = i
	return in, nil
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
	groups, p, err := wasmbin.Uint32(body, 0)
	if err != nil {
		return nil, 0, err
	}
	var types []byte
	for g := uint32(0); g < groups; g++ {
		var n uint32
		if n, p, err = wasmbin.Uint32(body, p); err != nil {
			return nil, 0, err
		}
		if p >= len(body) || len(types)+int(n) > 1<<16 {
			return nil, 0, errors.New("locals run past the body")
		}
		for range n {
			types = append(types, body[p])
		}
		p++
	}
	return types, p, nil
}

// section is one section of a module: its id, the whole section (id and size
// included) and its payload.
type section struct {
	id             byte
	whole, payload []byte
}

// sections splits a module, after its 8-byte header, into its sections.
func sections(wasm []byte) ([]section, error) {
	var out []section
	for i := 8; i < len(wasm); {
		size, p, err := wasmbin.Uint32(wasm, i+1)
		if err != nil || p+int(size) > len(wasm) {
			return nil, fmt.Errorf("reloop: section at byte %d: bad size", i)
		}
		out = append(out, section{id: wasm[i], whole: wasm[i : p+int(size)], payload: wasm[p : p+int(size)]})
		i = p + int(size)
	}
	return out, nil
}

// appendSection appends a section with the given id and payload.
func appendSection(out []byte, id byte, payload []byte) []byte {
	out = wasmbin.AppendUint32(append(out, id), uint32(len(payload)))
	return append(out, payload...)
}

// codeBodies splits the payload of a code section into its function bodies.
func codeBodies(b []byte) ([][]byte, error) {
	n, i, err := wasmbin.Uint32(b, 0)
	if err != nil {
		return nil, fmt.Errorf("reloop: code section: %w", err)
	}
	var bodies [][]byte
	for fn := uint32(0); fn < n; fn++ {
		size, p, err := wasmbin.Uint32(b, i)
		if err != nil || p+int(size) > len(b) {
			return nil, fmt.Errorf("reloop: code section: body %d: bad size", fn)
		}
		bodies = append(bodies, b[p:p+int(size)])
		i = p + int(size)
	}
	if i != len(b) {
		return nil, errors.New("reloop: code section: bytes after the last body")
	}
	return bodies, nil
}

// appendBodies appends a code section's payload made of bodies.
func appendBodies(out []byte, bodies [][]byte) []byte {
	out = wasmbin.AppendUint32(out, uint32(len(bodies)))
	for _, b := range bodies {
		out = wasmbin.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out
}
