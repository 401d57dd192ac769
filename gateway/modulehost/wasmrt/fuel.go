package wasmrt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"toxgate/internal/wasmbin"
	"toxgate/sdk/abi"
)

// Fuel instrumentation: how the host stops a runaway call cheaply.
//
// wazero's WithCloseOnContextDone makes compiled code leave native code for Go
// at every loop header, to look at the module's closed flag. Go's wasm backend
// puts a loop at the start of every function (its resumable-call dispatch), so
// a Go guest pays that exit on every function call and loop iteration: a
// pooled call of the example module took ~170-400 µs with the option and
// ~30 µs without (see bench_test.go).
//
// Instead, instrumentFuel rewrites the module once at load time: a new mutable
// i32 global (the fuel) is decremented at the entry of every function that
// calls another (a function that calls nothing cannot start a runaway call
// tree, and its loops count themselves) and once per
// loopBatch iterations of a loop; when it reaches zero the code calls an added
// import, fuelModule.fuelName () -> i32, which checks the call's context
// (deadline, cancellation) and the module's closed state and either returns a
// new amount of fuel or ends the call with a sys.ExitError, closing the
// module. Loop iterations are counted in a new local of each function (a
// register), not in the global: a load and a store of the global on every
// iteration made a loop-carried dependency through memory that cost Go guests
// ~18% on loop-heavy code. They are counted on the back edges (the branches
// to a loop), not at loop headers: a br to a loop becomes an add and a br_if
// to the loop on the sum (the counter wraps to 0 every loopBatch iterations),
// followed by a call of $tick (a function added to
// the module that runs the fuel check; copying the check onto every back
// edge made modules 9% larger and slower to compile). So the loop's code
// gets no extra block, and a loop that is never branched back to (Go's
// dispatch loop in a function without loops, entered once per call) costs
// nothing. A loop that may take parameters is counted at its header, and a
// br_table that may go to a loop is preceded by one count.
// The Go exit happens once per fuelRefill calls or fuelRefill*loopBatch loop
// iterations. Runaway code shapes that wazero's option does not check (call
// trees without loops) are covered too, since every function that calls counts
// its entries.
//
// The added import is appended after the module's own function imports, so
// every defined function's index grows by one: call, return_call and ref.func
// immediates, exports, the start function, element segments, global
// initialisers and the name section are renumbered. DWARF sections
// (.debug_*) describe code offsets that the insertions move, so they are
// dropped; stack traces keep function names from the name section.
//
// The rewriter understands WebAssembly 2.0 (with SIMD, bulk memory, reference
// types), threads atomics, tail calls and exception handling. Anything else
// (an unknown opcode, GC types) makes it return errFuelUnsupported, and Load
// falls back to WithCloseOnContextDone, which is slower but as safe.

const (
	fuelModule = "toxgate_host"
	fuelName   = "fuel"
	// fuelRefill is the number of loop iterations and calls between two checks.
	// A check costs ~0.1 µs; an iteration at least ~1 ns, so the checks cost
	// well under 1 % and a deadline is noticed within microseconds.
	fuelRefill = 1 << 14
	// loopBatch is the number of loop iterations counted in a function's local
	// before the fuel global is decremented once.
	loopBatch = 128
	// loopStep is what an iteration adds to the counter: the i32 wraps to 0
	// every loopBatch iterations, so the count needs no comparison and no
	// reset. (The earlier form, an increment compared with loopBatch and reset
	// to 0, made wazero materialise the comparison's boolean and cost the
	// chemistry module 2-3% more; see sdk/README.md.)
	loopStep = 1 << 32 / loopBatch
)

var errFuelUnsupported = errors.New("wasmrt: module not instrumentable")

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errFuelUnsupported, fmt.Sprintf(format, args...))
}

// wasm section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secDataCount = 12
)

// reader decodes a wasm byte slice.
type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = unsupported(format, args...)
	}
}

func (r *reader) eof() bool { return r.err != nil || r.pos >= len(r.b) }

