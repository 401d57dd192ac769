package reloop

// Probes for straight-line accesses: wazero checks an address value again
// whenever an access through it reaches higher than the checks before it
// did, so Go's reads of a struct's fields in increasing order (offset 0,
// then 4, then 8, ...) are checked once per field. probeBases finds, for each
// read of an i32 local that is the address of a load or store, the accesses
// through the same local in the straight-line code that follows (no branch,
// call or construct; the local not written), and when they reach higher than
// the first one it puts a probe right after the read: a load at the highest
// of them, whose value is dropped. wazero removes the load and keeps its
// bounds check, which then covers the whole stretch.
//
// The probe reads only bytes that a later access of the same stretch reads or
// writes, and nothing between the two can leave the stretch but a trap, so it
// can fail only where that access would have failed a moment later; a
// program cannot tell the difference (a trap ends the instance either way).

// baseUser returns the index of the load or store that takes the value
// pushed by ins[j] as its address, or -1 when its user is something else or
// lies past end (exclusive).
func baseUser(b []byte, ins []instr, j, end int) int {
	u, d := operandUser(b, ins, j+1)
	if u < 0 || u >= end || !isMemOp(ins[u].op) || !(ins[u].op < 0x36 && d == 0 || ins[u].op >= 0x36 && d == 1) {
		return -1
	}
	return u
}

// straightEnd returns the index of the first instruction after ins[j] that
// ends a straight-line stretch of code in which local l keeps its value.
func straightEnd(ins []instr, j int, l int64) int {
	k := j + 1
	for ; k < len(ins); k++ {
		in := ins[k]
		if _, _, ok := stackEffect(in.op); !ok {
			break
		}
		if (in.op == opLocalSet || in.op == opLocalTee) && in.imm == l {
			break
		}
	}
	return k
}

// probeBases adds the probes described above to b (decoded as ins); isI32
// says which locals are i32. It returns the new code and the number of
// probes.
func probeBases(b []byte, ins []instr, isI32 func(l int64) bool) ([]byte, int) {
	type probe struct {
		local int64
		ceil  uint32
	}
	probes := map[int]probe{}  // after ins[j]
	covered := map[int64]int{} // local -> end of the stretch already probed
	for j, in := range ins {
		if in.op != opLocalGet && in.op != opLocalTee || !isI32(in.imm) {
			continue
		}
		if e, ok := covered[in.imm]; ok && j < e {
			continue
		}
		end := straightEnd(ins, j, in.imm)
		u := baseUser(b, ins, j, end)
		if u < 0 {
			continue
		}
		first := uint64(memOffset(b, ins[u])) + uint64(memSize(ins[u].op))
		top := first
		for k := j + 1; k < end; k++ {
			if ins[k].op != opLocalGet || ins[k].imm != in.imm {
				continue
			}
			if v := baseUser(b, ins, k, end); v >= 0 {
				top = max(top, uint64(memOffset(b, ins[v]))+uint64(memSize(ins[v].op)))
			}
		}
		covered[in.imm] = end
		if top > first && top < 1<<32 {
			probes[j] = probe{in.imm, uint32(top)}
		}
	}
	if len(probes) == 0 {
		return b, 0
	}
	out := make([]byte, 0, len(b)+len(probes)*8)
	for j, in := range ins {
		out = append(out, b[in.off:in.end]...)
		if p, ok := probes[j]; ok {
			out = frameProbe(out, uint32(p.local), p.ceil)
		}
	}
	return out, len(probes)
}
