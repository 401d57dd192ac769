package csvcell

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestRawAndValue(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, ""}, {`null`, ""}, {` "a,b" `, "a,b"}, {`"\u00e9"`, "é"}, {`1.50`, "1.50"}, {`-2e-7`, "-2e-7"},
		{`true`, "true"}, {`[1, 2]`, "[1, 2]"}, {`{"a":1}`, `{"a":1}`},
	} {
		if got := Raw(json.RawMessage(c.in)); got != c.want {
			t.Errorf("Raw(%s) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`null`, ""}, {`"x"`, "x"}, {`0.123456789`, "0.123456789"}, {`false`, "false"}, {`[1,"a"]`, `[1,"a"]`}, {`{"a":null}`, `{"a":null}`},
	} {
		if got := Value(decode(t, c.in)); got != c.want {
			t.Errorf("Value(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

func decode(t testing.TB, s string) any {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// FuzzRawMatchesValue: a value's cell is the same whether it is read raw
// or decoded, for every scalar (strings, numbers, booleans, null).
func FuzzRawMatchesValue(f *testing.F) {
	for _, s := range []string{`"a"`, `1.0`, `1e400`, `null`, `true`, `"\ud800"`, `" x "`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<12 || !json.Valid([]byte(s)) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil || dec.More() {
			return
		}
		switch v.(type) {
		case string, json.Number, bool, nil:
			if Raw(json.RawMessage(s)) != Value(v) {
				t.Fatalf("Raw(%q) = %q, Value = %q", s, Raw(json.RawMessage(s)), Value(v))
			}
		}
	})
}
