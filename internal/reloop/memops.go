package reloop

import (
	"math/bits"

	"toxgate/internal/wasmbin"
)

// Small bulk-memory operations: Go's wasm code zeroes variables and copies
// values with memory.fill and memory.copy (most of them a few words long, their
// size a constant), and its runtime's memclrNoHeapPointers and memmove are one
// memory.fill or memory.copy each. wazero runs memory.copy as a call of Go's
// memmove and memory.fill as a byte store followed by log2(size) such calls
// (each doubling the filled part): 15 ns for 8 bytes, 46 ns for 256, where a
// few stores take ~3 ns. smallMemOps replaces each of them, when its size is at
// most smallMem bytes, by loads and stores of words:
//
//   - a constant size: the stores (and, for a copy, first all the loads, so
//     that overlapping operands copy as memmove does) at constant offsets,
//     the highest first, so that one bounds check covers the others;
//   - a size known only when it runs: a branch to the original instruction
//     for a larger size or (for a copy) operands that overlap with the
//     destination after the source, else the first word, then each further
//     whole word the size covers, then the last 8 bytes (which may overlap
//     the word before; for a copy loaded before anything is stored);
//     sizes under 8 are done with two overlapping 4-, 2- or 1-byte accesses.
//
// A program cannot tell the difference: the bytes written are the same, and
// an out-of-bounds operation traps either way (the original traps before
// writing anything, the rewrite may write a part first; a Go program that
// traps is over).

// smallMem is the largest size, in bytes, that smallMemOps expands.
const smallMem = 64

// memLocals are the locals smallMemOps adds to a function: the operands
// (i32) and eight words (i64).
type memLocals struct {
	d, s, n uint32 // destination, source or fill value, size
	w       uint32 // the first of eight i64 locals
}

// memPiece is one access of an expansion: its offset and width in bytes.
type memPiece struct{ off, width uint32 }

// memPieces returns the accesses that cover n bytes (0 < n <= smallMem),
// the highest offset first.
func memPieces(n uint32) []memPiece {
	var p []memPiece
	switch {
	case n >= 8:
		if n%8 != 0 {
			p = append(p, memPiece{n - 8, 8})
		}
		for k := n/8 - 1; ; k-- {
			p = append(p, memPiece{8 * k, 8})
			if k == 0 {
				break
			}
		}
	case n >= 4:
		p = append(p, memPiece{n - 4, 4})
		if n > 4 {
			p = append(p, memPiece{0, 4})
		}
	case n >= 2:
		p = append(p, memPiece{n - 2, 2})
		if n > 2 {
			p = append(p, memPiece{0, 2})
		}
	case n == 1:
		p = append(p, memPiece{0, 1})
	}
	return p
}

// alignOf returns the alignment exponent of an access of width bytes (1, 2,
// 4 or 8), its natural alignment.
func alignOf(width uint32) uint32 { return uint32(bits.TrailingZeros32(width)) }

// loadOp and storeOp return the i64 load (zero-extending) and store of width
// bytes.
func loadOp(width uint32) byte {
	return [4]byte{0x31, 0x33, 0x35, 0x29}[alignOf(width)] // i64.load8_u, 16_u, 32_u, i64.load
}

func storeOp(width uint32) byte {
	return [4]byte{0x3c, 0x3d, 0x3e, 0x37}[alignOf(width)] // i64.store8, 16, 32, i64.store
}

// memEmitter appends instructions.
type memEmitter struct{ out []byte }

func (e *memEmitter) op(b ...byte) { e.out = append(e.out, b...) }
func (e *memEmitter) get(x uint32) { e.out = wasmbin.AppendUint32(append(e.out, opLocalGet), x) }
func (e *memEmitter) set(x uint32) { e.out = wasmbin.AppendUint32(append(e.out, opLocalSet), x) }
func (e *memEmitter) i32(v int64)  { e.out = wasmbin.AppendInt64(append(e.out, opI32Const), v) }
func (e *memEmitter) i64(v int64)  { e.out = wasmbin.AppendInt64(append(e.out, opI64Const), v) }
func (e *memEmitter) mem(op byte, p memPiece) {
	e.out = wasmbin.AppendUint32(wasmbin.AppendUint32(append(e.out, op), alignOf(p.width)), p.off)
}

// replicate leaves the fill value in local v (an i32) repeated in all eight
// bytes of an i64 on the stack.
func (e *memEmitter) replicate(v uint32) {
	e.get(v)
	e.i32(255)
	e.op(0x71, 0xad) // i32.and; i64.extend_i32_u
	e.i64(0x0101010101010101)
	e.op(0x7e) // i64.mul
}

// constFill expands memory.fill of n bytes with the operands d and v on the
// stack (n already dropped); zero says the value is the constant 0.
func (e *memEmitter) constFill(l memLocals, n uint32, zero bool) {
	e.set(l.s)
	e.set(l.d)
	if !zero {
		e.replicate(l.s)
		e.set(l.w)
	}
	for _, p := range memPieces(n) {
		e.get(l.d)
		if zero {
			e.i64(0)
		} else {
			e.get(l.w)
		}
		e.mem(storeOp(p.width), p)
	}
}

// constCopy expands memory.copy of n bytes with the operands d and s on the
// stack (n already dropped): every piece is loaded before any is stored.
func (e *memEmitter) constCopy(l memLocals, n uint32) {
	e.set(l.s)
	e.set(l.d)
	ps := memPieces(n)
	for i, p := range ps {
		e.get(l.s)
		e.mem(loadOp(p.width), p)
		e.set(l.w + uint32(i))
	}
	for i, p := range ps {
		e.get(l.d)
		e.get(l.w + uint32(i))
		e.mem(storeOp(p.width), p)
	}
}

