package wasmrt

import "toxgate/internal/wasmbin"

// codeState is what the rewrite of one function body tracks.
type codeState struct {
	loopCheck []byte  // the count of one loop iteration (loopCheckFor), for this function
	counter   uint32  // the loop counter local of this function
	labels    []scope // the labels in scope, innermost last
	loops     int     // loops met so far in this function
	edges     []int   // back edges of each loop of the function, by order (from a dry run)
	dry       bool    // the dry run: count back edges, change nothing
	scratch   []byte  // the dry run's output, thrown away
	sawCall   bool    // the function calls something
}

// label is the kind of one enclosing block, loop, if or try of the code
// being rewritten.
type label byte

const (
	labelBlock    label = iota // a branch to it goes forward
	labelLoop                  // a loop without parameters: its back edges count iterations
	labelLoopHead              // a loop that may take parameters: its header counts iterations
)

// scope is one label in scope: its kind and, for a loop, its number in the
// function.
type scope struct {
	kind label
	loop int
}

// maxBackEdges is the most back edges a loop may have to be counted on them;
// a loop with more is counted at its header. Each of Go's dispatch loops (in
// a module as the go tool writes it) has a back edge for every jump of its
// function, while a structured loop has one or two. In a module rewritten by
// reloop (it carries abi.ReloopSection) every loop is counted on its back
// edges: there the dispatch loops run only when a goroutine resumes, except
// in functions without loops, which enter theirs once per call, and a header
// check would cost that every call.
const maxBackEdges = 8

// code rewrites the payload of the code section: each body gets a loop
// counter local, the fuel check at its entry when it calls anything, and its
// loops counted; $tick is appended.
func (fr *fuelRewriter) code(r *wasmbin.Reader) ([]byte, error) {
	n := r.U32()
	p := wasmbin.AppendUint32(nil, n+1)
	var body []byte
	for i := uint32(0); i < n && r.Err() == nil; i++ {
		size := r.U32()
		br := wasmbin.NewReader(r.Bytes(int(size)))
		if err := r.Err(); err != nil {
			return nil, err
		}
		var err error
		if body, err = fr.body(i, br, body[:0]); err != nil {
			return nil, err
		}
		p = wasmbin.AppendUint32(p, uint32(len(body)))
		p = append(p, body...)
	}
	// $tick: no locals, the check, end.
	tick := append(append([]byte{0x00}, fr.check...), wasmbin.OpEnd)
	p = wasmbin.AppendUint32(p, uint32(len(tick)))
	return append(p, tick...), r.Err()
}

// body appends to out the rewrite of body i, read by br.
func (fr *fuelRewriter) body(i uint32, br *wasmbin.Reader, out []byte) ([]byte, error) {
	groups := br.U32()
	groupsEnd := br.Offset()
	locals := uint64(0)
	for j := uint32(0); j < groups && br.Err() == nil; j++ {
		locals += uint64(br.U32())
		br.ValType()
	}
	if int(i) >= len(fr.funcTypes) || int(fr.funcTypes[i]) >= len(fr.paramCounts) {
		return nil, unsupported("function %d: no type", i)
	}
	counter := uint64(fr.paramCounts[fr.funcTypes[i]]) + locals // the new i32 local
	if counter >= 50000 {
		return nil, unsupported("function %d: too many locals", i)
	}
	body := wasmbin.AppendUint32(out, groups+1)
	body = append(body, br.Since(groupsEnd)...)
	body = append(body, 0x01, wasmbin.I32) // one i32: the loop counter
	fr.loopCheck = fr.loopCheckFor(uint32(counter))
	fr.counter = uint32(counter)
	// A dry run counts the back edges of each loop, then the real one
	// rewrites.
	code, entry := br.Offset(), 0
	fr.dry, fr.edges = true, fr.edges[:0]
	for pass := 0; pass < 2; pass++ {
		fr.labels, fr.loops = fr.labels[:0], 0
		br.Seek(code)
		if pass == 1 {
			fr.dry, fr.sawCall = false, false
		}
		out := fr.scratch[:0]
		if pass == 1 {
			out = body
		}
		entry = len(out)
		out = append(out, fr.check...)
		depth := 0
		for !br.EOF() {
			var err error
			if out, err = fr.instr(br, out, &depth, true); err != nil {
				return nil, err
			}
		}
		if br.Err() == nil && depth != -1 {
			return nil, unsupported("function %d: unbalanced blocks", i)
		}
		if pass == 0 {
			fr.scratch = out
		} else {
			body = out
		}
	}
	if err := br.Err(); err != nil {
		return nil, err
	}
	if !fr.sawCall {
		// A function that calls nothing cannot start a runaway call tree,
		// and its loops count themselves: no check at its entry.
		body = append(body[:entry], body[entry+len(fr.check):]...)
	}
	return body, nil
}

