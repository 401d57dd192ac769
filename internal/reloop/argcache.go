package reloop

import (
	"sort"

	"toxgate/internal/wasmbin"
)

// Argument caching: Go's wasm code passes arguments on its stack, in the
// caller's frame just above the callee's return address, and reads an argument
// from there every time it needs it (the register allocator treats such a
// load as free, so it never keeps an argument in a local across a call or a
// loop). In wasm each of those reads is a load from linear memory with a
// bounds check. cacheArgs loads each argument a function reads more than once
// into a new local right after the function has allocated its frame, and
// reads the local instead, in the code that the allocation dominates.
//
// That is right as long as nothing writes the argument's slot in between:
//
//   - callees write only the outgoing-argument area at the bottom of the
//     caller's frame, below the caller's own arguments;
//   - the function's own stores through the stack pointer in that code are
//     all known (with the stack pointer's state at each: the frame's, or 8
//     below while a return address is pushed for a call), and an argument slot
//     any of them may write is not cached;
//   - a pointer made to a slot at or above the arguments (an argument whose
//     address is taken) makes every slot from there on uncached; a pointer to
//     one of the frame's own variables (below the return address) stays
//     within that variable, as Go's bounds checks guarantee;
//   - a function that uses the stack pointer in any other way (copied into
//     another local, passed to a call, written other than by Go's
//     bookkeeping) is left alone;
//   - the frame does not move while the function runs its ordinary path: Go's
//     runtime moves a goroutine's stack only while the goroutine is stopped,
//     and in wasm a goroutine stops by unwinding the whole wasm stack (every
//     call returns 1), after which the function resumes in Go's dispatch loop
//     (reloop's slow copy) and reads its arguments from memory again. The
//     cached value is used only by code that the allocation dominates, and
//     that never runs after an unwind.
//
// The values are the same ones the loads would have returned, so the rewrite
// is invisible to the program; the stack maps the collector reads are
// untouched (arguments stay in memory, where the caller stored them).

// Stack-pointer bookkeeping states while cacheArgs walks a region.
const (
	spFrame  = iota // local 1 holds the frame's stack pointer
	spPushed        // local 1 is 8 below it: a return address was pushed for a call
	spOther         // anything else
	spDead          // no path reaches this point
)

// argKey is one cached argument read: the load instruction and its offset
// from the frame's stack pointer.
type argKey struct {
	op  byte
	off uint32
}

// loadType returns the value type a load opcode pushes.
func loadType(op byte) byte {
	switch {
	case op == 0x28 || op >= 0x2c && op <= 0x2f:
		return 0x7f // i32
	case op == 0x2a:
		return 0x7d // f32
	case op == 0x2b:
		return 0x7c // f64
	}
	return 0x7e // i64
}

// memSize returns the bytes a load or store opcode accesses.
func memSize(op byte) uint32 {
	switch op {
	case 0x28, 0x2a, 0x34, 0x35, 0x36, 0x38, 0x3e: // i32.load f32.load i64.load32_x i32.store f32.store i64.store32
		return 4
	case 0x29, 0x2b, 0x37, 0x39: // i64.load f64.load i64.store f64.store
		return 8
	case 0x2c, 0x2d, 0x30, 0x31, 0x3a, 0x3c: // 8-bit
		return 1
	}
	return 2 // 16-bit
}

// operandUser returns the index of the instruction that pops the value
// pushed just before ins[j], and how many values lie above it on the stack
// then; -1 when it cannot tell (a branch, a call, a block type it does not
// read). Blocks in between are skipped whole: their code cannot pop a value
// pushed outside them, and their results land above it.
func operandUser(b []byte, ins []instr, j int) (int, int) {
	depth := 0
	for ; j < len(ins); j++ {
		op := ins[j].op
		switch op {
		case opIf:
			if depth == 0 {
				return j, 0
			}
			depth--
			fallthrough
		case opBlock, opLoop:
			bt := b[ins[j].off+1]
			results := 0
			switch {
			case bt == blockEmpty:
			case bt >= 0x6f && bt <= 0x7f:
				results = 1
			default:
				return -1, 0
			}
			end := matchingEnd(ins, j)
			if end < 0 {
				return -1, 0
			}
			j = end
			depth += results
			continue
		}
		pop, push, ok := stackEffect(op)
		if !ok {
			return -1, 0
		}
		if pop > depth {
			return j, depth
		}
		depth += push - pop
	}
	return -1, 0
}

// matchingEnd returns the index of the end of the construct that ins[j]
// opens, or -1.
func matchingEnd(ins []instr, j int) int {
	d := 0
	for ; j < len(ins); j++ {
		switch ins[j].op {
		case opBlock, opLoop, opIf:
			d++
		case opEnd:
			d--
			if d == 0 {
				return j
			}
		}
	}
	return -1
}