// dynamic expands memory.fill (isCopy false) or memory.copy with the operands
// d, s or v, and n on the stack; orig is the original instruction, run for
// sizes over smallMem and for copies whose destination overlaps the source
// from above.
func (e *memEmitter) dynamic(l memLocals, isCopy bool, orig []byte) {
	e.set(l.n)
	e.set(l.s)
	e.set(l.d)
	e.get(l.n)
	e.i32(smallMem)
	e.op(0x4b) // i32.gt_u
	if isCopy {
		// d - s < n (unsigned): the destination starts inside the source
		e.get(l.d)
		e.get(l.s)
		e.op(0x6b) // i32.sub
		e.get(l.n)
		e.op(0x49, 0x72) // i32.lt_u; i32.or
	}
	e.op(opIf, blockEmpty)
	e.get(l.d)
	e.get(l.s)
	e.get(l.n)
	e.op(orig...)
	e.op(opElse)
	word := l.w
	if !isCopy {
		e.replicate(l.s)
		e.set(word)
	}
	// n >= 8: the last word first (loaded before anything is stored), then
	// the first, then each further whole word.
	e.get(l.n)
	e.i32(8)
	e.op(0x4f, opIf, blockEmpty) // i32.ge_u
	tail, lastAddr := l.w+1, func() {
		e.get(l.d)
		e.get(l.n)
		e.op(0x6a) // i32.add
	}
	if isCopy {
		// s + n - 8 (an offset cannot be negative)
		e.get(l.s)
		e.get(l.n)
		e.op(0x6a)
		e.i32(8)
		e.op(0x6b)
		e.mem(0x29, memPiece{0, 8})
		e.set(tail)
	}
	for k := uint32(0); k < smallMem/8; k++ {
		if k > 0 {
			e.get(l.n)
			e.i32(int64(8 * (k + 1)))
			e.op(0x4f, opIf, blockEmpty)
		}
		e.get(l.d)
		if isCopy {
			e.get(l.s)
			e.mem(0x29, memPiece{8 * k, 8})
		} else {
			e.get(word)
		}
		e.mem(0x37, memPiece{8 * k, 8})
		if k > 0 {
			e.op(opEnd)
		}
	}
	lastAddr()
	e.i32(8)
	e.op(0x6b) // i32.sub
	if isCopy {
		e.get(tail)
	} else {
		e.get(word)
	}
	e.mem(0x37, memPiece{0, 8})
	e.op(opElse)
	// n < 8: two overlapping accesses of 4, 2 or 1 bytes
	for _, width := range []uint32{4, 2, 1} {
		e.get(l.n)
		e.i32(int64(width))
		e.op(0x4f, opIf, blockEmpty)
		if isCopy {
			e.get(l.s)
			e.mem(loadOp(width), memPiece{0, width})
			e.set(l.w)
			e.get(l.s)
			e.get(l.n)
			e.op(0x6a)
			e.i32(int64(width))
			e.op(0x6b)
			e.mem(loadOp(width), memPiece{0, width})
			e.set(tail)
		}
		e.get(l.d)
		e.get(word)
		e.mem(storeOp(width), memPiece{0, width})
		lastAddr()
		e.i32(int64(width))
		e.op(0x6b)
		if isCopy {
			e.get(tail)
		} else {
			e.get(word)
		}
		e.mem(storeOp(width), memPiece{0, width})
		e.op(opElse)
	}
	e.op(opEnd, opEnd, opEnd) // the three size tests
	e.op(opEnd)               // n >= 8
	e.op(opEnd)               // the size check
}

// smallMemOps rewrites the expression b (decoded as ins) as described above,
// with new locals numbered from first on; it returns their types and the
// number of instructions it expanded.
func smallMemOps(b []byte, ins []instr, first uint32) (out []byte, types []byte, expanded int) {
	l := memLocals{d: first, s: first + 1, n: first + 2, w: first + 3}
	e := memEmitter{out: make([]byte, 0, len(b)+len(b)/8)}
	for j := 0; j < len(ins); j++ {
		in := ins[j]
		fill := in.op == 0xfc && in.end-in.off == 3 && b[in.off+1] == 11 && b[in.off+2] == 0
		cp := in.op == 0xfc && in.end-in.off == 4 && b[in.off+1] == 10 && b[in.off+2] == 0 && b[in.off+3] == 0
		if !fill && !cp {
			e.op(b[in.off:in.end]...)
			continue
		}
		n := int64(-1)
		if j > 0 && ins[j-1].op == opI32Const {
			n = ins[j-1].imm
		}
		switch {
		case n > 0 && n <= smallMem:
			e.op(opDrop)
			if fill {
				e.constFill(l, uint32(n), j > 1 && ins[j-2].op == opI32Const && ins[j-2].imm == 0)
			} else {
				e.constCopy(l, uint32(n))
			}
		case n > smallMem || n == 0:
			e.op(b[in.off:in.end]...)
			continue
		default:
			e.dynamic(l, cp, b[in.off:in.end])
		}
		expanded++
	}
	if expanded == 0 {
		return b, nil, 0
	}
	return e.out, []byte{0x7f, 0x7f, 0x7f, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e}, expanded
}
