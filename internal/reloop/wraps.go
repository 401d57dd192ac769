package reloop

import (
	"maps"

	"toxgate/internal/wasmbin"
)

// wrapFrame is one enclosing block, loop or if while reuseWraps walks a body.
type wrapFrame struct {
	entry map[uint32]int  // the conversions valid where the construct starts
	dirty map[uint32]bool // pointer locals set inside
	loops int             // loops begun before the construct
}

// reuseWraps returns the expression b (decoded as ins) in which every
// conversion local.get x; i32.wrap_i64 that repeats an earlier one of the same
// x, with x unchanged on every path between them, reads the earlier result from
// a new i32 local instead (the earlier one stores it with local.tee); a
// local.tee x; i32.wrap_i64 starts such a run too. The new locals are numbered
// from first on; it returns how many it added and how many conversions it
// replaced. It follows the structure conservatively: a loop starts with
// nothing known, and after an end only what was known at the construct's start
// and not set inside it is known, nothing when the construct has a loop in it
// (a conversion kept across a loop would hold a register through it, where
// the loop's own values need it more). The i32 local of x always holds the
// conversion of x's value at the last conversion that stored it, so a read is
// right wherever x was not set since on any path.
func reuseWraps(b []byte, ins []instr, first uint32) (out []byte, added, reuses int) {
	cur := map[uint32]int{} // pointer local -> index of the conversion that holds it
	var stack []wrapFrame
	loops := 0           // loops begun so far
	use := map[int]int{} // conversion -> the earlier one it reads
	def := map[int]bool{}
	dirty := func(x uint32) {
		if len(stack) > 0 {
			stack[len(stack)-1].dirty[x] = true
		}
	}
	for i := 0; i < len(ins); i++ {
		in := ins[i]
		wrap := i+1 < len(ins) && ins[i+1].op == opI32WrapI64
		x := uint32(in.imm)
		switch in.op {
		case opBlock, opIf:
			stack = append(stack, wrapFrame{entry: maps.Clone(cur), dirty: map[uint32]bool{}, loops: loops})
		case opLoop:
			stack = append(stack, wrapFrame{entry: maps.Clone(cur), dirty: map[uint32]bool{}, loops: loops})
			clear(cur)
			loops++
		case opElse:
			if len(stack) > 0 {
				cur = maps.Clone(stack[len(stack)-1].entry)
			}
		case opEnd:
			if len(stack) == 0 {
				break
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			cur = f.entry
			if loops != f.loops {
				// A conversion kept across a loop would hold a register
				// through it: the loop's code needs it more.
				clear(cur)
			}
			for x := range f.dirty {
				delete(cur, x)
				dirty(x)
			}
		case opLocalGet:
			if !wrap {
				break
			}
			if d, ok := cur[x]; ok {
				use[i], def[d] = d, true
			} else {
				cur[x] = i
			}
			i++
		case opLocalSet, opLocalTee:
			delete(cur, x)
			dirty(x)
			if in.op == opLocalTee && wrap {
				cur[x] = i
				i++
			}
		}
	}
	if len(use) == 0 {
		return b, 0, 0
	}
	slot := map[uint32]uint32{} // pointer local -> its i32 local, numbered in code order
	for i := range ins {
		if x := uint32(ins[i].imm); def[i] {
			if _, ok := slot[x]; !ok {
				slot[x] = first + uint32(len(slot))
			}
		}
	}
	out = make([]byte, 0, len(b)+len(b)/32)
	for i := 0; i < len(ins); i++ {
		in := ins[i]
		switch {
		case hasKey(use, i):
			out = wasmbin.AppendUint32(append(out, opLocalGet), slot[uint32(in.imm)])
			i++ // the wrap
			reuses++
		case def[i]:
			out = append(out, b[in.off:ins[i+1].end]...)
			out = wasmbin.AppendUint32(append(out, opLocalTee), slot[uint32(in.imm)])
			i++
		default:
			out = append(out, b[in.off:in.end]...)
		}
	}
	return out, len(slot), reuses
}

func hasKey(m map[int]int, k int) bool { _, ok := m[k]; return ok }
