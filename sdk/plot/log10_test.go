package plot

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLog10MatchesMath checks log10 against math.Log10 bit for bit over
// positive floats of every exponent, subnormals, the edges of the reduction
// (near √2/2 and √2 times powers of two), powers of ten, special values.
// Inside wasm (where log10 is a copy of the code; see internal/wasmbench)
// this is the test that matters.
func TestLog10MatchesMath(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), -1, math.Inf(1), math.Inf(-1), math.NaN(), 1, 2, 0.5,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 2.2250738585072014e-308, 2.225073858507201e-308}
	for e := -1074; e <= 1023; e++ {
		p := math.Ldexp(1, e)
		for _, m := range []float64{1, math.Sqrt2 / 2, math.Sqrt2, 1.5, 3} {
			v := p * m
			vals = append(vals, v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)))
		}
	}
	for e := -320; e <= 308; e++ {
		v := math.Pow(10, float64(e))
		vals = append(vals, v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)))
	}
	r := rand.New(rand.NewPCG(3, 4))
	n := 2000000
	if testing.Short() {
		n = 100000
	}
	for range n {
		vals = append(vals, math.Float64frombits(r.Uint64()&^(1<<63)), r.Float64()*1e4, math.Exp(r.NormFloat64()*20))
	}
	for _, v := range vals {
		if got, want := log10(v), math.Log10(v); math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("log10(%v) = %v, math.Log10 %v", v, got, want)
		}
	}
}
