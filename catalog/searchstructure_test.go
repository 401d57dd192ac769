package catalog

import (
	"reflect"
	"strings"
	"testing"
)

func TestCutStructureFilter(t *testing.T) {
	for _, c := range []struct {
		in, rest string
		vals     []string
	}{
		{"structure:CCO", "", []string{"CCO"}},
		{`organization:lab structure:"acetic acid" tags:x`, "organization:lab  tags:x", []string{"acetic acid"}},
		{"+structure:c1ccccc1O +res_format:CSV", "+res_format:CSV", []string{"c1ccccc1O"}},
		{"notes:substructure:x", "notes:substructure:x", nil},
		{`structure:"unterminated`, "", []string{"unterminated"}},
	} {
		rest, vals := cutStructureFilter(c.in)
		if rest != c.rest || !reflect.DeepEqual(vals, c.vals) {
			t.Errorf("%q: %q %q, want %q %q", c.in, rest, vals, c.rest, c.vals)
		}
	}
}

func FuzzCutStructureFilter(f *testing.F) {
	for _, s := range []string{"structure:CCO", `a structure:"x y" b`, "structure:", `structure:"`, "xstructure:y", "(structure:C)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, fq string) {
		rest, vals := cutStructureFilter(fq)
		if len(rest) > len(fq) {
			t.Fatalf("%q: rest %q longer", fq, rest)
		}
		for _, v := range vals {
			if len(v) > len(fq) {
				t.Fatalf("%q: value %q longer", fq, v)
			}
		}
		if strings.HasPrefix(rest, structureFilterPrefix) {
			t.Fatalf("%q: rest %q still starts with a structure filter", fq, rest)
		}
	})
}
