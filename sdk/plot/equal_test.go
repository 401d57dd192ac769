package plot

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// randomValue draws a coordinate: mostly ordinary numbers over many
// magnitudes, sometimes round grid values (which meet rounding ties of the
// one-decimal pixel coordinates), zero, negative, NaN or ±Inf.
func randomValue(r *rand.Rand, scale float64) float64 {
	switch k := r.IntN(40); {
	case k == 0:
		return math.NaN()
	case k == 1:
		return math.Inf(1)
	case k == 2:
		return math.Inf(-1)
	case k < 5:
		return 0
	case k < 12:
		return float64(r.IntN(400)-100) * 0.05 * scale
	case k < 16:
		return -r.Float64() * scale
	default:
		return r.Float64() * scale
	}
}

func randomPlot(r *rand.Rand) *Plot {
	p := New("random <&> \"plot\"", "x 'unit'", "y")
	if r.IntN(4) == 0 {
		p.Title = ""
	}
	switch r.IntN(4) {
	case 0:
		p.Width, p.Height = 229+r.IntN(1500), 100+r.IntN(900)
	case 1:
		p.Width, p.Height = 0, 0
	}
	p.LogY = r.IntN(2) == 0
	switch r.IntN(4) {
	case 0:
		p.YMin = math.Pow(10, float64(r.IntN(20)-10))
	case 1:
		p.YMin = -1
	}
	xscale := math.Pow(10, float64(r.IntN(16)-8))
	yscale := math.Pow(10, float64(r.IntN(30)-15))
	for s := range r.IntN(13) {
		n := r.IntN(60)
		if r.IntN(3) == 0 {
			n = r.IntN(4000)
		}
		x, y := make([]float64, n), make([]float64, n+r.IntN(3))
		mode := r.IntN(5)
		for i := range x {
			switch mode {
			case 0: // sorted, evenly spaced
				x[i] = float64(i) * xscale
			case 1: // sorted, uneven
				if i > 0 {
					x[i] = x[i-1] + r.Float64()*xscale
				}
			case 2: // constant
				x[i] = xscale
			default:
				x[i] = randomValue(r, xscale)
			}
		}
		for i := range y {
			if r.IntN(3) == 0 && i > 0 {
				y[i] = y[i-1] // plateaus: ties in the decimator
			} else if p.LogY && r.IntN(2) == 0 {
				y[i] = math.Pow(10, r.Float64()*float64(r.IntN(12))-6) * yscale
			} else {
				y[i] = randomValue(r, yscale)
			}
		}
		p.Add(string(rune('a'+s)), x, y)
	}
	return p
}

// TestRandomPlotsMatchReference draws random plots with SVG and with the
// reference implementation (ref_test.go) and requires the same bytes; the
// same for Thin. PLOT_RANDOM_PLOTS sets the number of plots (1000).
func TestRandomPlotsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 1000
	if testing.Short() {
		n = 200
	}
	if v, err := strconv.Atoi(os.Getenv("PLOT_RANDOM_PLOTS")); err == nil {
		n = v
	}
	for i := range n {
		p := randomPlot(r)
		if got, want := p.SVG(), refSVG(p); got != want {
			k := 0
			for k < min(len(got), len(want)) && got[k] == want[k] {
				k++
			}
			t.Fatalf("plot %d differs from the reference at byte %d: %q vs %q", i, k,
				got[max(0, k-60):min(len(got), k+60)], want[max(0, k-60):min(len(want), k+60)])
		}
		for _, s := range p.Series {
			m := []int{0, 7, 8, 9, 40, 100, 500}[r.IntN(7)]
			xs, ys := Thin(s.X, s.Y, m)
			rx, ry := refThin(s.X, s.Y, m)
			if !sameFloats(xs, rx) || !sameFloats(ys, ry) {
				t.Fatalf("plot %d: Thin(%d points, %d) differs from the reference", i, len(s.X), m)
			}
		}
	}
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// FuzzSVGMatchesReference draws a plot from fuzzed coordinates. Each takes
// three bytes: a kind (NaN, ±Inf, ±0, or a power of ten) and an int16
// mantissa. (Arbitrary float64 bits would soon find two distinct x within
// an ulp or so of each other, for which niceTicks, in the reference as in
// SVG, never ends: its step is below the resolution of the ticks.)
func FuzzSVGMatchesReference(f *testing.F) {
	f.Add([]byte{9, 1, 2, 9, 3, 4, 9, 5, 6, 10, 7, 8, 0, 0, 0, 11, 9, 9}, true, 0.0, 720)
	f.Add([]byte{1, 0, 0, 2, 0, 0, 12, 0, 1, 3, 0, 0, 4, 0, 0, 15, 255, 255}, false, 1e-3, 300)
	f.Fuzz(func(t *testing.T, data []byte, logY bool, ymin float64, width int) {
		if width < 229 || width > 5000 {
			width = 720
		}
		p := New("fuzz", "x", "y")
		p.LogY, p.YMin, p.Width = logY, ymin, width
		var v []float64
		for i := 0; i+3 <= len(data); i += 3 {
			switch k := data[i] % 24; k {
			case 0:
				v = append(v, math.NaN())
			case 1:
				v = append(v, math.Inf(1))
			case 2:
				v = append(v, math.Inf(-1))
			case 3:
				v = append(v, math.Copysign(0, -1))
			default:
				v = append(v, float64(int16(uint16(data[i+1])|uint16(data[i+2])<<8))*math.Pow(10, float64(k)-14))
			}
		}
		x, y := v[:len(v)/2], v[len(v)/2:]
		p.Add("a", x, y)
		p.Add("b", y, x)
		if got, want := p.SVG(), refSVG(p); got != want {
			t.Fatalf("differs from the reference:\n%s\n%s", got, want)
		}
		for _, n := range []int{8, 12, 40} {
			xs, ys := Thin(x, y, n)
			rx, ry := refThin(x, y, n)
			if !sameFloats(xs, rx) || !sameFloats(ys, ry) {
				t.Fatalf("Thin(%d) differs from the reference", n)
			}
		}
	})
}