func (r *reader) byte() byte {
	if r.pos >= len(r.b) {
		r.fail("unexpected end at offset %d", r.pos)
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || r.pos+n > len(r.b) {
		r.fail("unexpected end at offset %d", r.pos)
		r.pos = len(r.b)
		return nil
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s
}

// u64 reads an unsigned LEB128 of at most 10 bytes.
func (r *reader) u64() uint64 {
	var v uint64
	for shift := uint(0); shift < 70; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail("LEB128 too long at offset %d", r.pos)
	return 0
}

func (r *reader) u32() uint32 {
	v := r.u64()
	if v > 1<<32-1 {
		r.fail("u32 out of range at offset %d", r.pos)
	}
	return uint32(v)
}

// skipLEB skips a signed or unsigned LEB128.
func (r *reader) skipLEB() {
	for i := 0; i < 10; i++ {
		if r.byte()&0x80 == 0 || r.err != nil {
			return
		}
	}
	r.fail("LEB128 too long at offset %d", r.pos)
}

func (r *reader) name() []byte { return r.bytes(int(r.u32())) }

func appendName(b []byte, s string) []byte {
	return append(wasmbin.AppendUint32(b, uint32(len(s))), s...)
}

// fuelRewriter holds what the rewrite needs to know about the module.
type fuelRewriter struct {
	importedFuncs   uint32 // before the rewrite; the fuel import gets this index
	importedGlobals uint32
	definedGlobals  uint32
	types           uint32
	fuelGlobal      uint32
	check           []byte   // the instructions inserted at function entries (and run by loopCheck)
	paramCounts     []uint32 // parameters of each type
	funcTypes       []uint32 // type of each defined function
	loopCheck       []byte   // the check of one loop iteration, for the function being rewritten
	counter         uint32   // the loop counter local of the function being rewritten
	labels          []scope  // the labels in scope, innermost last
	loops           int      // loops met so far in the function being rewritten
	edges           []int    // back edges of each loop of the function, by order (from a dry run)
	dry             bool     // the dry run: count back edges, change nothing
	scratch         []byte   // the dry run's output, thrown away
	relooped        bool     // the module was rewritten by internal/reloop
	tick            []byte   // call $tick: the added function that runs check (empty without one)
	sawCall         bool     // the function being rewritten calls something
}

// label is the kind of one enclosing block, loop, if or try of the code
// being rewritten.
type label byte

// scope is one label in scope: its kind and, for a loop, its number in the
// function.
type scope struct {
	kind label
	loop int
}

// maxBackEdges is the most back edges a loop may have to be counted on them;
// a loop with more is counted at its header. Each of Go's dispatch loops (in
// a module as the go tool writes it) has a back edge for every jump of its
// function: counting on all of them made such code 9% slower, while a
// structured loop has one or two. In a module rewritten by internal/reloop (it
// carries abi.ReloopSection) every loop is counted on its back edges: there the
// dispatch loops run only when a goroutine resumes, except in functions
// without loops, which enter theirs once per call, and a header check would
// cost that every call (the SMILES pipeline ran 4% slower with this limit).
const maxBackEdges = 8

const (
	labelBlock    label = iota // a branch to it goes forward
	labelLoop                  // a loop without parameters: its back edges count iterations
	labelLoopHead              // a loop that may take parameters: its header counts iterations
)

// fn renumbers a function index.
func (fr *fuelRewriter) fn(i uint32) uint32 {
	if i >= fr.importedFuncs {
		return i + 1
	}
	return i
}

type section struct {
	id      byte
	payload []byte
}

// instrumentFuel returns wasm with fuel checks (see above), or an error wrapping
// errFuelUnsupported when it cannot rewrite the module (including one that
// imports from fuelModule itself). It does not validate the module: wazero
// does, when it compiles the result.
func instrumentFuel(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:8], []byte{0, 'a', 's', 'm', 1, 0, 0, 0}) {
		return nil, unsupported("not a WebAssembly 1 binary")
	}
	r := &reader{b: wasm, pos: 8}
	var secs []section
	for !r.eof() {
		id := r.byte()
		n := r.u32()
		p := r.bytes(int(n))
		if r.err != nil {
			return nil, r.err
		}
		secs = append(secs, section{id, p})
	}
	fr := &fuelRewriter{}
	// First pass: counts.
	for _, s := range secs {
		sr := &reader{b: s.payload}
		switch s.id {
		case secType:
			fr.types = sr.u32()
		case secImport:
			if err := fr.scanImports(sr); err != nil {
				return nil, err
			}
		case secGlobal:
			fr.definedGlobals = sr.u32()
		case 0: // custom: only its name is read, and a bad one is no error here
			cr := &reader{b: s.payload}
			name := cr.bytes(int(cr.u32()))
			fr.relooped = fr.relooped || cr.err == nil && string(name) == abi.ReloopSection
		case secFunction:
			n := sr.u32()
			for i := uint32(0); i < n && sr.err == nil; i++ {
				fr.funcTypes = append(fr.funcTypes, sr.u32())
			}
		}
		if sr.err != nil {
			return nil, sr.err
		}
		if s.id == secType {
			fr.paramCounts = typeParams(&reader{b: s.payload})
		}
	}
	fr.fuelGlobal = fr.importedGlobals + fr.definedGlobals
	g := wasmbin.AppendUint32(nil, fr.fuelGlobal)
	c := append([]byte{0x23}, g...)               // global.get $fuel
	c = append(c, 0x41, 0x01, 0x6b, 0x24)         // i32.const 1; i32.sub; global.set
	c = append(c, g...)                           //   $fuel
	c = append(c, 0x23)                           // global.get
	c = append(c, g...)                           //   $fuel
	c = append(c, 0x45, 0x04, 0x40, 0x10)         // i32.eqz; if; call
	c = wasmbin.AppendUint32(c, fr.importedFuncs) //   $check
	c = append(c, 0x24)                           // global.set
	c = append(append(c, g...), 0x0b)             //   $fuel; end
	fr.check = c

	out := append([]byte(nil), wasm[:8]...)
	emit := func(id byte, p []byte) {
		out = append(out, id)
		out = wasmbin.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	// The new type goes at the end of the type section, the new import at the
	// end of the import section and the new global at the end of the global
	// section, creating the sections (in their required order) when absent.
	// () -> i32 for the import, () -> () for $tick, a defined function added
	// after the module's own that runs check: a back edge calls it, so that
	// the check is not copied onto every one.
	newType := []byte{0x60, 0x00, 0x01, 0x7f, 0x60, 0x00, 0x00}
	if len(fr.funcTypes) > 0 {
		tick := fr.importedFuncs + 1 + uint32(len(fr.funcTypes))
		fr.tick = wasmbin.AppendUint32([]byte{0x10}, tick)
	}
	newImport := appendName(appendName(nil, fuelModule), fuelName)
	newImport = wasmbin.AppendUint32(append(newImport, 0x00), fr.types)
	newGlobal := wasmbin.AppendUint32([]byte{0x7f, 0x01, 0x41}, fuelRefill) // mut i32 = fuelRefill
	newGlobal = append(newGlobal, 0x0b)
	// fuelRefill fits in a positive sLEB128 only if bit 6 of its last byte is
	// clear; 1<<14 encodes as 80 80 01, which is fine.

	order := func(id byte) int { // canonical section order; custom sections keep their place
		switch id {
		case secDataCount:
			return 95 // between element (9) and code (10)
		case 13: // tag: after memory (5), before global (6)
			return 55
		}
		return int(id) * 10
	}
	wrote := map[byte]bool{}
	pending := []struct {
		id byte
		p  []byte
	}{
		{secType, wasmbin.AppendUint32(nil, 2)},
		{secImport, wasmbin.AppendUint32(nil, 1)},
		{secGlobal, wasmbin.AppendUint32(nil, 1)},
	}
	flushBefore := func(id byte) {
		for _, ps := range pending {
			if !wrote[ps.id] && order(ps.id) < order(id) {
				wrote[ps.id] = true
				switch ps.id {
				case secType:
					emit(ps.id, append(ps.p, newType...))
				case secImport:
					emit(ps.id, append(ps.p, newImport...))
				case secGlobal:
					emit(ps.id, append(ps.p, newGlobal...))
				}
			}
		}
	}
	for _, s := range secs {
		if s.id != secCustom {
			flushBefore(s.id)
		}
		sr := &reader{b: s.payload}
		var p []byte
		var err error
		switch s.id {
		case secCustom:
			p, err = fr.custom(sr)
			if p == nil && err == nil {
				continue // dropped
			}
			out = append(out, secCustom)
			out = wasmbin.AppendUint32(out, uint32(len(p)))
			out = append(out, p...)
			continue
		case secType:
			wrote[secType] = true
			n := sr.u32()
			p = append(wasmbin.AppendUint32(nil, n+2), sr.b[sr.pos:]...)
			p = append(p, newType...)
		case secFunction:
			n := sr.u32()
			p = append(wasmbin.AppendUint32(nil, n+1), sr.b[sr.pos:]...)
			p = wasmbin.AppendUint32(p, fr.types+1) // $tick: () -> ()
		case secImport:
			wrote[secImport] = true
			n := sr.u32()
			p = append(wasmbin.AppendUint32(nil, n+1), sr.b[sr.pos:]...)
			p = append(p, newImport...)
		case secGlobal:
			wrote[secGlobal] = true
			p, err = fr.globals(sr, newGlobal)
		case secExport:
			p, err = fr.exports(sr)
		case secStart:
			p = wasmbin.AppendUint32(nil, fr.fn(sr.u32()))
			if !sr.eof() {
				err = unsupported("trailing bytes in the start section")
			}
		case secElement:
			p, err = fr.elements(sr)
		case secCode:
			p, err = fr.code(sr)
		default:
			if s.id > 13 {
				return nil, unsupported("unknown section %d", s.id)
			}
			p = s.payload
		}
		if err == nil {
			err = sr.err
		}
		if err != nil {
			return nil, err
		}
		emit(s.id, p)
	}
	flushBefore(255)
	return out, nil
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
	b := wasmbin.AppendUint32([]byte{0x20}, c)
	b = wasmbin.AppendInt32(append(b, 0x41), loopStep)
	b = append(b, 0x6a, 0x22)
	b = wasmbin.AppendUint32(b, c)
	b = append(b, 0x45, 0x04, 0x40) // i32.eqz; if
	b = append(b, fr.check...)
	return append(b, 0x0b)
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
		p = append(p, 0x04, 0x40) // if
		l++
	}
	p = wasmbin.AppendUint32(append(p, 0x20), fr.counter)
	p = wasmbin.AppendInt32(append(p, 0x41), loopStep)
	p = append(p, 0x6a, 0x22)
	p = wasmbin.AppendUint32(p, fr.counter)
	p = wasmbin.AppendUint32(append(p, 0x0d), l) // br_if l
	p = append(p, fr.tick...)
	p = wasmbin.AppendUint32(append(p, 0x0c), l) // br l
	if cond {
		p = append(p, 0x0b)
	}
	return p
}

