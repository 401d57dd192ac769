package reloop

import "toxgate/internal/wasmbin"

// Frame base: one address value for every access to the frame.
//
// Go's wasm code keeps its stack pointer in local 1 and changes it around
// every call: it pushes the return address (local 1 -= 8, then the store)
// and reads the global back once the callee has returned. To wazero each of
// those is a new address value, and so is local 1 inside every loop (a local
// read in a loop body is a new value there, until the loop is compiled), so
// the frame's bounds are checked again after every call and in every
// iteration of a loop, and once more whenever an access reaches a higher
// slot than the checks before it did.
//
// rebaseFrame gives each region (the code after an allocation of the frame,
// as walkRegion follows it) a new local, base = the frame's stack pointer - 8,
// set once right after the allocation and never written again, and makes
// every load and store through local 1 there go through base instead, with
// the offset moved by the difference (+8 where local 1 holds the frame's
// stack pointer, +0 while a return address is pushed, when local 1 is 8
// below). The effective addresses are the same; local 1 keeps its
// bookkeeping, so everything else reads what it read before.
//
// It also adds probes: before the first access through base in each
// construct that wazero cannot know to be checked already (the region's
// start, a loop body, the code after a loop), a load at base's highest offset
// in the region, whose value is dropped. wazero removes the load (it has no
// effect) but keeps its bounds check, which then covers every later access
// through base that the probe dominates, instead of a check per access that
// reaches higher than the ones before it. The probed bytes lie in the frame or
// the caller's arguments, on the goroutine's stack: in linear memory whenever
// the function runs, so the probe can fail only where an access would.

// frameProbe returns the probe of base's bytes up to ceil (ceil ≥ 1).
func frameProbe(out []byte, base uint32, ceil uint32) []byte {
	out = wasmbin.AppendUint32(append(out, opLocalGet), base)
	if ceil >= 8 {
		out = append(out, 0x29, 3) // i64.load align=8
		out = wasmbin.AppendUint32(out, ceil-8)
	} else {
		out = append(out, 0x2d, 0) // i32.load8_u
		out = wasmbin.AppendUint32(out, ceil-1)
	}
	return append(out, opDrop)
}

// rebaseFrame rewrites b (decoded as ins) as described above, with the new
// local numbered first; it returns the local's types and the number of
// accesses it moved.
func rebaseFrame(b []byte, ins []instr, first uint32) (out []byte, types []byte, moved int) {
	// Uses of local SP other than accesses (a pointer into the frame made at
	// run time, say) do not matter here: they keep reading local SP.
	frame, starts, ok := frameShape(b, ins, false)
	if !ok || frame == 0 {
		return b, nil, 0
	}
	shift := map[int]uint32{} // local.get 1 of an access -> added to the access's offset
	mems := map[int]int{}     // the access -> its local.get 1
	regionEnd := map[int]int{}
	var ceil uint32
	for _, s := range starts {
		end, ok := walkRegionEnd(b, ins, s, func(j, state int) {
			kind, _, u := spUse(b, ins, j)
			if kind != spAccess || state != spFrame && state != spPushed {
				return
			}
			if _, dup := mems[u]; dup {
				return
			}
			var d uint32
			if state == spFrame {
				d = 8
			}
			o := uint64(memOffset(b, ins[u])) + uint64(d) + uint64(memSize(ins[u].op))
			if o >= 1<<31 {
				return
			}
			shift[j], mems[u] = d, j
			ceil = max(ceil, uint32(o))
		})
		if !ok {
			return b, nil, 0
		}
		regionEnd[s] = end
	}
	if len(shift) == 0 {
		return b, nil, 0
	}
	base := first
	// probed[k]: the construct at depth k of the region (the innermost last)
	// has checked base up to ceil on every path to the current instruction;
	// loop[k]: that construct is a loop.
	var probed, loop []bool
	end := -1 // where the current region ends
	out = make([]byte, 0, len(b)+len(b)/8)
	for j := 0; j < len(ins); j++ {
		in := ins[j]
		if e, ok := regionEnd[j]; ok {
			// base = local 1 - 8, then the first probe
			out = wasmbin.AppendUint32(append(out, opLocalGet), localSP)
			out = append(out, opI32Const, 8, 0x6b)
			out = wasmbin.AppendUint32(append(out, opLocalSet), base)
			out = frameProbe(out, base, ceil)
			probed, loop, end = append(probed[:0], true), append(loop[:0], false), e
		}
		if j >= end {
			probed, loop = probed[:0], loop[:0]
		}
		switch in.op {
		case opBlock, opIf:
			probed = append(probed, len(probed) > 0 && probed[len(probed)-1])
			loop = append(loop, false)
		case opLoop:
			probed, loop = append(probed, false), append(loop, true)
		case opElse:
			if n := len(probed); n >= 2 {
				probed[n-1] = probed[n-2]
			}
		case opEnd:
			// The region's own level stays: walkRegion goes on after the
			// end of the construct the allocation is in when only the
			// region reaches that code.
			if n := len(probed); n >= 2 {
				wasLoop := loop[n-1]
				probed, loop = probed[:n-1], loop[:n-1]
				if wasLoop {
					// base is another value inside the loop: what was
					// checked there is not known after it
					probed[n-2] = false
				}
			}
			out = append(out, b[in.off:in.end]...)
			if len(probed) > 0 {
				// where paths join, wazero's first read of a local that
				// holds one value on all of them records an alias of the
				// value for later reads, which the bounds check takes for
				// a new address; writing the value back records it instead
				out = wasmbin.AppendUint32(append(out, opLocalGet), base)
				out = wasmbin.AppendUint32(append(out, opLocalSet), base)
			}
			continue
		}
		if _, ok := shift[j]; ok {
			if n := len(probed); n > 0 && !probed[n-1] {
				out = frameProbe(out, base, ceil)
				probed[n-1] = true
			}
			out = wasmbin.AppendUint32(append(out, opLocalGet), base)
			moved++
			continue
		}
		if lg, ok := mems[j]; ok {
			out = appendMemOpAt(out, b, in, shift[lg])
			continue
		}
		out = append(out, b[in.off:in.end]...)
	}
	return out, []byte{0x7f}, moved
}
