package wasmbin

import "fmt"

// Instr is one decoded instruction: where it is, its opcode and the
// immediates the rewriters need.
type Instr struct {
	Off, End int    // byte range in the code
	Op       byte   // first opcode byte
	Sub      uint32 // sub-opcode after PrefixMisc, PrefixSIMD or PrefixAtomic
	// Imm is the first immediate: the block type of block, loop, if, try
	// and try_table as an s33 (negative for the empty type and the value
	// types, a type index otherwise); the label of br and br_if; the
	// function index of call, return_call and ref.func; the type index of
	// call_indirect and return_call_indirect; the index of local.*, global.*
	// and table.get/set; the constant of i32.const and i64.const.
	Imm    int64
	Labels []uint32 // br_table: its targets, the default last
}

// Decode reads the instruction at b[i:]. It knows WebAssembly 2.0 (with
// SIMD, bulk memory and reference types), the threads proposal's atomics,
// tail calls and exception handling; any other opcode is an error.
func Decode(b []byte, i int) (Instr, error) {
	r := Reader{b: b, pos: i}
	in := Instr{Off: i, Op: r.Byte()}
	switch op := in.Op; {
	case op == OpUnreachable || op == OpNop || op == OpElse || op == OpEnd || op == OpReturn,
		op == OpThrowRef || op == OpCatchAll || op == OpDrop || op == OpSelect,
		op >= OpI32Eqz && op <= OpLastNumeric,
		op == OpRefIsNull:
	case op == OpBlock || op == OpLoop || op == OpIf || op == OpTry:
		in.Imm = r.S64()
	case op == OpBr || op == OpBrIf,
		op == OpCall || op == OpReturnCall || op == OpRefFunc,
		op >= OpLocalGet && op <= OpTableSet:
		in.Imm = int64(r.U32())
	case op == OpCatch || op == OpThrow || op == OpRethrow || op == OpDelegate:
		in.Imm = int64(r.U32()) // tag or label
	case op == OpBrTable:
		n := r.U32()
		if r.err == nil && int(n) > len(b)-r.pos {
			r.Fail("br_table longer than the code")
		}
		in.Labels = make([]uint32, 0, n+1)
		for k := uint32(0); k <= n && r.err == nil; k++ {
			in.Labels = append(in.Labels, r.U32())
		}
	case op == OpCallIndirect || op == OpReturnCallIndirect: // type, table
		in.Imm = int64(r.U32())
		r.U32()
	case op == OpSelectT:
		n := r.U32()
		for k := uint32(0); k < n && r.err == nil; k++ {
			r.ValType()
		}
	case op == OpTryTable: // block type, vec(catch)
		in.Imm = r.S64()
		n := r.U32()
		for k := uint32(0); k < n && r.err == nil; k++ {
			switch c := r.Byte(); c {
			case 0x00, 0x01: // catch, catch_ref: tag, label
				r.U32()
				r.U32()
			case 0x02, 0x03: // catch_all, catch_all_ref: label
				r.U32()
			default:
				r.Fail("try_table catch kind %d", c)
			}
		}
	case op >= OpFirstLoadStore && op <= OpLastLoadStore:
		r.MemArg()
	case op == OpMemorySize || op == OpMemoryGrow:
		in.Imm = int64(r.U32())
	case op == OpI32Const || op == OpI64Const:
		in.Imm = r.S64()
	case op == OpF32Const:
		r.Bytes(4)
	case op == OpF64Const:
		r.Bytes(8)
	case op == OpRefNull: // heap type
		r.SkipLEB()
	case op == PrefixMisc:
		in.Sub = r.U32()
		switch sub := in.Sub; {
		case r.err != nil:
		case sub <= 7: // saturating truncation
		case sub == 8 || sub == 10 || sub == 12 || sub == 14: // memory.init, memory.copy, table.init, table.copy
			r.U32()
			r.U32()
		case sub == 9 || sub == 11 || sub == 13 || sub == 15 || sub == 16 || sub == 17: // data.drop, memory.fill, elem.drop, table.grow/size/fill
			r.U32()
		default:
			r.Fail("unknown 0xfc opcode %d", sub)
		}
	case op == PrefixSIMD:
		in.Sub = r.U32()
		switch sub := in.Sub; {
		case r.err != nil:
		case sub <= 11 || sub == 92 || sub == 93: // v128 loads and stores
			r.MemArg()
		case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
			r.Bytes(16)
		case sub >= 21 && sub <= 34: // extract and replace lane
			r.Byte()
		case sub >= 84 && sub <= 91: // load and store lane
			r.MemArg()
			r.Byte()
		case sub <= 0x113:
		default:
			r.Fail("unknown 0xfd opcode %d", sub)
		}
	case op == PrefixAtomic:
		in.Sub = r.U32()
		switch sub := in.Sub; {
		case r.err != nil:
		case sub == AtomicFence:
			r.Byte()
		case sub <= 0x02 || sub >= 0x10 && sub <= 0x4e:
			r.MemArg()
		default:
			r.Fail("unknown 0xfe opcode %d", sub)
		}
	default:
		r.Fail("unknown opcode 0x%02x", op)
	}
	if r.err != nil {
		return in, fmt.Errorf("at byte %d: %w", in.Off, r.err)
	}
	in.End = r.pos
	return in, nil
}

// Instr decodes the instruction at the reader's offset and moves past it.
func (r *Reader) Instr() (Instr, error) {
	if r.err != nil {
		return Instr{}, r.err
	}
	in, err := Decode(r.b, r.pos)
	if err != nil {
		r.err = err
		return in, err
	}
	r.pos = in.End
	return in, nil
}
