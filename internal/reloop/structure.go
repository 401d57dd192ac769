package reloop

import (
	"errors"
	"fmt"
	"slices"

	"toxgate/internal/wasmbin"
)

// frame is one enclosing structure of the code being written: a loop headed by
// a segment (a branch to it goes back to the segment) or a block followed by
// a segment (a branch to it goes forward to the segment).
type frame struct {
	loop bool
	node int
}

// writer writes the structured copy of a goFunc.
type writer struct {
	f      *goFunc
	out    []byte
	stack  []frame
	rpo    []int // RPO number of each segment; -1 if unreachable from segment 0
	header []bool
	kids   [][]int // dominator-tree children, by increasing RPO number
	// slow holds the edges {from, to} taken through Go's dispatch loop.
	slow map[[2]int]bool
}

// structured returns f's segments reachable from segment 0 as nested blocks
// and loops in which every jump is a direct branch (the dominator-tree method
// of Ramsey, "Beyond Relooper", ICFP 2022). Where the control flow is
// irreducible, the edges that make it so leave the structured copy for Go's
// dispatch loop behind it, which runs the same code (slow jumps).
func (f *goFunc) structured() ([]byte, error) {
	n := len(f.segs)
	succ := make([][]int, n)
	for j := range n {
		succ[j] = f.succs(j)
	}
	w := &writer{f: f, slow: map[[2]int]bool{}}
	for w.analyse(succ) != nil {
		// Each round marks more edges slow; removing them can change the
		// dominator tree, so analyse again until the rest is reducible.
	}
	if len(w.slow) == 0 && !slices.Contains(w.header, true) {
		return nil, nil // no loop: threaded does better
	}
	if err := w.tree(0); err != nil {
		return nil, err
	}
	return w.out, nil
}

