package reloop

import (
	"fmt"
	"slices"
)

// goFunc is a Go function body split along its dispatch loop (see the package
// documentation for the shape).
type goFunc struct {
	body    []byte  // the expression, after the locals
	ins     []instr // its instructions
	prefix  int     // instructions before the dispatch loop (index of the first block or loop)
	unwind  bool    // an unwind-exit block encloses the loop
	loopAt  int     // index of the loop instruction
	loopEnd int     // index of the loop's end
	table   []uint32
	segs    []segment
	noret   func(fn int64) bool
	direct  int // jumps written as direct branches
	slow    int // edges of the structured copy that go through the dispatch loop
}

// segment is one basic block of the Go function: the code between two ends of
// the dispatch blocks.
type segment struct {
	from, to int // instruction indexes [from, to)
	// jumps maps the index of a jump's br to the target segment; the i32.const
	// and local.set before it are in skip.
	jumps map[int]int
	skip  map[int]bool
	// unwinds holds the indexes of branches to the unwind exit.
	unwinds map[int]bool
	falls   bool // control reaches the segment's end
	// deadEnd: the segment ends with a call to a function that never returns
	// normally, so its end is never reached although nothing says so.
	deadEnd bool
}

// parseGoFunc recognises Go's dispatch-loop shape in body (the expression of a
// function, after its locals), or returns errShape.
//
// noret reports the functions (by function index) that never return normally
// (see noReturn); it may be nil.
func parseGoFunc(body []byte, noret func(fn int64) bool) (*goFunc, error) {
	ins, err := decodeAll(body)
	if err != nil {
		return nil, err
	}
	f := &goFunc{body: body, ins: ins, noret: noret}
	i := 0
	for i < len(ins) && !isControl(ins[i].op) {
		i++
	}
	f.prefix = i
	if i+1 < len(ins) && ins[i].op == opBlock && f.emptyType(i) && ins[i+1].op == opLoop {
		f.unwind = true
		i++
	}
	if i >= len(ins) || ins[i].op != opLoop || !f.emptyType(i) {
		return nil, errNoLoop
	}
	f.loopAt = i
	i++
	nb := 0
	for i < len(ins) && ins[i].op == opBlock && f.emptyType(i) {
		nb++
		i++
	}
	if nb < 2 || i+2 >= len(ins) || ins[i].op != opLocalGet || ins[i].imm != 0 || ins[i+1].op != opBrTable || ins[i+2].op != opEnd {
		return nil, errShape
	}
	f.table = ins[i+1].labels
	for _, l := range f.table {
		if int(l) >= nb {
			return nil, errShape
		}
	}
	i += 3
	// Segments: nb of them, each ended by the end of the next dispatch block;
	// the last one by the end of the loop.
	for j := 0; j < nb; j++ {
		s := segment{from: i, jumps: map[int]int{}, skip: map[int]bool{}, unwinds: map[int]bool{}}
		depth := 0
		for ; i < len(ins); i++ {
			op := ins[i].op
			if op == opEnd && depth == 0 {
				break
			}
			switch op {
			case opBlock, opLoop, opIf:
				depth++
			case opEnd:
				depth--
			}
		}
		if i >= len(ins) {
			return nil, errShape
		}
		s.to = i
		i++ // the end
		if err := f.classify(&s, j, nb); err != nil {
			return nil, err
		}
		f.segs = append(f.segs, s)
	}
	f.loopEnd = i - 1
	// The tail: unreachable, [end of the unwind exit, i32.const 1], end.
	want := []byte{opUnreachable}
	if f.unwind {
		want = append(want, opEnd, opI32Const)
	}
	want = append(want, opEnd)
	if len(ins)-i != len(want) {
		return nil, errShape
	}
	for k, op := range want {
		if ins[i+k].op != op {
			return nil, errShape
		}
	}
	if f.unwind && ins[i+2].imm != 1 {
		return nil, errShape
	}
	return f, nil
}

// emptyType reports whether the block, loop or if at index i has type [] -> [].
func (f *goFunc) emptyType(i int) bool {
	return f.ins[i].end == f.ins[i].off+2 && f.body[f.ins[i].off+1] == blockEmpty
}

// isControl reports whether op starts or ends a structure or branches.
func isControl(op byte) bool {
	switch op {
	case opBlock, opLoop, opIf, opElse, opEnd, opBr, opBrIf, opBrTable, opReturn:
		return true
	}
	return false
}

// classify finds the jumps, unwind branches and fall-through of segment j of nb.
func (f *goFunc) classify(s *segment, j, nb int) error {
	ins := f.ins
	depth := 0
	pcbSet := false // PC_B was written in this segment by code that is not a jump
	last := -1      // index of the last instruction that leaves depth 0
	lastCall := -1  // index of a call followed only by Go's unwind check
	for k := s.from; k < s.to; k++ {
		in := ins[k]
		switch in.op {
		case opBlock, opLoop, opIf:
			depth++
		case opEnd:
			depth--
		case opLocalSet, opLocalTee:
			if in.imm == 0 && !(k+1 < s.to && ins[k+1].op == opBr && in.op == opLocalSet) {
				pcbSet = true
			}
		case opLocalGet:
			if in.imm == 0 && !pcbSet {
				return fmt.Errorf("%w: PC_B read in a segment", errShape)
			}
		case opBrTable:
			for _, l := range in.labels {
				if int(l) >= depth {
					return fmt.Errorf("%w: br_table leaves a segment", errShape)
				}
			}
		case opBr, opBrIf:
			l := int(in.imm)
			if l < depth {
				break
			}
			out := l - depth // 0 = the next dispatch block
			switch {
			case out < nb-1-j:
				return fmt.Errorf("%w: branch to a dispatch block", errShape)
			case out == nb-1-j: // the dispatch loop: a jump
				if in.op != opBr || k-2 < s.from || ins[k-1].op != opLocalSet || ins[k-1].imm != 0 || ins[k-2].op != opI32Const {
					return fmt.Errorf("%w: branch to the loop that is not a jump", errShape)
				}
				p := ins[k-2].imm
				t := f.table[len(f.table)-1]
				if p >= 0 && p < int64(len(f.table)-1) {
					t = f.table[p]
				}
				s.jumps[k] = int(t)
				s.skip[k-2], s.skip[k-1] = true, true
			case out == nb-j && f.unwind:
				s.unwinds[k] = true
			default:
				return fmt.Errorf("%w: branch out of the function's structure", errShape)
			}
		}
		if depth == 0 {
			last = k
			switch {
			case in.op == opCall:
				lastCall = k
			case in.op == opGlobalGet || in.op == opLocalSet || s.unwinds[k]:
			default:
				lastCall = -1
			}
		}
		if depth < 0 {
			return fmt.Errorf("%w: unbalanced segment", errShape)
		}
	}
	s.falls = true
	if last >= 0 {
		switch ins[last].op {
		case opBr, opBrTable, opReturn, opUnreachable:
			s.falls = false
		}
	}
	if s.falls && lastCall >= 0 && f.noret != nil && f.noret(ins[lastCall].imm) {
		s.falls, s.deadEnd = false, true
	}
	return nil
}

// succs returns the successor segments of segment j; -1 stands for falling
// off the last segment (a trap in Go's code).
func (f *goFunc) succs(j int) []int {
	s := &f.segs[j]
	var out []int
	for k := s.from; k < s.to; k++ {
		if t, ok := s.jumps[k]; ok && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if s.falls {
		t := j + 1
		if t == len(f.segs) {
			t = -1
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