// typeParams returns the number of parameters of each function type in a
// type section (0 for a type it cannot read).
func typeParams(r *reader) []uint32 {
	n := r.u32()
	var out []uint32
	for i := uint32(0); i < n && r.err == nil; i++ {
		if r.byte() != 0x60 {
			r.fail("type %d is not a function type", i)
			break
		}
		np := r.u32()
		for j := uint32(0); j < np && r.err == nil; j++ {
			valType(r)
		}
		nr := r.u32()
		for j := uint32(0); j < nr && r.err == nil; j++ {
			valType(r)
		}
		out = append(out, np)
	}
	return out
}

func (fr *fuelRewriter) scanImports(r *reader) error {
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		mod, name := r.name(), r.name()
		if string(mod) == fuelModule {
			return unsupported("module already imports %s.%s", mod, name)
		}
		switch kind := r.byte(); kind {
		case 0x00: // func
			r.u32()
			fr.importedFuncs++
		case 0x01: // table: reftype limits
			r.byte()
			skipLimits(r)
		case 0x02: // memory
			skipLimits(r)
		case 0x03: // global: valtype mut
			valType(r)
			r.byte()
			fr.importedGlobals++
		case 0x04: // tag
			r.byte()
			r.u32()
		default:
			return unsupported("import kind %d", kind)
		}
	}
	return r.err
}

