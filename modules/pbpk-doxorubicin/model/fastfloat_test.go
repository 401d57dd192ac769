package model

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"toxgate/sdk/jsonw"
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
	// The edges of the fast path (2^-16, 2^19) and every power of ten within it, ± a few ulps.
	for _, c := range []float64{0x1p-16, 0x1p19, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1e3, 1e4, 1e5, 1e6, 999999.5, 99999.95} {
		for _, sgn := range []float64{1, -1} {
			v := sgn * c
			for range 4 {
				xs = append(xs, v)
				v = math.Nextafter(v, 0)
			}
			v = sgn * c
			for range 4 {
				v = math.Nextafter(v, sgn*math.Inf(1))
				xs = append(xs, v)
			}
		}
	}
	for start := 0; start < len(xs); start += 1000 {
		chunk := xs[start:min(start+1000, len(xs))]
		got, want := string(appendSeriesFloats([]byte("x"), chunk)), "x"+string(stats.AppendFloats(nil, chunk, SeriesDigits))
		if got != want {
			for _, v := range chunk {
				if g, w := string(appendSeriesFloats(nil, []float64{v})), string(stats.AppendFloats(nil, []float64{v}, SeriesDigits)); g != w {
					t.Fatalf("%v (%b): %s, stats.AppendFloat %s", v, v, g, w)
				}
			}
			t.Fatalf("chunk at %d differs", start)
		}
	}
}

// The plot's SVG is written as json.Marshal writes it (sdk/jsonw tests the
// string writer in general).
func TestPlotSVGIsMarshal(t *testing.T) {
	out, err := Simulate(reference())
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(out.PlotSVG)
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonw.AppendString(nil, out.PlotSVG); string(got) != string(want) {
		t.Fatal("the SVG is not written as json.Marshal writes it")
	}
}

// appendTime writes what stats.AppendJSONFloat writes.
func TestAppendTimeIsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	xs := outputTimes(0.05, 28*24)
	xs = append(xs, outputTimes(0.37, 2*24)...)
	for k := range 200000 {
		xs = append(xs, float64(k)*0.01, float64(k)/100, float64(k)*0.25, float64(k)/4+0.01*float64(k%7),
			rng.Float64()*1e6, rng.Float64(), math.Round(rng.Float64()*1e8)/100)
	}
	xs = append(xs, 0, 1e6, 999999.99, 1e-7, -0.01, math.NaN(), math.Inf(1), 0.005, 1e-6)
	for _, v := range xs {
		if got, want := string(appendTime(nil, v)), string(stats.AppendJSONFloat(nil, v)); got != want {
			t.Fatalf("%v: %s, stats.AppendJSONFloat %s", v, got, want)
		}
	}
}
