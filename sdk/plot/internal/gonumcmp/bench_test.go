package gonumcmp

import (
	"testing"

	"toxgate/sdk/plot/internal/gonumcmp/doxocase"
)

// BenchmarkDoxorubicin draws the doxorubicin model's 7-day plot (7 curves
// thinned to ≤ 500 points) with gonum/plot's SVG backend and with sdk/plot.
// Inside wasm: TestWasm.
func BenchmarkDoxorubicin(b *testing.B) {
	c, err := doxocase.Read("../../testdata/doxorubicin-ref-7d.json.gz")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("gonum-vgsvg", func(b *testing.B) {
		for b.Loop() {
			if _, err := Gonum(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk-plot", func(b *testing.B) {
		for b.Loop() {
			_ = doxocase.SDK(c)
		}
	})
}