func skipLimits(r *reader) {
	flags := r.byte()
	if flags > 0x07 {
		r.fail("limits flags %#x", flags)
	}
	r.u64()
	if flags&1 != 0 {
		r.u64()
	}
}

// valType reads a value type; only the single-byte types of wasm 2.0 are known.
func valType(r *reader) {
	switch t := r.byte(); t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
	default:
		r.fail("value type %#x", t)
	}
}

func (fr *fuelRewriter) globals(r *reader, newGlobal []byte) ([]byte, error) {
	n := r.u32()
	p := wasmbin.AppendUint32(nil, n+1)
	for i := uint32(0); i < n && r.err == nil; i++ {
		start := r.pos
		valType(r)
		r.byte()
		p = append(p, r.b[start:r.pos]...)
		var err error
		if p, err = fr.expr(r, p); err != nil {
			return nil, err
		}
	}
	return append(p, newGlobal...), r.err
}

func (fr *fuelRewriter) exports(r *reader) ([]byte, error) {
	n := r.u32()
	p := wasmbin.AppendUint32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		name := r.name()
		kind := r.byte()
		idx := r.u32()
		if kind == 0x00 {
			idx = fr.fn(idx)
		}
		p = wasmbin.AppendUint32(p, uint32(len(name)))
		p = append(p, name...)
		p = wasmbin.AppendUint32(append(p, kind), idx)
	}
	return p, r.err
}

