package reloop

import (
	"toxgate/internal/wasmbin"
)

// Go's wasm code does not mark a call that never returns (a panic, a failed
// bounds check): the code after it simply runs on into the next basic block,
// which in Go's layout is often a different panic call or the head of a loop.
// Taken at face value these impossible edges tie unrelated blocks together
// and make loops irreducible. noReturn finds the functions that cannot return
// normally, so that the edge after a call to one of them can be dropped.

// opReturnCall and opReturnCallIndirect are the tail calls of the
// WebAssembly 2.0 proposal; a body with one may return.
const (
	opReturnCall         = 0x12
	opReturnCallIndirect = 0x13
)

// noReturn reports whether the function with expression expr can only leave
// with the unwind result 1 or a trap: it has no return instruction, no tail
// call and no branch to its own outermost label, and its end is reached only
// after i32.const 1 or unreachable. Go's normal return is i32.const 0; return.
func noReturn(expr []byte) bool {
	ins, err := decodeAll(expr)
	if err != nil || len(ins) < 2 {
		return false
	}
	depth := 0 // open structures inside the function body
	for _, in := range ins[:len(ins)-1] {
		switch in.op {
		case opReturn, opReturnCall, opReturnCallIndirect:
			return false
		case opBlock, opLoop, opIf:
			depth++
		case opEnd:
			depth--
		case opBr, opBrIf:
			if int(in.imm) == depth {
				return false
			}
		case opBrTable:
			for _, l := range in.labels {
				if int(l) == depth {
					return false
				}
			}
		}
	}
	last := ins[len(ins)-2]
	return last.op == opUnreachable || last.op == opI32Const && last.imm == 1
}

// importedFuncs counts the function imports in the payload of an import
// section; they come first in the function index space.
func importedFuncs(sec []byte) (int, error) {
	imports, err := wasmbin.Imports(sec)
	funcs := 0
	for _, im := range imports {
		if im.Kind == wasmbin.KindFunc {
			funcs++
		}
	}
	return funcs, err
}
