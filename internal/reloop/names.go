package reloop

import (
	"errors"

	"toxgate/internal/wasmbin"
)

// BodyNames returns the names of a module's function bodies, by index in the
// code section (as Stats reports them), from its "name" custom section; the
// map is empty when the module has none.
func BodyNames(wasm []byte) (map[int]string, error) {
	names := map[int]string{}
	if len(wasm) < 8 {
		return nil, errors.New("reloop: not a WebAssembly module")
	}
	secs, err := wasmbin.Sections(wasm)
	if err != nil {
		return nil, errors.New("reloop: section past the end of the module")
	}
	imported := 0
	for _, sec := range secs {
		switch {
		case sec.ID == wasmbin.SectionImport:
			if imported, err = importedFuncs(sec.Payload); err != nil {
				return nil, err
			}
		case sec.ID == wasmbin.SectionCustom && customNamed(sec.Payload, "name"):
			if err := funcNames(sec.Payload[1+len("name"):], imported, names); err != nil {
				return nil, err
			}
		}
	}
	return names, nil
}

// funcNames reads the function-names subsection (id 1) of a name section's
// payload into names, keyed by function index minus imported.
func funcNames(sec []byte, imported int, names map[int]string) error {
	for q := 0; q < len(sec); {
		sub := sec[q]
		size, r, err := wasmbin.Uint32(sec, q+1)
		if err != nil || r+int(size) > len(sec) {
			return errors.New("reloop: bad name subsection")
		}
		q = r + int(size)
		if sub != 1 {
			continue
		}
		body := sec[r:q]
		n, s, err := wasmbin.Uint32(body, 0)
		for ; err == nil && n > 0; n-- {
			var idx, l uint32
			if idx, s, err = wasmbin.Uint32(body, s); err != nil {
				break
			}
			if l, s, err = wasmbin.Uint32(body, s); err != nil || s+int(l) > len(body) {
				return errors.New("reloop: bad function name")
			}
			names[int(idx)-imported] = string(body[s : s+int(l)])
			s += int(l)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