func (fr *fuelRewriter) elements(r *reader) ([]byte, error) {
	n := r.u32()
	p := wasmbin.AppendUint32(nil, n)
	var err error
	for i := uint32(0); i < n && r.err == nil && err == nil; i++ {
		flags := r.u32()
		if flags > 7 {
			return nil, unsupported("element segment flags %d", flags)
		}
		p = wasmbin.AppendUint32(p, flags)
		if flags&0x02 != 0 && flags&0x01 == 0 { // active with a table index
			p = wasmbin.AppendUint32(p, r.u32())
		}
		if flags&0x01 == 0 { // active: offset expression
			if p, err = fr.expr(r, p); err != nil {
				return nil, err
			}
		}
		if flags&0x03 != 0 { // elemkind (0x00) or reftype
			p = append(p, r.byte())
		}
		count := r.u32()
		p = wasmbin.AppendUint32(p, count)
		for j := uint32(0); j < count && r.err == nil; j++ {
			if flags&0x04 != 0 {
				if p, err = fr.expr(r, p); err != nil {
					return nil, err
				}
			} else {
				p = wasmbin.AppendUint32(p, fr.fn(r.u32()))
			}
		}
	}
	return p, r.err
}

// expr copies a constant expression up to and including its end.
func (fr *fuelRewriter) expr(r *reader, p []byte) ([]byte, error) {
	depth := 0
	for r.err == nil {
		if r.pos >= len(r.b) {
			return nil, unsupported("unterminated constant expression")
		}
		op := r.b[r.pos]
		var err error
		if p, err = fr.instr(r, p, &depth, false); err != nil {
			return nil, err
		}
		if op == 0x0b && depth < 0 {
			return p, nil
		}
	}
	return nil, r.err
}

func (fr *fuelRewriter) code(r *reader) ([]byte, error) {
	n := r.u32()
	p := wasmbin.AppendUint32(nil, n+1)
	var body []byte
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		br := &reader{b: r.bytes(int(size))}
		if r.err != nil {
			return nil, r.err
		}
		body = body[:0]
		groups := br.u32()
		groupsEnd := br.pos
		locals := uint64(0)
		for j := uint32(0); j < groups && br.err == nil; j++ {
			locals += uint64(br.u32())
			valType(br)
		}
		if int(i) >= len(fr.funcTypes) || int(fr.funcTypes[i]) >= len(fr.paramCounts) {
			return nil, unsupported("function %d: no type", i)
		}
		counter := uint64(fr.paramCounts[fr.funcTypes[i]]) + locals // the new i32 local
		if counter >= 50000 {
			return nil, unsupported("function %d: too many locals", i)
		}
		body = wasmbin.AppendUint32(body, groups+1)
		body = append(body, br.b[groupsEnd:br.pos]...)
		body = append(body, 0x01, 0x7f) // one i32: the loop counter
		fr.loopCheck = fr.loopCheckFor(uint32(counter))
		fr.counter = uint32(counter)
		// A dry run counts the back edges of each loop, then the real one
		// rewrites.
		code, entry := br.pos, 0
		fr.dry, fr.edges = true, fr.edges[:0]
		for pass := 0; pass < 2; pass++ {
			fr.labels, fr.loops, br.pos = fr.labels[:0], 0, code
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
			for br.err == nil && br.pos < len(br.b) {
				var err error
				if out, err = fr.instr(br, out, &depth, true); err != nil {
					return nil, err
				}
			}
			if br.err == nil && depth != -1 {
				return nil, unsupported("function %d: unbalanced blocks", i)
			}
			if pass == 0 {
				fr.scratch = out
			} else {
				body = out
			}
		}
		if br.err != nil {
			return nil, br.err
		}
		if !fr.sawCall {
			// A function that calls nothing cannot start a runaway call tree,
			// and its loops count themselves: no check at its entry.
			body = append(body[:entry], body[entry+len(fr.check):]...)
		}
		p = wasmbin.AppendUint32(p, uint32(len(body)))
		p = append(p, body...)
	}
	// $tick: no locals, the check, end.
	tick := append(append([]byte{0x00}, fr.check...), 0x0b)
	p = wasmbin.AppendUint32(p, uint32(len(tick)))
	return append(p, tick...), r.err
}

