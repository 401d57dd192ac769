package wasmrt

import (
	"errors"
	"fmt"
	"strings"

	"toxgate/internal/wasmbin"
	"toxgate/sdk/abi"
)

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
	relooped        bool     // the module carries abi.ReloopSection
	tick            []byte   // call $tick: the added function that runs check (empty without one)
	codeState                // the function being rewritten (fuelcode.go)
}

// instrumentFuel returns wasm with fuel checks (see fuel.go), or an error
// wrapping errFuelUnsupported when it cannot rewrite the module (including
// one that imports from fuelModule itself). It does not validate the module:
// wazero does, when it compiles the result.
//
// The added import comes after the module's own function imports, so every
// defined function's index grows by one: call, return_call and ref.func
// immediates, exports, the start function, element segments, global
// initialisers and the name section are renumbered. DWARF sections
// (.debug_*) describe code offsets that the insertions move, so they are
// dropped; stack traces keep function names from the name section.
func instrumentFuel(wasm []byte) ([]byte, error) {
	out, err := instrument(wasm)
	if err != nil && !errors.Is(err, errFuelUnsupported) {
		err = fmt.Errorf("%w: %v", errFuelUnsupported, err)
	}
	return out, err
}

func instrument(wasm []byte) ([]byte, error) {
	if !wasmbin.HasHeader(wasm) {
		return nil, unsupported("not a WebAssembly 1 binary")
	}
	secs, err := wasmbin.Sections(wasm)
	if err != nil {
		return nil, err
	}
	fr := &fuelRewriter{}
	if err := fr.scan(secs); err != nil {
		return nil, err
	}
	fr.fuelGlobal = fr.importedGlobals + fr.definedGlobals
	fr.check = fr.checkCode()
	if len(fr.funcTypes) > 0 {
		tick := fr.importedFuncs + 1 + uint32(len(fr.funcTypes))
		fr.tick = wasmbin.AppendUint32([]byte{wasmbin.OpCall}, tick)
	}
	return fr.rewrite(wasm[:len(wasmbin.Header)], secs)
}

// scan reads what the rewrite needs: counts of types, imports and globals,
// each function's type and whether reloop rewrote the module.
func (fr *fuelRewriter) scan(secs []wasmbin.Section) error {
	for _, s := range secs {
		sr := wasmbin.NewReader(s.Payload)
		switch s.ID {
		case wasmbin.SectionType:
			fr.paramCounts = typeParams(wasmbin.NewReader(s.Payload))
			fr.types = sr.U32()
		case wasmbin.SectionImport:
			if err := fr.scanImports(s.Payload); err != nil {
				return err
			}
		case wasmbin.SectionGlobal:
			fr.definedGlobals = sr.U32()
		case wasmbin.SectionCustom: // only its name is read, and a bad one is no error here
			name, ok := wasmbin.CustomName(s.Payload)
			fr.relooped = fr.relooped || ok && name == abi.ReloopSection
		case wasmbin.SectionFunction:
			n := sr.U32()
			for i := uint32(0); i < n && sr.Err() == nil; i++ {
				fr.funcTypes = append(fr.funcTypes, sr.U32())
			}
		}
		if err := sr.Err(); err != nil {
			return err
		}
	}
	return nil
}

// checkCode returns the fuel check run at a function's entry and by $tick:
//
//	global.get $fuel; i32.const 1; i32.sub; global.set $fuel
//	global.get $fuel; i32.eqz; if; call $fuel_import; global.set $fuel; end
func (fr *fuelRewriter) checkCode() []byte {
	g := wasmbin.AppendUint32(nil, fr.fuelGlobal)
	c := append([]byte{wasmbin.OpGlobalGet}, g...)
	c = append(c, wasmbin.OpI32Const, 0x01, wasmbin.OpI32Sub, wasmbin.OpGlobalSet)
	c = append(c, g...)
	c = append(c, wasmbin.OpGlobalGet)
	c = append(c, g...)
	c = append(c, wasmbin.OpI32Eqz, wasmbin.OpIf, wasmbin.BlockEmpty, wasmbin.OpCall)
	c = wasmbin.AppendUint32(c, fr.importedFuncs)
	c = append(c, wasmbin.OpGlobalSet)
	return append(append(c, g...), wasmbin.OpEnd)
}

// The added entities: the types () -> i32 (the import) and () -> () ($tick,
// a defined function after the module's own that runs check: a back edge
// calls it, so that the check is not copied onto every one), the import,
// and the fuel global, mut i32 = fuelRefill (1<<14 encodes as 80 80 01, a
// positive sLEB128).
var (
	fuelTypes       = []byte{wasmbin.FuncType, 0x00, 0x01, wasmbin.I32, wasmbin.FuncType, 0x00, 0x00}
	fuelImport      = wasmbin.AppendName(wasmbin.AppendName(nil, fuelModule), fuelName)
	fuelGlobalEntry = append(wasmbin.AppendUint32([]byte{wasmbin.I32, 0x01, wasmbin.OpI32Const}, fuelRefill), wasmbin.OpEnd)
)

