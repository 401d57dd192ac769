package jsonw

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// AppendString writes what json.Marshal writes for a string.
func TestAppendStringIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "<", ">", "&", `"`, `\`, "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "²", "µ",
		"\u2028", "\u2029", "\xff", "\xe2\x80", "😀", " ", "'",
		"123.4,56.7 ", "abcdefghijklmnopqrstuvwxyz", "0123456789", "=#;:/()[]{}"}
	cases := []string{"", `<svg width="1">m² & µ</svg>`}
	for range 5000 {
		var s string
		for range rng.IntN(40) {
			s += alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q: %s, json.Marshal %s", s, got[1:], want)
		}
	}
}

// needsEscape flags a word exactly when one of its bytes needs escaping (or
// is not ASCII), whatever the other bytes.
func TestNeedsEscape(t *testing.T) {
	esc := func(c byte) bool {
		return c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&'
	}
	for _, fill := range []byte{'a', 0x21, 0x7f, '0', '<' + 1, '&' - 1} {
		for c := range 256 {
			for p := range 8 {
				w := []byte{fill, fill, fill, fill, fill, fill, fill, fill}
				w[p] = byte(c)
				if got, want := needsEscape(load8(string(w), 0)), esc(byte(c)) || esc(fill); got != want {
					t.Fatalf("byte %#x at %d among %#x: %v, want %v", c, p, fill, got, want)
				}
			}
		}
	}
}

// AppendFloat writes what json.Marshal writes for float64 and float32.
func TestAppendFloatIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 9.99999e-7, 1e-7, 1e20, 1e21, 123456789.125, 5e-324,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1, 1e-9}
	for range 20000 {
		xs = append(xs, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(60)-30)))
	}
	for _, x := range xs {
		want, _ := json.Marshal(x)
		if got := AppendFloat(nil, x, 64); string(got) != string(want) {
			t.Fatalf("%v: %s, json.Marshal %s", x, got, want)
		}
		f := float32(x)
		if math.IsInf(float64(f), 0) {
			continue
		}
		want, _ = json.Marshal(f)
		if got := AppendFloat(nil, float64(f), 32); string(got) != string(want) {
			t.Fatalf("float32 %v: %s, json.Marshal %s", f, got, want)
		}
	}
}