// spKind is what a use of local SP does.
type spKind int

const (
	spUnknown spKind = iota // the pointer may go anywhere
	spAccess                // the address of a load or store at off
	spPointer               // a pointer to the frame slot at off, made for other code
	spKeeping               // bookkeeping or the stack-bound check
)

// spUse classifies the use of local SP at ins[j] (a local.get 1); for an
// access it also returns the load or store.
func spUse(b []byte, ins []instr, j int) (kind spKind, off uint32, mem int) {
	if k, ok := frameAddr(b, ins, j); ok {
		u, d := operandUser(b, ins, j+5)
		if u >= 0 && isMemOp(ins[u].op) && (ins[u].op < 0x36 && d == 0 || ins[u].op >= 0x36 && d == 1) {
			if o := uint64(memOffset(b, ins[u])) + uint64(k); o < 1<<32 {
				return spAccess, uint32(o), u
			}
		}
		return spPointer, k, -1
	}
	if j+3 < len(ins) && ins[j+1].op == opI64ExtendI32U && ins[j+2].op == opI64Const && (ins[j+3].op == opI64Add || ins[j+3].op == opI64Sub) {
		k, _, err := wasmbin.Int64(b, ins[j+2].off+1)
		if ins[j+3].op == opI64Sub {
			k = -k
		}
		if err != nil || k < 0 || k >= 1<<31 {
			return spUnknown, 0, -1
		}
		return spPointer, uint32(k), -1
	}
	// local.get 1; i32.const c; i32.add|i32.sub; then local.set 1, local.tee 1
	// or global.set 0.
	if j+3 < len(ins) && ins[j+1].op == opI32Const && (ins[j+2].op == 0x6a || ins[j+2].op == 0x6b) {
		n := ins[j+3]
		if (n.op == opLocalSet || n.op == opLocalTee) && n.imm == localSP || n.op == opGlobalSet && n.imm == 0 {
			return spKeeping, 0, -1
		}
	}
	u, d := operandUser(b, ins, j+1)
	if u < 0 {
		return spUnknown, 0, -1
	}
	switch op := ins[u].op; {
	case isMemOp(op) && (op < 0x36 && d == 0 || op >= 0x36 && d == 1):
		return spAccess, memOffset(b, ins[u]), u
	case op == 0x4b || op == 0x4c || op == 0x4d || op == 0x4e || op == 0x46 || op == 0x47:
		// the stack-bound check: compared with a limit
		return spKeeping, 0, -1
	}
	return spUnknown, 0, -1
}

// prologueAt reports whether ins[i:i+5] allocates the frame, local.get 1;
// i32.const F; i32.sub; local.tee 1; global.set 0, and is not the push of a
// return address (which stores to the new stack pointer right after), and
// returns F.
func prologueAt(b []byte, ins []instr, i int) (uint32, bool) {
	if i+4 >= len(ins) || ins[i].op != opLocalGet || ins[i].imm != localSP || ins[i+1].op != opI32Const ||
		ins[i+2].op != 0x6b || ins[i+3].op != opLocalTee || ins[i+3].imm != localSP ||
		ins[i+4].op != opGlobalSet || ins[i+4].imm != 0 || ins[i+1].imm <= 0 {
		return 0, false
	}
	if i+7 < len(ins) && ins[i+5].op == opLocalGet && ins[i+5].imm == localSP && ins[i+6].op == opI64Const &&
		ins[i+7].op == 0x37 && memOffset(b, ins[i+7]) == 0 {
		return 0, false // a return address push
	}
	return uint32(ins[i+1].imm), true
}

