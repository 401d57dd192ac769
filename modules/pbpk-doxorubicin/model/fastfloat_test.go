package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"toxgate/sdk/stats"
)

// appendSeriesFloats writes what stats.AppendFloats writes: on the model's
// output, on random numbers over the whole range, and on numbers at and near
// the rounding ties and powers of ten.
func TestAppendSeriesFloatsIsStats(t *testing.T) {
	var xs []float64
	out, err := Simulate(reference())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string][]float64{out.Series.NgPerML, out.Series.UM} {
		for _, s := range m {
			xs = append(xs, s...)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		v := math.Pow(10, 50*rng.Float64()-25) * (rng.Float64() + 0.5)
		if rng.IntN(2) == 0 {
			v = -v
		}
		xs = append(xs, v)
		// Ties and carries: d.ddddd5 and 9.999995 at every scale.
		e := math.Pow(10, float64(rng.IntN(30)-15))
		xs = append(xs, (float64(rng.IntN(900000)+100000)+0.5)*e/1e5, 9.999995*e, 999999.5*e, e)
		xs = append(xs, math.Nextafter(e, 0), math.Nextafter(e, math.Inf(1)))
	}
	xs = append(xs, 0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e-5, 1e15, 5e-324, math.MaxFloat64)
	for start := 0; start < len(xs); start += 1000 {
		chunk := xs[start:min(start+1000, len(xs))]
		got, want := string(appendSeriesFloats([]byte("x"), chunk)), "x"+string(stats.AppendFloats(nil, chunk, SeriesDigits))
		if got != want {
			for _, v := range chunk {
				if g, w := string(appendSig6(nil, v)), string(stats.AppendFloat(nil, v, SeriesDigits)); g != w {
					t.Fatalf("%v (%b): %s, stats.AppendFloat %s", v, v, g, w)
				}
			}
			t.Fatalf("chunk at %d differs", start)
		}
	}
}