// sectionOrder is the canonical place of a section; custom sections keep
// theirs.
func sectionOrder(id byte) int {
	switch id {
	case wasmbin.SectionDataCount:
		return 95 // between element (9) and code (10)
	case wasmbin.SectionTag:
		return 55 // after memory (5), before global (6)
	}
	return int(id) * 10
}

// rewrite writes the module: header, then each section rewritten. The new
// type goes at the end of the type section, the new import at the end of
// the import section and the new global at the end of the global section,
// creating the sections (in their required order) when absent.
func (fr *fuelRewriter) rewrite(header []byte, secs []wasmbin.Section) ([]byte, error) {
	out := append([]byte(nil), header...)
	importEntry := wasmbin.AppendUint32(append(append([]byte(nil), fuelImport...), wasmbin.KindFunc), fr.types)
	created := []struct {
		id      byte
		payload []byte
	}{
		{wasmbin.SectionType, append(wasmbin.AppendUint32(nil, 2), fuelTypes...)},
		{wasmbin.SectionImport, append(wasmbin.AppendUint32(nil, 1), importEntry...)},
		{wasmbin.SectionGlobal, append(wasmbin.AppendUint32(nil, 1), fuelGlobalEntry...)},
	}
	wrote := map[byte]bool{}
	flushBefore := func(id byte) {
		for _, c := range created {
			if !wrote[c.id] && sectionOrder(c.id) < sectionOrder(id) {
				wrote[c.id] = true
				out = wasmbin.AppendSection(out, c.id, c.payload)
			}
		}
	}
	for _, s := range secs {
		if s.ID == wasmbin.SectionCustom {
			p, err := fr.custom(wasmbin.NewReader(s.Payload))
			if err != nil {
				return nil, err
			}
			if p != nil {
				out = wasmbin.AppendSection(out, s.ID, p)
			}
			continue
		}
		flushBefore(s.ID)
		wrote[s.ID] = true
		p, err := fr.section(s, importEntry)
		if err != nil {
			return nil, err
		}
		out = wasmbin.AppendSection(out, s.ID, p)
	}
	flushBefore(255)
	return out, nil
}

// section returns the rewritten payload of a section other than a custom one.
func (fr *fuelRewriter) section(s wasmbin.Section, importEntry []byte) ([]byte, error) {
	sr := wasmbin.NewReader(s.Payload)
	var p []byte
	var err error
	switch s.ID {
	case wasmbin.SectionType:
		n := sr.U32()
		p = append(wasmbin.AppendUint32(nil, n+2), sr.Rest()...)
		p = append(p, fuelTypes...)
	case wasmbin.SectionFunction:
		n := sr.U32()
		p = append(wasmbin.AppendUint32(nil, n+1), sr.Rest()...)
		p = wasmbin.AppendUint32(p, fr.types+1) // $tick: () -> ()
	case wasmbin.SectionImport:
		n := sr.U32()
		p = append(wasmbin.AppendUint32(nil, n+1), sr.Rest()...)
		p = append(p, importEntry...)
	case wasmbin.SectionGlobal:
		p, err = fr.globals(sr)
	case wasmbin.SectionExport:
		p, err = fr.exports(sr)
	case wasmbin.SectionStart:
		p = wasmbin.AppendUint32(nil, fr.fn(sr.U32()))
		if !sr.EOF() {
			err = unsupported("trailing bytes in the start section")
		}
	case wasmbin.SectionElement:
		p, err = fr.elements(sr)
	case wasmbin.SectionCode:
		p, err = fr.code(sr)
	default:
		if s.ID > wasmbin.SectionTag {
			return nil, unsupported("unknown section %d", s.ID)
		}
		p = s.Payload
	}
	if err == nil {
		err = sr.Err()
	}
	return p, err
}

// fn renumbers a function index.
func (fr *fuelRewriter) fn(i uint32) uint32 {
	if i >= fr.importedFuncs {
		return i + 1
	}
	return i
}

// typeParams returns the number of parameters of each function type in a
// type section (0 for a type it cannot read).
func typeParams(r *wasmbin.Reader) []uint32 {
	n := r.U32()
	var out []uint32
	for i := uint32(0); i < n && r.Err() == nil; i++ {
		if r.Byte() != wasmbin.FuncType {
			r.Fail("type %d is not a function type", i)
			break
		}
		np := r.U32()
		for j := uint32(0); j < np && r.Err() == nil; j++ {
			r.ValType()
		}
		nr := r.U32()
		for j := uint32(0); j < nr && r.Err() == nil; j++ {
			r.ValType()
		}
		out = append(out, np)
	}
	return out
}

func (fr *fuelRewriter) scanImports(payload []byte) error {
	imports, err := wasmbin.Imports(payload)
	for _, im := range imports {
		if string(im.Module) == fuelModule {
			return unsupported("module already imports %s.%s", im.Module, im.Name)
		}
		switch im.Kind {
		case wasmbin.KindFunc:
			fr.importedFuncs++
		case wasmbin.KindGlobal:
			fr.importedGlobals++
		}
	}
	return err
}