// cacheArgs rewrites b (decoded as ins) as described above. New locals are
// numbered from first on; it returns their types and the number of loads it
// replaced.
func cacheArgs(b []byte, ins []instr, first uint32) (out []byte, types []byte, replaced int) {
	frame, starts, ok := frameInfo(b, ins)
	if !ok || frame == 0 {
		return b, nil, 0
	}
	args := frame + 8 // the caller's frame: return address, then the arguments
	// Walk each region (the rest of the construct the allocation is in): the
	// loads of arguments, and what may write the argument slots while the
	// cached values are in use: the region's stores through local SP and
	// pointers made to slots at or above the arguments (offsets relative to
	// the frame's stack pointer).
	uses := map[int]argKey{} // index of local.get 1 -> key
	count := map[argKey]int{}
	type span struct{ lo, hi int64 }
	var written []span
	for _, s := range starts {
		ok := walkRegion(b, ins, s, func(j int, state int) {
			kind, off, u := spUse(b, ins, j)
			var shift int64 // frame SP minus local SP
			switch {
			case state == spDead || kind == spKeeping || kind == spAccess && ins[u].op < 0x36 && state != spFrame:
				return
			case state == spPushed:
				shift = -8
			case state == spOther:
				written = append(written, span{0, 1 << 33})
				return
			}
			switch {
			case kind == spPointer:
				// a pointer to a slot may reach the later slots of its
				// object; one below the arguments stays in the frame's own
				// variables
				if lo := int64(off) + shift; lo >= int64(frame) {
					written = append(written, span{lo, 1 << 33})
				}
			case kind == spAccess && ins[u].op >= 0x36:
				lo := int64(off) + shift
				written = append(written, span{lo, lo + int64(memSize(ins[u].op))})
			case kind == spAccess && state == spFrame && u == j+1 && off >= args:
				k := argKey{ins[u].op, off}
				uses[j] = k
				count[k]++
			}
		})
		if !ok {
			return b, nil, 0
		}
	}
	writable := func(k argKey) bool {
		lo, hi := int64(k.off), int64(k.off+memSize(k.op))
		for _, w := range written {
			if w.lo < hi && lo < w.hi {
				return true
			}
		}
		return false
	}
	var keys []argKey
	for k, n := range count {
		if n >= 2 && !writable(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return b, nil, 0
	}
	// The highest slot first, so that one bounds check covers the others.
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].off != keys[j].off {
			return keys[i].off > keys[j].off
		}
		return keys[i].op < keys[j].op
	})
	local := map[argKey]uint32{}
	for i, k := range keys {
		local[k] = first + uint32(i)
		types = append(types, loadType(k.op))
	}
	isStart := map[int]bool{}
	for _, s := range starts {
		isStart[s] = true
	}
	out = make([]byte, 0, len(b)+len(b)/16)
	for j := 0; j < len(ins); j++ {
		if isStart[j] {
			for _, k := range keys {
				out = append(out, opLocalGet, localSP, k.op)
				out = wasmbin.AppendUint32(out, alignOf(memSize(k.op)))
				out = wasmbin.AppendUint32(out, k.off)
				out = wasmbin.AppendUint32(append(out, opLocalSet), local[k])
			}
		}
		in := ins[j]
		if k, ok := uses[j]; ok {
			if l, ok := local[k]; ok {
				out = wasmbin.AppendUint32(append(out, opLocalGet), l)
				replaced++
				j++
				continue
			}
		}
		out = append(out, b[in.off:in.end]...)
	}
	return out, types, replaced
}

// frameInfo checks that every use of local SP in b (decoded as ins) is an
// access, a pointer to a slot, bookkeeping or the bound check, and every write
// of it bookkeeping, and returns the frame's size and where the code after
// each allocation of the frame starts (none, and frame 0, for a function
// without a frame); ok is false when the function is not of that shape.
func frameInfo(b []byte, ins []instr) (frame uint32, starts []int, ok bool) {
	return frameShape(b, ins, true)
}

// frameShape is frameInfo; with strict false it accepts any use of local SP
// (only its writes must be bookkeeping).
func frameShape(b []byte, ins []instr, strict bool) (frame uint32, starts []int, ok bool) {
	for j := 0; j < len(ins); j++ {
		in := ins[j]
		switch {
		case in.op == opLocalGet && in.imm == localSP:
			if kind, _, _ := spUse(b, ins, j); kind == spUnknown && strict {
				return 0, nil, false
			}
			if f, ok := prologueAt(b, ins, j); ok {
				if frame != 0 && f != frame {
					return 0, nil, false
				}
				frame = f
				starts = append(starts, j+5)
			}
		case (in.op == opLocalSet || in.op == opLocalTee) && in.imm == localSP:
			// local.get 1; i32.const; i32.add|sub; local.tee|set 1, or
			// global.get 0; local.set 1.
			if j >= 1 && ins[j-1].op == opGlobalGet && ins[j-1].imm == 0 {
				break
			}
			if j >= 3 && ins[j-3].op == opLocalGet && ins[j-3].imm == localSP && ins[j-2].op == opI32Const &&
				(ins[j-1].op == 0x6a || ins[j-1].op == 0x6b) {
				break
			}
			return 0, nil, false
		}
	}
	return frame, starts, true
}

// regionFrame is one construct entered inside a region.
type regionFrame struct {
	loop        bool
	hasElse     bool
	entry, exit int
}

// meetSP combines the stack pointer's states of two paths that join.
func meetSP(a, b int) int {
	switch {
	case a == spDead:
		return b
	case b == spDead || a == b:
		return a
	}
	return spOther
}