// instr copies one instruction from r to p, renumbering function indices and,
// in code, counting loop iterations (see loop and backEdge). depth tracks
// block nesting (end of the function or expression makes it -1).
func (fr *fuelRewriter) instr(r *wasmbin.Reader, p []byte, depth *int, inCode bool) ([]byte, error) {
	in, err := r.Instr()
	if err != nil {
		return nil, err
	}
	raw := r.Since(in.Off)
	switch in.Op {
	case wasmbin.OpBlock, wasmbin.OpIf, wasmbin.OpTry, wasmbin.OpTryTable:
		*depth++
		fr.push(labelBlock, -1)
	case wasmbin.OpLoop:
		*depth++
		if inCode {
			return fr.loop(in, raw, p), nil
		}
	case wasmbin.OpEnd, wasmbin.OpDelegate:
		*depth--
		fr.pop()
	case wasmbin.OpBr, wasmbin.OpBrIf:
		l := uint32(in.Imm)
		if t := fr.target(l); inCode && t.kind == labelLoop {
			if fr.dry {
				fr.edges[t.loop]++
				break
			}
			return fr.backEdge(p, in.Op == wasmbin.OpBrIf, l), nil
		}
	case wasmbin.OpBrTable:
		if inCode && fr.anyLoop(in.Labels) {
			// One iteration count before the table, whichever way it goes.
			p = append(p, fr.loopCheck...)
		}
	case wasmbin.OpCall, wasmbin.OpReturnCall, wasmbin.OpRefFunc:
		fr.sawCall = fr.sawCall || in.Op != wasmbin.OpRefFunc
		return wasmbin.AppendUint32(append(p, in.Op), fr.fn(uint32(in.Imm))), nil
	case wasmbin.OpCallIndirect, wasmbin.OpReturnCallIndirect:
		fr.sawCall = true
	}
	return append(p, raw...), nil
}

// loop copies the loop instruction raw to p and opens its label: counted on
// its back edges when it takes no parameters (its block type is empty or a
// value type) and has at most maxBackEdges of them (any number in a module
// rewritten by reloop), counted at its header otherwise.
func (fr *fuelRewriter) loop(in wasmbin.Instr, raw, p []byte) []byte {
	simple := in.Imm < 0
	n := fr.loops
	fr.loops++
	if fr.dry {
		fr.edges = append(fr.edges, 0)
		fr.push(labelLoop, n)
		return append(p, raw...)
	}
	if simple && n < len(fr.edges) && (fr.edges[n] <= maxBackEdges || fr.relooped) {
		fr.push(labelLoop, n)
		return append(p, raw...)
	}
	fr.push(labelLoopHead, n)
	return append(append(p, raw...), fr.loopCheck...)
}

// anyLoop reports whether a branch to one of labels goes back to a loop
// counted on its back edges.
func (fr *fuelRewriter) anyLoop(labels []uint32) bool {
	for _, l := range labels {
		if fr.target(l).kind == labelLoop {
			return true
		}
	}
	return false
}

func (fr *fuelRewriter) push(l label, loop int) { fr.labels = append(fr.labels, scope{l, loop}) }

func (fr *fuelRewriter) pop() {
	if len(fr.labels) > 0 {
		fr.labels = fr.labels[:len(fr.labels)-1]
	}
}

// target returns the label a branch with depth l goes to (a labelBlock for
// the function itself).
func (fr *fuelRewriter) target(l uint32) scope {
	if int(l) >= len(fr.labels) {
		return scope{labelBlock, -1}
	}
	return fr.labels[len(fr.labels)-1-int(l)]
}

// loopCheckFor returns the count of one loop iteration (at the header of a
// loop that may take parameters, or before a br_table that may go to a loop)
// for a function whose loop counter is local c: count the iteration, and
// every loopBatch iterations (when the counter wraps to 0, see loopStep) run
// the fuel check.
//
//	local.get c; i32.const loopStep; i32.add; local.tee c; i32.eqz
//	if; <check>; end
func (fr *fuelRewriter) loopCheckFor(c uint32) []byte {
	b := wasmbin.AppendUint32([]byte{wasmbin.OpLocalGet}, c)
	b = wasmbin.AppendInt32(append(b, wasmbin.OpI32Const), loopStep)
	b = append(b, wasmbin.OpI32Add, wasmbin.OpLocalTee)
	b = wasmbin.AppendUint32(b, c)
	b = append(b, wasmbin.OpI32Eqz, wasmbin.OpIf, wasmbin.BlockEmpty)
	b = append(b, fr.check...)
	return append(b, wasmbin.OpEnd)
}

// backEdge appends to p the branch br l (br_if l when cond) to a loop, counting
// the iteration on the way: the branch is taken directly while the counter is
// not zero, and through the fuel check once it wraps to zero, every loopBatch
// iterations (see loopStep). The hot path is an add and the branch on its
// result, with no block in the loop's code; a loop that is never branched
// back to is never counted.
//
//	local.get c; i32.const loopStep; i32.add; local.tee c; br_if l
//	call $tick; br l
//
// For br_if, the same inside if ... end (labels one deeper).
func (fr *fuelRewriter) backEdge(p []byte, cond bool, l uint32) []byte {
	if cond {
		p = append(p, wasmbin.OpIf, wasmbin.BlockEmpty)
		l++
	}
	p = wasmbin.AppendUint32(append(p, wasmbin.OpLocalGet), fr.counter)
	p = wasmbin.AppendInt32(append(p, wasmbin.OpI32Const), loopStep)
	p = append(p, wasmbin.OpI32Add, wasmbin.OpLocalTee)
	p = wasmbin.AppendUint32(p, fr.counter)
	p = wasmbin.AppendUint32(append(p, wasmbin.OpBrIf), l)
	p = append(p, fr.tick...)
	p = wasmbin.AppendUint32(append(p, wasmbin.OpBr), l)
	if cond {
		p = append(p, wasmbin.OpEnd)
	}
	return p
}
