package ociimage

import (
	"debug/elf"
	"errors"
	"fmt"
	"strings"
)

// CheckStatic returns nil when the file at path is an ELF executable that
// needs no dynamic loader: no PT_INTERP program header and no shared
// library. A FROM-scratch image has no loader and no libc, so a program
// linked against them would fail there with a bare "no such file or
// directory"; the build refuses it with this error instead.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (it asks for a program interpreter): build it with CGO_ENABLED=0", path)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return fmt.Errorf("%s: reading its dynamic section: %w", path, err)
	}
	if len(libs) > 0 {
		return fmt.Errorf("%s needs shared libraries (%s): build it with CGO_ENABLED=0", path, strings.Join(libs, ", "))
	}
	return nil
}