// enclosingAt returns the constructs that contain ins[s], outermost first:
// for each, whether the code after its end is reached only through ins[s]
// when it is entered there (a block or loop that no branch before ins[s]
// targets: its end is reached by falling through or by branches from later
// code). The code of an if's other arm, or after an if, is reached without
// passing ins[s].
func enclosingAt(ins []instr, s int) []bool {
	type open struct {
		op       byte
		targeted bool
	}
	var stack []open
	for j := 0; j < s; j++ {
		in := ins[j]
		mark := func(d uint32) {
			if int(d) < len(stack) {
				stack[len(stack)-1-int(d)].targeted = true
			}
		}
		switch in.op {
		case opBlock, opLoop, opIf:
			stack = append(stack, open{op: in.op})
		case opEnd:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case opBr, opBrIf:
			mark(uint32(in.imm))
		case opBrTable:
			for _, l := range in.labels {
				mark(l)
			}
		}
	}
	out := make([]bool, len(stack))
	for i, o := range stack {
		// a branch to a loop goes back to its start, before ins[s]
		out[i] = o.op == opLoop || o.op == opBlock && !o.targeted
	}
	return out
}

// walkRegion follows the stack pointer's state through the region that
// starts at ins[s] (right after the frame's allocation): the rest of the
// construct it is in, and on past the end of each enclosing block that only
// that code can reach (see enclosingAt), calling at(j, state) for every
// local.get 1 that is not bookkeeping. It returns false when a branch back to
// a loop carries another state than the loop's entry, which cacheArgs does not
// follow.
func walkRegion(b []byte, ins []instr, s int, at func(j, state int)) bool {
	_, ok := walkRegionEnd(b, ins, s, at)
	return ok
}

// walkRegionEnd is walkRegion that also returns where the region ends (the
// index of the instruction it stopped at, or len(ins)).
func walkRegionEnd(b []byte, ins []instr, s int, at func(j, state int)) (end int, ok bool) {
	state := spFrame
	var stack []regionFrame
	outer := enclosingAt(ins, s)
	outerExit := make([]int, len(outer)) // states branched to an enclosing block's end
	for i := range outerExit {
		outerExit[i] = spDead
	}
	branch := func(d uint32) bool {
		if int(d) >= len(stack) {
			// an enclosing construct: leaves the region, unless it is a
			// block the region goes on after
			if k := len(outer) - 1 - (int(d) - len(stack)); k >= 0 && outer[k] {
				outerExit[k] = meetSP(outerExit[k], state)
			}
			return true
		}
		f := &stack[len(stack)-1-int(d)]
		if f.loop {
			return state == f.entry
		}
		f.exit = meetSP(f.exit, state)
		return true
	}
	for j := s; j < len(ins); j++ {
		in := ins[j]
		switch in.op {
		case opBlock, opIf:
			stack = append(stack, regionFrame{entry: state, exit: spDead})
		case opLoop:
			stack = append(stack, regionFrame{loop: true, entry: state, exit: spDead})
		case opElse:
			if len(stack) == 0 {
				return j, true
			}
			f := &stack[len(stack)-1]
			f.exit, f.hasElse = meetSP(f.exit, state), true
			state = f.entry
		case opEnd:
			if len(stack) == 0 {
				if k := len(outer) - 1; k >= 0 && outer[k] {
					state = meetSP(state, outerExit[k])
					outer, outerExit = outer[:k], outerExit[:k]
					break
				}
				return j, true
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !f.loop {
				state = meetSP(state, f.exit)
				if !f.hasElse && f.entry != spDead {
					// an if without else may be skipped; a block is
					// treated the same way, which can only lose precision
					state = meetSP(state, f.entry)
				}
			}
		case opBr:
			if !branch(uint32(in.imm)) {
				return j, false
			}
			state = spDead
		case opBrIf:
			if !branch(uint32(in.imm)) {
				return j, false
			}
		case opBrTable:
			for _, l := range in.labels {
				if !branch(l) {
					return j, false
				}
			}
			state = spDead
		case opReturn, opUnreachable:
			state = spDead
		case opLocalGet:
			if in.imm != localSP {
				break
			}
			if j+3 < len(ins) && ins[j+1].op == opI32Const && (ins[j+2].op == 0x6a || ins[j+2].op == 0x6b) &&
				(ins[j+3].op == opLocalTee || ins[j+3].op == opLocalSet) && ins[j+3].imm == localSP {
				if state == spFrame && ins[j+2].op == 0x6b && ins[j+1].imm == 8 {
					state = spPushed
				} else if state != spDead {
					state = spOther
				}
				j += 3
				break
			}
			at(j, state)
		case opGlobalSet:
			if in.imm == 0 && (j == 0 || ins[j-1].op != opLocalTee || ins[j-1].imm != localSP) && state != spDead {
				state = spOther // the stack pointer moved without local SP
			}
		case opGlobalGet:
			if in.imm == 0 && j+1 < len(ins) && ins[j+1].op == opLocalSet && ins[j+1].imm == localSP {
				if state == spPushed {
					state = spFrame // the callee returned and popped its return address
				}
				j++
			}
		}
	}
	return len(ins), true
}
