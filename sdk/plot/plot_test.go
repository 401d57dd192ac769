package plot

import (
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
)

func wellFormed(t *testing.T, svg string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return
			}
			t.Fatalf("SVG not well-formed: %v", err)
		}
	}
}

func TestLinearPlotHasAxesLegendAndUnits(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4}
	p := New("Decay <test>", "time (h)", "concentration (µM)")
	p.Add("plasma", x, []float64{5, 3, 2, 1, 0.5})
	p.Add("heart & liver", x, []float64{1, 2, 3, 2, 1})
	svg := p.SVG()
	wellFormed(t, svg)
	for _, want := range []string{"time (h)", "concentration (µM)", "plasma", "heart &amp; liver", "Decay &lt;test&gt;", "<polyline"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("%d lines, want 2", n)
	}
}

func TestLogAxisDecades(t *testing.T) {
	x := []float64{0, 1, 2, 3}
	p := New("log", "t", "C (ng/mL)")
	p.LogY = true
	p.Add("c", x, []float64{1000, 100, 0, 0.5}) // zero is skipped on a log axis
	svg := p.SVG()
	wellFormed(t, svg)
	for _, tick := range []string{">0.1<", ">1<", ">10<", ">100<", ">1000<"} {
		if !strings.Contains(svg, tick) {
			t.Errorf("log axis lacks decade tick %s", tick)
		}
	}
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Error("SVG contains non-finite coordinates")
	}
}

func TestNiceTicksCoverRange(t *testing.T) {
	for _, r := range [][2]float64{{0, 1}, {0, 168}, {-3, 7}, {0, 0.0013}, {12, 365}} {
		ts := niceTicks(r[0], r[1])
		if ts[0] > r[0] || ts[len(ts)-1] < r[1]-1e-12 || len(ts) > 12 {
			t.Errorf("ticks %v do not cover %v", ts, r)
		}
	}
}

func TestEmptyPlot(t *testing.T) {
	wellFormed(t, New("", "x", "y").SVG())
}

func TestAppendFixed1MatchesStrconv(t *testing.T) {
	vals := []float64{0, -0.0, 0.25, 0.75, -0.04, 1.05, 12.349999, 123.45, -7.95, 1e9, 3.0000001}
	for i := 0; i < 200000; i++ {
		vals = append(vals, float64(i)*0.0137-500, float64(i)/8-300)
	}
	for _, v := range vals {
		if got, want := string(appendFixed1(nil, v)), strconv.FormatFloat(v, 'f', 1, 64); got != want {
			t.Fatalf("appendFixed1(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestThinKeepsExtremesAndBound(t *testing.T) {
	n := 5000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(i) * 0.01
		y[i] = float64(i % 97) // saw tooth
	}
	y[2345] = 1000 // a spike
	xs, ys := Thin(x, y, 400)
	if len(xs) > 400 || len(xs) != len(ys) || len(xs) < 100 {
		t.Fatalf("%d points", len(xs))
	}
	if xs[0] != x[0] || xs[len(xs)-1] != x[n-1] {
		t.Errorf("ends %g..%g, want %g..%g", xs[0], xs[len(xs)-1], x[0], x[n-1])
	}
	found := false
	for i := range xs {
		if i > 0 && xs[i] < xs[i-1] {
			t.Fatalf("x not in order at %d", i)
		}
		found = found || ys[i] == 1000
	}
	if !found {
		t.Error("the spike was dropped")
	}
	if sx, _ := Thin(x[:300], y[:300], 400); len(sx) != 300 {
		t.Errorf("short series changed: %d points", len(sx))
	}
}

// Two x values an ulp apart, where adding the step does not move a tick:
// niceTicks must still return, with between 1 and maxTicks ticks.
func TestTicksOfARangeOfAFewUlps(t *testing.T) {
	lo, hi := 1.398043286095289e-76, 1.3980432860952892e-76
	if ticks := niceTicks(lo, hi); len(ticks) == 0 || len(ticks) > maxTicks {
		t.Fatalf("%d ticks", len(ticks))
	}
}

func TestMarksBecomeTspans(t *testing.T) {
	for in, want := range map[string]string{
		"C_{max} (µM)":     `C<tspan dy="3.6" font-size="9.0">max</tspan><tspan dy="-3.6"> (µM)</tspan>`,
		"10^{−4}":          `10<tspan dy="-3.6" font-size="9.0">−4</tspan>`,
		"heart_DNA_bound":  `heart_DNA_bound`,
		"a_{<b>} & c^{2}d": `a<tspan dy="3.6" font-size="9.0">&lt;b&gt;</tspan><tspan dy="-3.6"> &amp; c<tspan dy="-3.6" font-size="9.0">2</tspan><tspan dy="3.6">d</tspan></tspan>`,
		"x_{open":          `x<tspan dy="3.6" font-size="9.0">open</tspan>`,
	} {
		if got := string(appendText(nil, in, 12)); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
	// Script text counts smaller, marks not at all.
	if w, plain := textWidth("C_{max}", 12), textWidth("Cmax", 12); !(w < plain) {
		t.Errorf("width of C_{max} %g, of Cmax %g", w, plain)
	}
}

// A log axis reaches the decade below the smallest value: the doxorubicin
// plasma curve's 0.41 ng/mL at 7 days is on it (a floor at Cmax·10⁻⁴ once
// flattened it at 0.76).
func TestLogAxisHoldsTheSmallestValue(t *testing.T) {
	x := []float64{0, 1, 24, 168}
	p := New("Doxorubicin", "time (h)", "concentration (ng/mL)")
	p.LogY = true
	p.Add("plasma", x, []float64{7620, 80, 9, 0.41})
	svg := p.SVG()
	wellFormed(t, svg)
	if !strings.Contains(svg, `data-y-scale="log" data-y-range="0.1 10000"`) {
		t.Errorf("y axis: %s", svg[strings.Index(svg, "data-y-scale"):][:60])
	}
	checkSVG(t, svg)
}

func TestLegendBesideTheDataAndPanelsAligned(t *testing.T) {
	x := []float64{0, 1, 2}
	p := New("a", "time (h)", "concentration (µM)")
	p.Add("heart, intracellular free (a long name)", x, []float64{1, 2, 3})
	q := New("b", "time (h)", "viability (% of vehicle)")
	q.Add("v", x, []float64{100, 90, 1e6})
	svg := Stack(p, q)
	checkSVG(t, svg) // the legend right of the data area, in each panel
	var xs []string
	for _, part := range strings.Split(svg, `<rect class="plot-area"`)[1:] {
		xs = append(xs, part[:strings.Index(part, ` height=`)])
	}
	if len(xs) != 2 || xs[0] != xs[1] {
		t.Errorf("data areas %q: want two, at the same x and width", xs)
	}
}