// instr copies one instruction from r to p, renumbering function indices and,
// in code, counting loop iterations on back edges (see backEdge). depth tracks
// block nesting (end of the function or expression makes it -1).
func (fr *fuelRewriter) instr(r *reader, p []byte, depth *int, inCode bool) ([]byte, error) {
	start := r.pos
	op := r.byte()
	copyRest := func() []byte { return append(p, r.b[start:r.pos]...) }
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0f || op == 0x19 || op == 0x1a || op == 0x1b || op == 0x0a:
		// unreachable, nop, else, return, catch_all, drop, select, throw_ref
	case op == 0x02 || op == 0x04 || op == 0x06: // block, if, try: blocktype
		r.skipLEB()
		*depth++
		fr.push(labelBlock, -1)
	case op == 0x03: // loop
		// A loop whose block type is empty or a value type takes no
		// parameters; a type index may give it some.
		simple := r.pos < len(r.b) && (r.b[r.pos] == 0x40 || r.b[r.pos] >= 0x6f && r.b[r.pos] <= 0x7f)
		r.skipLEB()
		*depth++
		if !inCode {
			break
		}
		n := fr.loops
		fr.loops++
		if fr.dry {
			fr.edges = append(fr.edges, 0)
			fr.push(labelLoop, n)
			break
		}
		if simple && n < len(fr.edges) && (fr.edges[n] <= maxBackEdges || fr.relooped) {
			fr.push(labelLoop, n)
			break
		}
		fr.push(labelLoopHead, n)
		return append(copyRest(), fr.loopCheck...), r.err
	case op == 0x0b: // end
		*depth--
		fr.pop()
	case op == 0x0c || op == 0x0d: // br, br_if
		l := r.u32()
		if t := fr.target(l); inCode && t.kind == labelLoop {
			if fr.dry {
				fr.edges[t.loop]++
				break
			}
			return fr.backEdge(p, op == 0x0d, l), r.err
		}
	case op == 0x07 || op == 0x08 || op == 0x09 || op == 0x18:
		// catch tag, throw tag, rethrow label, delegate label
		r.u32()
		if op == 0x18 {
			*depth--
			fr.pop()
		}
	case op == 0x0e: // br_table
		n := r.u32()
		loop := false
		for i := uint32(0); i <= n && r.err == nil; i++ {
			loop = loop || inCode && fr.target(r.u32()).kind == labelLoop
		}
		if loop {
			// One iteration check before the table, whichever way it goes.
			p = append(p, fr.loopCheck...)
		}
	case op == 0x10 || op == 0x12 || op == 0xd2: // call, return_call, ref.func
		fr.sawCall = fr.sawCall || op != 0xd2
		idx := r.u32()
		return wasmbin.AppendUint32(append(p, op), fr.fn(idx)), r.err
	case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect: type, table
		fr.sawCall = true
		r.u32()
		r.u32()
	case op == 0x1c: // select t*
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			valType(r)
		}
	case op == 0x1f: // try_table blocktype vec(catch)
		r.skipLEB()
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			switch k := r.byte(); k {
			case 0x00, 0x01:
				r.u32()
				r.u32()
			case 0x02, 0x03:
				r.u32()
			default:
				r.fail("try_table catch kind %d", k)
			}
		}
		*depth++
		fr.push(labelBlock, -1)
	case op >= 0x20 && op <= 0x26: // local.*, global.*, table.get/set
		r.u32()
	case op >= 0x28 && op <= 0x3e: // loads and stores: memarg
		memarg(r)
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		r.u32()
	case op == 0x41 || op == 0x42: // i32.const, i64.const
		r.skipLEB()
	case op == 0x43:
		r.bytes(4)
	case op == 0x44:
		r.bytes(8)
	case op >= 0x45 && op <= 0xc4: // numeric, sign extension
	case op == 0xd0: // ref.null heaptype
		r.skipLEB()
	case op == 0xd1: // ref.is_null
	case op == 0xfc:
		switch sub := r.u32(); {
		case sub <= 7: // saturating truncation
		case sub == 8: // memory.init data mem
			r.u32()
			r.u32()
		case sub == 9 || sub == 11 || sub == 13 || sub == 15 || sub == 16 || sub == 17:
			r.u32()
		case sub == 10 || sub == 12 || sub == 14:
			r.u32()
			r.u32()
		default:
			return nil, unsupported("opcode 0xfc %d", sub)
		}
	case op == 0xfd:
		switch sub := r.u32(); {
		case sub <= 11 || sub == 92 || sub == 93: // v128 loads/stores
			memarg(r)
		case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
			r.bytes(16)
		case sub >= 21 && sub <= 34: // extract/replace lane
			r.byte()
		case sub >= 84 && sub <= 91: // load/store lane
			memarg(r)
			r.byte()
		case sub <= 0x113:
		default:
			return nil, unsupported("opcode 0xfd %d", sub)
		}
	case op == 0xfe:
		switch sub := r.u32(); {
		case sub == 0x03: // atomic.fence
			r.byte()
		case sub <= 0x02 || (sub >= 0x10 && sub <= 0x4e):
			memarg(r)
		default:
			return nil, unsupported("opcode 0xfe %d", sub)
		}
	default:
		return nil, unsupported("opcode %#x", op)
	}
	return copyRest(), r.err
}

