package plot

import (
	"encoding/xml"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
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
	p := New("random <&> \"plot\" C_{max}", "x 'unit' (µM)", "y (10^{3} cells)")
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
	p.LogX = r.IntN(4) == 0
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
			case 0: // sorted grid
				x[i] = float64(i) * xscale
			case 1: // sorted with repeats
				x[i] = float64(i/3) * xscale
			default:
				x[i] = randomValue(r, xscale)
			}
		}
		for i := range y {
			y[i] = randomValue(r, yscale)
		}
		name := "s" + strconv.Itoa(s)
		if r.IntN(5) == 0 {
			name = ""
		}
		a := p.Add(name, x, y)
		a.Dashed = r.IntN(3) == 0
		a.Markers = r.IntN(4) == 0
	}
	return p
}

// checkSVG parses an SVG document and checks, in each panel (the document
// or a nested <svg>), that every point of every line and marker lies in the
// data area (to the 0.05 px of the one-decimal coordinates) and that the
// legend is right of it.
func checkSVG(t testing.TB, svg string) {
	t.Helper()
	type rect struct{ x, y, w, h float64 }
	type panel struct {
		area, legend *rect
		points       [][2]float64
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("number %q: %v", s, err)
		}
		return v
	}
	var stack []*panel
	var done []*panel
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("SVG not well-formed: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			at := map[string]string{}
			for _, a := range e.Attr {
				at[a.Name.Local] = a.Value
			}
			if e.Name.Local == "svg" {
				stack = append(stack, &panel{})
				continue
			}
			cur := stack[len(stack)-1]
			switch {
			case e.Name.Local == "rect" && (at["class"] == "plot-area" || at["class"] == "legend-box"):
				r := &rect{num(at["x"]), num(at["y"]), num(at["width"]), num(at["height"])}
				if at["class"] == "plot-area" {
					cur.area = r
				} else {
					cur.legend = r
				}
			case e.Name.Local == "polyline":
				for _, pt := range strings.Fields(at["points"]) {
					x, y, _ := strings.Cut(pt, ",")
					cur.points = append(cur.points, [2]float64{num(x), num(y)})
				}
			case e.Name.Local == "circle" && at["r"] == "2.5":
				cur.points = append(cur.points, [2]float64{num(at["cx"]), num(at["cy"])})
			}
		case xml.EndElement:
			if e.Name.Local == "svg" {
				done = append(done, stack[len(stack)-1])
				stack = stack[:len(stack)-1]
			}
		}
	}
	for _, p := range done {
		if p.area == nil {
			if len(p.points) > 0 {
				t.Fatal("points outside a panel with a data area")
			}
			continue
		}
		a := p.area
		for _, pt := range p.points {
			if pt[0] < a.x-0.05 || pt[0] > a.x+a.w+0.05 || pt[1] < a.y-0.05 || pt[1] > a.y+a.h+0.05 {
				t.Fatalf("point %v outside the data area %+v", pt, *a)
			}
		}
		if l := p.legend; l != nil && l.x < a.x+a.w {
			t.Fatalf("legend %+v overlaps the data area %+v", *l, *a)
		}
	}
}

// TestRandomPlots draws random plots (every scale, markers, dashes, NaN,
// ±Inf, zero and negative values) and checks each (checkSVG); and Thin
// against its reference (ref_test.go). PLOT_RANDOM_PLOTS sets the number of
// plots (1000).
func TestRandomPlots(t *testing.T) {
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
		checkSVG(t, p.SVG())
		for _, s := range p.Series {
			m := []int{0, 7, 8, 9, 40, 100, 500}[r.IntN(7)]
			xs, ys := Thin(s.X, s.Y, m)
			rx, ry := refThin(s.X, s.Y, m)
			if !sameFloats(xs, rx) || !sameFloats(ys, ry) {
				t.Fatalf("plot %d: Thin(%d points, %d) differs from the reference", i, len(s.X), m)
			}
		}
	}
	// Random stacks.
	for range n / 20 {
		checkSVG(t, Stack(randomPlot(r), randomPlot(r), randomPlot(r)))
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

// FuzzSVG draws a plot from fuzzed coordinates and checks it (checkSVG).
// Each takes three bytes: a kind (NaN, ±Inf, ±0, or a power of ten) and an
// int16 mantissa.
func FuzzSVG(f *testing.F) {
	f.Add([]byte{9, 1, 2, 9, 3, 4, 9, 5, 6, 10, 7, 8, 0, 0, 0, 11, 9, 9}, true, false, 720)
	f.Add([]byte{1, 0, 0, 2, 0, 0, 12, 0, 1, 3, 0, 0, 4, 0, 0, 15, 255, 255}, false, true, 300)
	f.Fuzz(func(t *testing.T, data []byte, logY, logX bool, width int) {
		if width < 229 || width > 5000 {
			width = 720
		}
		p := New("fuzz", "x", "y")
		p.LogY, p.LogX, p.Width = logY, logX, width
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
		p.Add("b", y, x).Markers = true
		checkSVG(t, p.SVG())
		for _, n := range []int{8, 12, 40} {
			xs, ys := Thin(x, y, n)
			rx, ry := refThin(x, y, n)
			if !sameFloats(xs, rx) || !sameFloats(ys, ry) {
				t.Fatalf("Thin(%d) differs from the reference", n)
			}
		}
	})
}
