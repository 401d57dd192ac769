package reloop

import (
	"bytes"
	"errors"
	"fmt"

	"toxgate/internal/wasmbin"
)

// Finishing: rewrites for wazero's bounds checks, run on the final module.
//
// wazero's optimising compiler checks every load and store against the
// memory's length, except when it has already checked the same SSA value (the
// same address value, not merely an equal one) up to at least the same offset
// on every path to the access. Go's code, once binaryen has optimised it, gives
// it few such chances. Finish rewrites three shapes so that it gets more,
// and two more that save accesses themselves, without changing what the
// program computes:
//
//   - Frame slot addresses. Go often addresses a slot of its frame the long
//     way, local.get 1; i64.extend_i32_u; i64.const k; i64.add; i32.wrap_i64
//     (the slot's address as a 64-bit pointer, converted back), a new value
//     each time. Folded into the access's offset (local.get 1 with offset+k),
//     every frame access shares local SP's value. The effective address is
//     the same: Go's stack lies below 4 GiB.
//   - Repeated pointer conversions. Go converts its i64 pointers with
//     i32.wrap_i64 at every access, so two fields of one struct are two
//     values. The first conversion in a stretch of code where the pointer does
//     not change is kept in a new i32 local and the others read it.
//   - if without else. wazero builds the implied else block and leaves it in
//     the same step, so that block passes on no known bounds and every
//     address is checked again after each of Go's inline nil checks
//     (if; call sigpanic; end). An explicit empty else means the same.
//   - Argument reads. Go reads each argument from its caller's frame every
//     time it needs it; an argument read more than once is loaded into a
//     local once, after the frame is allocated (see argcache.go). It runs
//     after the frame slot folding, which also reads binaryen's form of a
//     slot address, i64.const -k; i64.sub.
//   - Small bulk-memory operations. memory.fill and memory.copy of at most 64
//     bytes, which wazero runs as calls of Go's memmove, become loads and
//     stores of words (see memops.go).
//   - Frame base. Go moves its stack pointer local around every call (the
//     return address's push, the read back after), and a local read inside
//     a loop is a new value to wazero in each loop, so frame accesses are
//     checked after every call and in every iteration, once per higher slot.
//     Every access to the frame in the code after its allocation goes
//     through one new local, set once, with probes that check the highest
//     slot once per loop (see spbase.go).
//   - Probes for straight-line accesses. Where a stretch of code without
//     branches or calls reads or writes through one i32 local at increasing
//     offsets, a dropped load at the highest offset right after the first
//     read of the local lets one check cover them all (see probes.go).
//
// Run it last: binaryen's optimiser would undo the wrap reuses, the elses
// and the argument locals. Each of the first three alone gains little, since
// a value wazero knows is forgotten at the next nil check unless the else is
// there; what they gain together: sdk/README.md.

// FinishStats says what Finish did.
type FinishStats struct {
	Bodies       int // function bodies read
	FrameFolds   int // frame slot addresses folded into their access
	WrapReuses   int // pointer conversions replaced by a read of an earlier one
	ArgReads     int // argument loads replaced by a read of a local
	FrameRebases int // frame accesses moved to the frame base local
	Probes       int // bounds-check probes added before straight-line accesses
	MemOps       int // memory.fill and memory.copy expanded into loads and stores
	Elses        int // empty elses added
	Undecodable  int // bodies left as they were: an instruction Finish does not know
}

// Finish returns wasm with the rewrites above applied to every function body
// it can decode; the other sections are copied byte for byte.
func Finish(wasm []byte) ([]byte, FinishStats, error) {
	var st FinishStats
	if !wasmbin.HasHeader(wasm) {
		return nil, st, errors.New("reloop: not a WebAssembly 1.0 module")
	}
	secs, err := wasmbin.Sections(wasm)
	if err != nil {
		return nil, st, fmt.Errorf("reloop: %w", err)
	}
	var params []int // parameter count of each function type
	var funcTypes []uint32
	out := make([]byte, 0, len(wasm)+len(wasm)/16)
	out = append(out, wasm[:8]...)
	for _, sec := range secs {
		switch sec.ID {
		case wasmbin.SectionType:
			// Types Finish cannot read leave parameter counts unknown, and
			// the rewrites that need them are skipped.
			params, _ = typeParamCounts(sec.Payload)
		case wasmbin.SectionFunction:
			if funcTypes, err = u32Vec(sec.Payload); err != nil {
				return nil, st, fmt.Errorf("reloop: function section: %w", err)
			}
		}
		if sec.ID != wasmbin.SectionCode {
			out = append(out, sec.Whole...)
			continue
		}
		bodies, err := wasmbin.CodeBodies(sec.Payload)
		if err != nil {
			return nil, st, fmt.Errorf("reloop: %w", err)
		}
		for fn, body := range bodies {
			np := -1
			if fn < len(funcTypes) && int(funcTypes[fn]) < len(params) {
				np = params[funcTypes[fn]]
			}
			bodies[fn] = finishBody(body, np, &st)
		}
		out = wasmbin.AppendSection(out, sec.ID, wasmbin.AppendBodies(make([]byte, 0, len(sec.Payload)+len(sec.Payload)/16), bodies))
	}
	return out, st, nil
}

