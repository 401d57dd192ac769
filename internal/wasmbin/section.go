package wasmbin

import (
	"errors"
	"fmt"
)

// Header is what every module starts with: the magic number and version 1.
const Header = "\x00asm\x01\x00\x00\x00"

// HasHeader reports whether wasm starts with Header.
func HasHeader(wasm []byte) bool {
	return len(wasm) >= len(Header) && string(wasm[:len(Header)]) == Header
}

// Section ids (core specification 5.5.2; SectionTag is exception handling's).
const (
	SectionCustom    byte = 0
	SectionType      byte = 1
	SectionImport    byte = 2
	SectionFunction  byte = 3
	SectionTable     byte = 4
	SectionMemory    byte = 5
	SectionGlobal    byte = 6
	SectionExport    byte = 7
	SectionStart     byte = 8
	SectionElement   byte = 9
	SectionCode      byte = 10
	SectionData      byte = 11
	SectionDataCount byte = 12
	SectionTag       byte = 13
)

// Section is one section of a module: its id, the whole section (id and size
// included) and its payload.
type Section struct {
	ID             byte
	Whole, Payload []byte
}

// Sections splits a module, after its header, into its sections. It does not
// look at the header.
func Sections(wasm []byte) ([]Section, error) {
	var out []Section
	for i := len(Header); i < len(wasm); {
		size, p, err := Uint32(wasm, i+1)
		if err != nil || p+int(size) > len(wasm) {
			return nil, fmt.Errorf("section at byte %d: bad size", i)
		}
		out = append(out, Section{ID: wasm[i], Whole: wasm[i : p+int(size)], Payload: wasm[p : p+int(size)]})
		i = p + int(size)
	}
	return out, nil
}

// AppendSection appends a section with the given id and payload.
func AppendSection(out []byte, id byte, payload []byte) []byte {
	out = AppendUint32(append(out, id), uint32(len(payload)))
	return append(out, payload...)
}

// CustomName returns the name that starts a custom section's payload, and
// false when the payload does not start with a whole name.
func CustomName(payload []byte) (string, bool) {
	n, p, err := Uint32(payload, 0)
	if err != nil || p+int(n) > len(payload) {
		return "", false
	}
	return string(payload[p : p+int(n)]), true
}

// Import is one entry of the import section.
type Import struct {
	Module, Name []byte
	Kind         byte // KindFunc, KindTable, KindMemory, KindGlobal or KindTag
}

// Imports reads the payload of an import section.
func Imports(payload []byte) ([]Import, error) {
	r := NewReader(payload)
	n := r.U32()
	var out []Import
	for i := uint32(0); i < n && r.err == nil; i++ {
		im := Import{Module: r.Name(), Name: r.Name(), Kind: r.Byte()}
		switch im.Kind {
		case KindFunc: // type index
			r.U32()
		case KindTable: // reference type, limits
			r.Byte()
			r.Limits()
		case KindMemory:
			r.Limits()
		case KindGlobal: // value type, mutability
			r.ValType()
			r.Byte()
		case KindTag: // attribute, type index
			r.Byte()
			r.U32()
		default:
			r.Fail("import kind %d", im.Kind)
		}
		out = append(out, im)
	}
	return out, r.err
}

// CodeBodies splits the payload of a code section into its function bodies.
func CodeBodies(b []byte) ([][]byte, error) {
	n, i, err := Uint32(b, 0)
	if err != nil {
		return nil, fmt.Errorf("code section: %w", err)
	}
	var bodies [][]byte
	for fn := uint32(0); fn < n; fn++ {
		size, p, err := Uint32(b, i)
		if err != nil || p+int(size) > len(b) {
			return nil, fmt.Errorf("code section: body %d: bad size", fn)
		}
		bodies = append(bodies, b[p:p+int(size)])
		i = p + int(size)
	}
	if i != len(b) {
		return nil, errors.New("code section: bytes after the last body")
	}
	return bodies, nil
}

// AppendBodies appends a code section's payload made of bodies.
func AppendBodies(out []byte, bodies [][]byte) []byte {
	out = AppendUint32(out, uint32(len(bodies)))
	for _, b := range bodies {
		out = AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out
}

// LocalGroup is one declaration of a function body's locals: Count locals of
// value type Type.
type LocalGroup struct {
	Count uint32
	Type  byte
}

// Locals reads the local declarations at the start of a function body and
// returns them with the offset of the body's first instruction. It does not
// check the types (see IsValType).
func Locals(body []byte) ([]LocalGroup, int, error) {
	groups, p, err := Uint32(body, 0)
	if err != nil {
		return nil, 0, err
	}
	if int(groups) > len(body)-p {
		return nil, 0, errors.New("locals run past the body")
	}
	out := make([]LocalGroup, 0, groups)
	for g := uint32(0); g < groups; g++ {
		var n uint32
		if n, p, err = Uint32(body, p); err != nil {
			return nil, 0, err
		}
		if p >= len(body) {
			return nil, 0, errors.New("locals run past the body")
		}
		out = append(out, LocalGroup{n, body[p]})
		p++
	}
	return out, p, nil
}
