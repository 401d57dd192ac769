package reloop

import (
	"toxgate/internal/wasmbin"
)

// stackEffect returns how many operands op pops and pushes, for the
// instructions that may sit between an address and the load or store that
// uses it; ok is false for anything else (control flow, calls, prefixed
// instructions).
func stackEffect(op byte) (pop, push int, ok bool) {
	switch {
	case op == opLocalGet || op == opGlobalGet || op == opI32Const || op == opI64Const || op == 0x43 || op == 0x44:
		return 0, 1, true
	case op == opLocalTee:
		return 1, 1, true
	case op == opLocalSet || op == opGlobalSet || op == opDrop:
		return 1, 0, true
	case op == 0x1b: // select
		return 3, 1, true
	case op >= 0x28 && op <= 0x35: // loads
		return 1, 1, true
	case op >= 0x36 && op <= 0x3e: // stores
		return 2, 0, true
	case op == 0x45 || op == 0x50: // eqz
		return 1, 1, true
	case op >= 0x46 && op <= 0x66: // comparisons
		return 2, 1, true
	case op >= 0x67 && op <= 0x69, op >= 0x79 && op <= 0x7b, op >= 0x8b && op <= 0x91, op >= 0x99 && op <= 0x9f, op >= 0xa7 && op <= 0xc4:
		return 1, 1, true // unary operators and conversions
	case op >= 0x6a && op <= 0x78, op >= 0x7c && op <= 0x8a, op >= 0x92 && op <= 0x98, op >= 0xa0 && op <= 0xa6:
		return 2, 1, true // binary operators
	}
	return 0, 0, false
}

const (
	opDrop          = 0x1a
	opGlobalSet     = 0x24
	opI64Const      = 0x42
	opI64ExtendI32U = 0xad
	opI64Add        = 0x7c
	opI64Sub        = 0x7d
	opI32WrapI64    = 0xa7
	localSP         = 1 // Go's local copy of the SP global
)

// isMemOp reports whether op is a load or a store.
func isMemOp(op byte) bool { return op >= 0x28 && op <= 0x3e }

// memOffset returns the offset immediate of the load or store in.
func memOffset(b []byte, in instr) uint32 {
	_, p, _ := wasmbin.Uint32(b, in.off+1) // align
	off, _, _ := wasmbin.Uint32(b, p)
	return off
}

// appendMemOpAt appends the load or store in (of b) with d added to its
// offset immediate.
func appendMemOpAt(out, b []byte, in instr, d uint32) []byte {
	align, p, _ := wasmbin.Uint32(b, in.off+1)
	off, _, _ := wasmbin.Uint32(b, p)
	out = wasmbin.AppendUint32(append(out, in.op), align)
	return wasmbin.AppendUint32(out, off+d)
}

// frameAddr reports whether ins[i:i+5] computes the address of a slot of Go's
// frame the long way, local.get 1; i64.extend_i32_u; i64.const k; i64.add;
// i32.wrap_i64 (or i64.const -k; i64.sub), and returns k.
func frameAddr(b []byte, ins []instr, i int) (uint32, bool) {
	if i+4 >= len(ins) || ins[i].op != opLocalGet || ins[i].imm != localSP || ins[i+1].op != opI64ExtendI32U ||
		ins[i+2].op != opI64Const || ins[i+3].op != opI64Add && ins[i+3].op != opI64Sub || ins[i+4].op != opI32WrapI64 {
		return 0, false
	}
	k, _, err := wasmbin.Int64(b, ins[i+2].off+1)
	if ins[i+3].op == opI64Sub {
		k = -k // binaryen writes + 64 as - (-64), one byte shorter
	}
	if err != nil || k < 0 || k >= 1<<31 {
		return 0, false
	}
	return uint32(k), true
}

// addressUser returns the index of the load or store that takes the address
// pushed just before ins[j], or -1 when something else takes it or the code
// in between is not straight-line.
func addressUser(ins []instr, j int) int {
	depth := 0 // operands pushed above the address
	for ; j < len(ins); j++ {
		op := ins[j].op
		if isMemOp(op) {
			if op < 0x36 && depth == 0 || op >= 0x36 && depth == 1 {
				return j
			}
		}
		pop, push, ok := stackEffect(op)
		if !ok || pop > depth {
			return -1
		}
		depth += push - pop
	}
	return -1
}

// foldFrameAddrs returns the expression b (decoded as ins) with every frame
// slot address computed the long way and used by one load or store folded
// into that access: local.get 1 and the slot's offset in the access's offset
// immediate. The effective address is the same (the frame lies below 4 GiB),
// and a compiler sees one address value, local SP, for all of them instead of
// a new one per access, so it can check the frame's bounds once.
func foldFrameAddrs(b []byte, ins []instr) ([]byte, int) {
	type fold struct {
		user int
		k    uint32
	}
	folds := map[int]fold{} // by the index of the address's local.get
	users := map[int]uint32{}
	for i := range ins {
		k, ok := frameAddr(b, ins, i)
		if !ok {
			continue
		}
		u := addressUser(ins, i+5)
		if u < 0 {
			continue
		}
		if off := uint64(memOffset(b, ins[u])) + uint64(k); off >= 1<<32 {
			continue
		}
		folds[i] = fold{u, k}
		users[u] = k
	}
	if len(folds) == 0 {
		return b, 0
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(ins); i++ {
		in := ins[i]
		if _, ok := folds[i]; ok {
			out = append(out, b[in.off:in.end]...) // local.get 1
			i += 4
			continue
		}
		if k, ok := users[i]; ok {
			out = appendMemOpAt(out, b, in, k)
			continue
		}
		out = append(out, b[in.off:in.end]...)
	}
	return out, len(folds)
}