// finishBody applies the rewrites to one body; a body it cannot decode is
// returned as it is.
func finishBody(body []byte, nparams int, st *FinishStats) []byte {
	st.Bodies++
	locals, p, err := localTypes(body)
	if err != nil {
		st.Undecodable++
		return body
	}
	expr := body[p:]
	ins, err := decodeAll(expr)
	if err != nil {
		st.Undecodable++
		return body
	}
	// Go's shape: param 0 is PC_B, local 1 its stack pointer.
	goShape := len(locals) > 0 && locals[0] == 0x7f && nparams == 1
	var added []byte // the types of the locals the rewrites add, in order
	next := func() uint32 { return uint32(nparams + len(locals) + len(added)) }
	// apply runs one rewrite when cond holds; n is what it did.
	apply := func(cond bool, rewrite func() (out []byte, types []byte, n int), count *int) bool {
		if !cond {
			return true
		}
		out, types, n := rewrite()
		if n == 0 {
			return true
		}
		*count += n
		expr, added = out, append(added, types...)
		ins, err = decodeAll(expr)
		return err == nil
	}
	ok := apply(goShape, func() ([]byte, []byte, int) { out, n := foldFrameAddrs(expr, ins); return out, nil, n }, &st.FrameFolds) &&
		apply(goShape, func() ([]byte, []byte, int) { return cacheArgs(expr, ins, next()) }, &st.ArgReads) &&
		apply(goShape, func() ([]byte, []byte, int) { return rebaseFrame(expr, ins, next()) }, &st.FrameRebases) &&
		apply(nparams >= 0, func() ([]byte, []byte, int) { return smallMemOps(expr, ins, next()) }, &st.MemOps) &&
		apply(nparams >= 0, func() ([]byte, []byte, int) {
			out, n, reuses := reuseWraps(expr, ins, next())
			return out, bytes.Repeat([]byte{0x7f}, n), reuses
		}, &st.WrapReuses) &&
		apply(true, func() ([]byte, []byte, int) { out, n := explicitElse(expr, ins); return out, nil, n }, &st.Elses)
	if !ok {
		return body
	}
	if nparams >= 0 {
		// The probes read i32 locals (the parameters' types are not at hand
		// here, so parameters are left out).
		all := append(append([]byte(nil), locals...), added...)
		isI32 := func(l int64) bool {
			k := l - int64(nparams)
			return k >= 0 && k < int64(len(all)) && all[k] == 0x7f
		}
		var np int
		expr, np = probeBases(expr, ins, isI32)
		st.Probes += np
	}
	head := body[:p]
	for i := 0; i < len(added); {
		n := 1
		for i+n < len(added) && added[i+n] == added[i] {
			n++
		}
		head = appendLocalGroup(head, n, added[i])
		i += n
	}
	return append(append(make([]byte, 0, len(head)+len(expr)), head...), expr...)
}

// appendLocalGroup returns the locals header h with n more locals of type t.
func appendLocalGroup(h []byte, n int, t byte) []byte {
	groups, p, _ := wasmbin.Uint32(h, 0)
	out := wasmbin.AppendUint32(nil, groups+1)
	out = append(out, h[p:]...)
	out = wasmbin.AppendUint32(out, uint32(n))
	return append(out, t)
}

// explicitElse adds an empty else to every if that has none.
func explicitElse(b []byte, ins []instr) ([]byte, int) {
	const (
		other = iota
		ifNoElse
		ifElse
	)
	var stack []int
	out := make([]byte, 0, len(b)+len(b)/16)
	added := 0
	for _, in := range ins {
		switch in.op {
		case opBlock, opLoop:
			stack = append(stack, other)
		case opIf:
			stack = append(stack, ifNoElse)
		case opElse:
			if len(stack) > 0 {
				stack[len(stack)-1] = ifElse
			}
		case opEnd:
			if len(stack) > 0 {
				if stack[len(stack)-1] == ifNoElse {
					out = append(out, opElse)
					added++
				}
				stack = stack[:len(stack)-1]
			}
		}
		out = append(out, b[in.off:in.end]...)
	}
	return out, added
}

// typeParamCounts returns the number of parameters of each type in a type
// section (-1 for a type that is not a function type).
func typeParamCounts(sec []byte) ([]int, error) {
	n, q, err := wasmbin.Uint32(sec, 0)
	if err != nil {
		return nil, err
	}
	var out []int
	for ; n > 0; n-- {
		if q >= len(sec) || sec[q] != 0x60 {
			return nil, errors.New("not a function type")
		}
		var np, nr uint32
		if np, q, err = wasmbin.Uint32(sec, q+1); err != nil || q+int(np) > len(sec) {
			return nil, errors.New("truncated parameters")
		}
		q += int(np)
		if nr, q, err = wasmbin.Uint32(sec, q); err != nil || q+int(nr) > len(sec) {
			return nil, errors.New("truncated results")
		}
		q += int(nr)
		out = append(out, int(np))
	}
	return out, nil
}

// u32Vec reads a vector of u32 (the function section).
func u32Vec(sec []byte) ([]uint32, error) {
	n, q, err := wasmbin.Uint32(sec, 0)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, 0, n)
	for ; n > 0; n-- {
		var v uint32
		if v, q, err = wasmbin.Uint32(sec, q); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