// analyse computes the reverse postorder, the dominator tree and the loop
// headers of the segments reachable from segment 0 by edges that are not
// slow. It marks the edges that make the graph irreducible slow and returns
// them, or nil when the graph is reducible.
func (w *writer) analyse(succ [][]int) [][2]int {
	n := len(succ)
	next := func(j int) []int {
		var out []int
		for _, t := range succ[j] {
			if t >= 0 && !w.slow[[2]int{j, t}] {
				out = append(out, t)
			}
		}
		return out
	}
	// Reverse postorder from segment 0, iteratively.
	order := make([]int, 0, n) // postorder
	seen := make([]bool, n)
	type item struct {
		node, next int
		succ       []int
	}
	st := []item{{0, 0, next(0)}}
	seen[0] = true
	for len(st) > 0 {
		top := &st[len(st)-1]
		if top.next < len(top.succ) {
			t := top.succ[top.next]
			top.next++
			if !seen[t] {
				seen[t] = true
				st = append(st, item{t, 0, next(t)})
			}
			continue
		}
		order = append(order, top.node)
		st = st[:len(st)-1]
	}
	slices.Reverse(order)
	rpo := make([]int, n)
	for j := range rpo {
		rpo[j] = -1
	}
	for i, j := range order {
		rpo[j] = i
	}
	preds := make([][]int, n)
	for _, j := range order {
		for _, t := range next(j) {
			preds[t] = append(preds[t], j)
		}
	}
	// Immediate dominators (Cooper, Harvey and Kennedy, "A Simple, Fast
	// Dominance Algorithm"), indexed by RPO number.
	idom := make([]int, len(order))
	for i := range idom {
		idom[i] = -1
	}
	idom[0] = 0
	intersect := func(a, b int) int {
		for a != b {
			for a > b {
				a = idom[a]
			}
			for b > a {
				b = idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for i := 1; i < len(order); i++ {
			nd := -1
			for _, p := range preds[order[i]] {
				pi := rpo[p]
				if idom[pi] == -1 {
					continue
				}
				if nd == -1 {
					nd = pi
				} else {
					nd = intersect(pi, nd)
				}
			}
			if nd != idom[i] {
				idom[i] = nd
				changed = true
			}
		}
	}
	dominates := func(a, b int) bool { // RPO numbers
		for b > a {
			b = idom[b]
		}
		return a == b
	}
	w.rpo, w.header, w.kids = rpo, make([]bool, n), make([][]int, n)
	var bad [][2]int
	for _, j := range order {
		for _, t := range next(j) {
			if rpo[t] <= rpo[j] {
				if !dominates(rpo[t], rpo[j]) {
					bad = append(bad, [2]int{j, t})
				}
				w.header[t] = true
			}
		}
	}
	for _, e := range bad {
		w.slow[e] = true
	}
	for i := 1; i < len(order); i++ {
		p := order[idom[i]]
		w.kids[p] = append(w.kids[p], order[i]) // order is by RPO, so kids are too
	}
	return bad
}

// tree writes segment x and the segments it dominates.
func (w *writer) tree(x int) error {
	if !w.header[x] {
		return w.within(x, w.kids[x])
	}
	w.out = append(w.out, opLoop, blockEmpty)
	w.stack = append(w.stack, frame{loop: true, node: x})
	if err := w.within(x, w.kids[x]); err != nil {
		return err
	}
	w.stack = w.stack[:len(w.stack)-1]
	w.out = append(w.out, opEnd)
	return nil
}

// within writes x followed by the trees of kids, each after a block that the
// code before it leaves by branching to the block's end.
func (w *writer) within(x int, kids []int) error {
	if len(kids) == 0 {
		return w.segment(x)
	}
	y := kids[len(kids)-1]
	w.out = append(w.out, opBlock, blockEmpty)
	w.stack = append(w.stack, frame{node: y})
	if err := w.within(x, kids[:len(kids)-1]); err != nil {
		return err
	}
	w.stack = w.stack[:len(w.stack)-1]
	w.out = append(w.out, opEnd)
	return w.tree(y)
}

// label returns the branch label, seen from depth d inside segment from, that
// reaches segment t.
func (w *writer) label(from, t, d int) (uint32, error) {
	if w.slow[[2]int{from, t}] {
		return 0, errSlow
	}
	back := w.rpo[t] <= w.rpo[from]
	for i := len(w.stack) - 1; i >= 0; i-- {
		if fr := w.stack[i]; fr.node == t && fr.loop == back {
			return uint32(d + len(w.stack) - 1 - i), nil
		}
	}
	return 0, fmt.Errorf("reloop: no enclosing label for the jump from segment %d to %d", from, t)
}

// segment writes segment j's code with its jumps made direct.
func (w *writer) segment(j int) error {
	f := w.f
	s := &f.segs[j]
	d := 0
	for k := s.from; k < s.to; k++ {
		if s.skip[k] {
			continue
		}
		in := f.ins[k]
		switch {
		case s.unwinds[k]:
			// The unwind exit encloses the whole copy, one level past the
			// block that guards it.
			w.out = wasmbin.AppendUint32(append(w.out, in.op), uint32(d+len(w.stack)+1))
			continue
		case in.op == opBr:
			if t, ok := s.jumps[k]; ok {
				l, err := w.label(j, t, d)
				if err == errSlow {
					w.slowJump(f.ins[k-2].imm, d)
					continue
				}
				if err != nil {
					return err
				}
				w.out = wasmbin.AppendUint32(append(w.out, opBr), l)
				f.direct++
				continue
			}
		}
		w.out = append(w.out, f.body[in.off:in.end]...)
		switch in.op {
		case opBlock, opLoop, opIf:
			d++
		case opEnd:
			d--
		}
	}
	if s.deadEnd {
		w.out = append(w.out, opUnreachable)
	}
	if !s.falls {
		return nil
	}
	if j+1 == len(f.segs) {
		w.out = append(w.out, opUnreachable)
		return nil
	}
	l, err := w.label(j, j+1, 0)
	if err == errSlow {
		pc := slices.Index(f.table, uint32(j+1))
		if pc < 0 {
			return fmt.Errorf("%w: segment %d has no PC_B", errShape, j+1)
		}
		w.slowJump(int64(pc), 0)
		return nil
	}
	if err != nil {
		return err
	}
	w.out = wasmbin.AppendUint32(append(w.out, opBr), l)
	return nil
}

// errSlow is label's answer for a slow edge.
var errSlow = errors.New("slow edge")

// slowJump writes a jump to the basic block at pc through Go's dispatch loop,
// from depth d inside the segment being written: PC_B is set as Go's code
// does, and the branch leaves the structured copy into the loop.
func (w *writer) slowJump(pc int64, d int) {
	w.f.slow++
	w.out = wasmbin.AppendInt32(append(w.out, opI32Const), int32(pc))
	w.out = append(w.out, opLocalSet, 0, opBr)
	w.out = wasmbin.AppendUint32(w.out, uint32(d+len(w.stack)))
}

// rewrite returns the new expression of f: the structured copy, entered when
// PC_B is 0 (every call), and Go's original dispatch loop, entered when PC_B
// names a resume point (a goroutine resuming after it unwound the stack).
func (f *goFunc) rewrite() ([]byte, error) {
	fast, err := f.structured()
	if err != nil {
		return nil, err
	}
	if fast == nil {
		return f.threaded(), nil
	}
	b := f.body
	start := f.ins[f.prefix].off
	out := make([]byte, 0, len(b)+len(fast)+8)
	out = append(out, b[:start]...)
	if f.unwind {
		out = append(out, b[start:f.ins[f.prefix].end]...)
	}
	out = append(out, opBlock, blockEmpty, opLocalGet, 0, opBrIf, 0)
	out = append(out, fast...)
	out = append(out, opUnreachable, opEnd)
	out = append(out, b[f.ins[f.loopAt].off:]...)
	return out, nil
}

// threaded returns f's expression with every forward jump (to a later basic
// block) made a direct branch in place: in Go's layout a basic block lies
// inside the dispatch blocks of all later ones, so the end of the block before
// the target is in reach. Backward jumps keep going through the dispatch loop,
// which suits a function without loops, where they are rare.
func (f *goFunc) threaded() []byte {
	out := make([]byte, 0, len(f.body))
	out = append(out, f.body[:f.ins[f.segs[0].from].off]...)
	for j := range f.segs {
		s := &f.segs[j]
		drop := map[int]bool{} // the i32.const and local.set of threaded jumps
		for k, t := range s.jumps {
			if t > j {
				drop[k-2], drop[k-1] = true, true
			}
		}
		d := 0
		for k := s.from; k < s.to; k++ {
			in := f.ins[k]
			if drop[k] {
				continue
			}
			if t, ok := s.jumps[k]; ok && t > j {
				out = wasmbin.AppendUint32(append(out, opBr), uint32(d+t-j-1))
				f.direct++
				continue
			}
			out = append(out, f.body[in.off:in.end]...)
			switch in.op {
			case opBlock, opLoop, opIf:
				d++
			case opEnd:
				d--
			}
		}
		if j+1 < len(f.segs) {
			out = append(out, opEnd) // the end of the dispatch block before the next segment
		}
	}
	return append(out, f.body[f.ins[f.segs[len(f.segs)-1].to].off:]...)
}