func memarg(r *reader) {
	align := r.u32()
	if align&0x40 != 0 { // multi-memory: memory index
		r.u32()
	}
	r.u64()
}

// custom rewrites the name section, drops DWARF sections and keeps the rest.
// It returns nil, nil for a dropped section.
func (fr *fuelRewriter) custom(r *reader) ([]byte, error) {
	name := string(r.name())
	if r.err != nil {
		return nil, r.err
	}
	if strings.HasPrefix(name, ".debug_") {
		return nil, nil
	}
	if name != "name" {
		return r.b, nil
	}
	p := appendName(nil, name)
	for !r.eof() {
		id := r.byte()
		sub := &reader{b: r.bytes(int(r.u32()))}
		var q []byte
		switch id {
		case 1: // function names: vec(funcidx name)
			n := sub.u32()
			q = wasmbin.AppendUint32(q, n)
			for i := uint32(0); i < n && sub.err == nil; i++ {
				q = wasmbin.AppendUint32(q, fr.fn(sub.u32()))
				nm := sub.name()
				q = wasmbin.AppendUint32(q, uint32(len(nm)))
				q = append(q, nm...)
			}
		case 2, 3: // local and label names: vec(funcidx vec(idx name))
			n := sub.u32()
			q = wasmbin.AppendUint32(q, n)
			for i := uint32(0); i < n && sub.err == nil; i++ {
				q = wasmbin.AppendUint32(q, fr.fn(sub.u32()))
				start := sub.pos
				m := sub.u32()
				for j := uint32(0); j < m && sub.err == nil; j++ {
					sub.u32()
					sub.name()
				}
				q = append(q, sub.b[start:sub.pos]...)
			}
		default: // module name and names of other index spaces, which do not move
			q = sub.b
		}
		if sub.err != nil || r.err != nil {
			return nil, nil // a malformed name section is dropped, not fatal
		}
		p = wasmbin.AppendUint32(append(p, id), uint32(len(q)))
		p = append(p, q...)
	}
	if r.err != nil {
		return nil, nil
	}
	return p, nil
}

// refuel implements the fuel import: it ends the call when its context is done
// (deadline passed, canceled) or the module was closed, and otherwise returns
// the next amount of fuel. The deadline is compared with the clock, so a call
// stops even when the timer goroutine cannot run.
func refuel(ctx context.Context, mod api.Module, stack []uint64) {
	var code uint32
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		code = sys.ExitCodeDeadlineExceeded
	} else if err := ctx.Err(); err != nil {
		code = sys.ExitCodeContextCanceled
		if errors.Is(err, context.DeadlineExceeded) {
			code = sys.ExitCodeDeadlineExceeded
		}
	} else if !mod.IsClosed() {
		stack[0] = fuelRefill
		return
	}
	_ = mod.CloseWithExitCode(ctx, code)
	panic(sys.NewExitError(code))
}