func (fr *fuelRewriter) globals(r *wasmbin.Reader) ([]byte, error) {
	n := r.U32()
	p := wasmbin.AppendUint32(nil, n+1)
	for i := uint32(0); i < n && r.Err() == nil; i++ {
		start := r.Offset()
		r.ValType()
		r.Byte()
		p = append(p, r.Since(start)...)
		var err error
		if p, err = fr.expr(r, p); err != nil {
			return nil, err
		}
	}
	return append(p, fuelGlobalEntry...), r.Err()
}

func (fr *fuelRewriter) exports(r *wasmbin.Reader) ([]byte, error) {
	n := r.U32()
	p := wasmbin.AppendUint32(nil, n)
	for i := uint32(0); i < n && r.Err() == nil; i++ {
		name := r.Name()
		kind := r.Byte()
		idx := r.U32()
		if kind == wasmbin.KindFunc {
			idx = fr.fn(idx)
		}
		p = wasmbin.AppendUint32(p, uint32(len(name)))
		p = append(p, name...)
		p = wasmbin.AppendUint32(append(p, kind), idx)
	}
	return p, r.Err()
}

func (fr *fuelRewriter) elements(r *wasmbin.Reader) ([]byte, error) {
	n := r.U32()
	p := wasmbin.AppendUint32(nil, n)
	var err error
	for i := uint32(0); i < n && r.Err() == nil && err == nil; i++ {
		flags := r.U32()
		if flags > 7 {
			return nil, unsupported("element segment flags %d", flags)
		}
		p = wasmbin.AppendUint32(p, flags)
		if flags&0x02 != 0 && flags&0x01 == 0 { // active with a table index
			p = wasmbin.AppendUint32(p, r.U32())
		}
		if flags&0x01 == 0 { // active: offset expression
			if p, err = fr.expr(r, p); err != nil {
				return nil, err
			}
		}
		if flags&0x03 != 0 { // elemkind (0x00) or reftype
			p = append(p, r.Byte())
		}
		count := r.U32()
		p = wasmbin.AppendUint32(p, count)
		for j := uint32(0); j < count && r.Err() == nil; j++ {
			if flags&0x04 != 0 {
				if p, err = fr.expr(r, p); err != nil {
					return nil, err
				}
			} else {
				p = wasmbin.AppendUint32(p, fr.fn(r.U32()))
			}
		}
	}
	return p, r.Err()
}

// expr copies a constant expression up to and including its end.
func (fr *fuelRewriter) expr(r *wasmbin.Reader, p []byte) ([]byte, error) {
	depth := 0
	for r.Err() == nil {
		op, ok := r.Peek()
		if !ok {
			return nil, unsupported("unterminated constant expression")
		}
		var err error
		if p, err = fr.instr(r, p, &depth, false); err != nil {
			return nil, err
		}
		if op == wasmbin.OpEnd && depth < 0 {
			return p, nil
		}
	}
	return nil, r.Err()
}

// custom rewrites the name section, drops DWARF sections and keeps the rest.
// It returns nil, nil for a dropped section.
func (fr *fuelRewriter) custom(r *wasmbin.Reader) ([]byte, error) {
	name := string(r.Name())
	if err := r.Err(); err != nil {
		return nil, err
	}
	if strings.HasPrefix(name, ".debug_") {
		return nil, nil
	}
	if name != "name" {
		r.Seek(0)
		return r.Rest(), nil
	}
	p := wasmbin.AppendName(nil, name)
	for !r.EOF() {
		id := r.Byte()
		sub := wasmbin.NewReader(r.Bytes(int(r.U32())))
		var q []byte
		switch id {
		case 1: // function names: vec(funcidx name)
			n := sub.U32()
			q = wasmbin.AppendUint32(q, n)
			for i := uint32(0); i < n && sub.Err() == nil; i++ {
				q = wasmbin.AppendUint32(q, fr.fn(sub.U32()))
				nm := sub.Name()
				q = wasmbin.AppendUint32(q, uint32(len(nm)))
				q = append(q, nm...)
			}
		case 2, 3: // local and label names: vec(funcidx vec(idx name))
			n := sub.U32()
			q = wasmbin.AppendUint32(q, n)
			for i := uint32(0); i < n && sub.Err() == nil; i++ {
				q = wasmbin.AppendUint32(q, fr.fn(sub.U32()))
				start := sub.Offset()
				m := sub.U32()
				for j := uint32(0); j < m && sub.Err() == nil; j++ {
					sub.U32()
					sub.Name()
				}
				q = append(q, sub.Since(start)...)
			}
		default: // module name and names of other index spaces, which do not move
			sub.Seek(0)
			q = sub.Rest()
		}
		if sub.Err() != nil || r.Err() != nil {
			return nil, nil // a malformed name section is dropped, not fatal
		}
		p = wasmbin.AppendUint32(append(p, id), uint32(len(q)))
		p = append(p, q...)
	}
	if r.Err() != nil {
		return nil, nil
	}
	return p, nil
}
