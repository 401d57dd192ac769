package modulehost

import (
	"encoding/json"
	"testing"
)

// Inputs that mean the same to a JSON parser share a key; inputs that a
// module may read differently do not, and inputs that cannot be keyed
// safely are refused.
func TestCanonicalJSON(t *testing.T) {
	same := [][2]string{
		{`{"smiles":"CCO"}`, ` { "smiles" : "C\u0043O" } `},
		{`{"a":1,"b":[true,null,"x"]}`, `{"b":[ true , null , "x" ],"a":1}`},
		{`{"a":{"y":1,"x":2}}`, `{"a":{"x":2,"y":1}}`},
		{`"<&>"`, `"\u003c\u0026\u003e"`},
	}
	for _, p := range same {
		a, ok1 := canonicalJSON([]byte(p[0]))
		b, ok2 := canonicalJSON([]byte(p[1]))
		if !ok1 || !ok2 || string(a) != string(b) {
			t.Errorf("%s and %s: %s (%v) and %s (%v)", p[0], p[1], a, ok1, b, ok2)
		}
	}
	differ := [][2]string{
		{`{"n":1}`, `{"n":1.0}`},
		{`{"n":1e2}`, `{"n":100}`},
		{`{"s":"a"}`, `{"s":"A"}`},
		{`["a","b"]`, `["b","a"]`},
	}
	for _, p := range differ {
		a, _ := canonicalJSON([]byte(p[0]))
		b, _ := canonicalJSON([]byte(p[1]))
		if string(a) == string(b) {
			t.Errorf("%s and %s share the key %s", p[0], p[1], a)
		}
	}
	deep := ""
	for range maxCanonicalDepth + 2 {
		deep = "[" + deep + "]"
	}
	for _, in := range []string{`{"a":1,"a":2}`, `"\ud800"`, `"\uDFFF"`, "\"\xff\"", `{"a":1} x`, `{"a":`, ``, deep} {
		if out, ok := canonicalJSON([]byte(in)); ok {
			t.Errorf("%q is keyed as %s", in, out)
		}
	}
}

// FuzzCanonicalJSON: a keyed value is valid JSON that decodes to the same
// value as the input, and keying it again changes nothing.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"smiles":"CCO"}`, `{"smiles":["CCO","c1ccccc1",""],"x":{"b":1,"a":[1.5,-2e3]}}`,
		`"\u00e9\u0000"`, `[[[[]]]]`, `{"a":1,"a":2}`, `"\ud83d\ude00"`, `null`, `{"":true}`, "\"\xc3\xa9\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, ok := canonicalJSON(in)
		if !ok {
			return
		}
		if !json.Valid(out) || !json.Valid(in) {
			t.Fatalf("%q keyed as %q", in, out)
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil || json.Unmarshal(out, &b) != nil {
			t.Fatalf("%q keyed as %q", in, out)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("%q means %s, its key %q means %s", in, ja, out, jb)
		}
		again, ok := canonicalJSON(out)
		if !ok || string(again) != string(out) {
			t.Fatalf("the key %q is keyed again as %q (%v)", out, again, ok)
		}
	})
}
