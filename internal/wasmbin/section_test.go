package wasmbin

import (
	"bytes"
	"testing"
)

// TestSectionsRoundTrip checks that a module split into sections and written
// back is the same, and that the readers of the import section, code bodies,
// locals and custom names see what was written.
func TestSectionsRoundTrip(t *testing.T) {
	imports := AppendUint32(nil, 2)
	imports = append(AppendName(AppendName(imports, "env"), "f"), KindFunc, 0)
	imports = append(AppendName(AppendName(imports, "env"), "g"), KindGlobal, I32, 0)
	body := []byte{0x02, 0x03, I32, 0x01, I64, OpNop, OpEnd}
	wasm := []byte(Header)
	wasm = AppendSection(wasm, SectionImport, imports)
	wasm = AppendSection(wasm, SectionCode, AppendBodies(nil, [][]byte{body}))
	wasm = AppendSection(wasm, SectionCustom, append(AppendName(nil, "name"), 1, 2, 3))
	if !HasHeader(wasm) || HasHeader(wasm[:7]) {
		t.Fatal("HasHeader")
	}
	secs, err := Sections(wasm)
	if err != nil || len(secs) != 3 {
		t.Fatalf("Sections: %d, %v", len(secs), err)
	}
	var back []byte
	for _, s := range secs {
		back = append(back, s.Whole...)
	}
	if !bytes.Equal(append([]byte(Header), back...), wasm) {
		t.Fatal("sections do not add up to the module")
	}
	ims, err := Imports(secs[0].Payload)
	if err != nil || len(ims) != 2 || string(ims[1].Name) != "g" || ims[1].Kind != KindGlobal {
		t.Fatalf("Imports: %+v, %v", ims, err)
	}
	bodies, err := CodeBodies(secs[1].Payload)
	if err != nil || len(bodies) != 1 || !bytes.Equal(bodies[0], body) {
		t.Fatalf("CodeBodies: %v, %v", bodies, err)
	}
	groups, p, err := Locals(bodies[0])
	if err != nil || p != 5 || len(groups) != 2 || groups[0] != (LocalGroup{3, I32}) || groups[1] != (LocalGroup{1, I64}) {
		t.Fatalf("Locals: %+v, %d, %v", groups, p, err)
	}
	if name, ok := CustomName(secs[2].Payload); !ok || name != "name" {
		t.Fatalf("CustomName: %q, %v", name, ok)
	}
	if _, err := Sections(append(wasm, SectionCustom, 0x05)); err == nil {
		t.Fatal("a section past the end was accepted")
	}
}
