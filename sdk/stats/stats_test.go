package stats

import (
	"math"
	"testing"
)

func TestWelchWikipediaExample(t *testing.T) {
	// Welch's t-test, Wikipedia example 1: t = −2.46, df ≈ 24.9, p ≈ 0.021.
	a := []float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4}
	b := []float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4}
	r, err := Welch(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.T+2.46) > 0.01 || math.Abs(r.DF-24.9) > 0.1 || math.Abs(r.P-0.021) > 0.001 {
		t.Errorf("Welch = %+v, want t −2.46, df 24.9, p 0.021", r)
	}
}

func TestStudentTwoSided(t *testing.T) {
	// Tabulated: two-sided p for t = 2.228, df = 10 is 0.05; t = 2, df = 10 → 0.0734.
	if p := StudentTwoSided(2.228, 10); math.Abs(p-0.05) > 2e-4 {
		t.Errorf("p(2.228, 10) = %g", p)
	}
	if p := StudentTwoSided(2, 10); math.Abs(p-0.0734) > 2e-4 {
		t.Errorf("p(2, 10) = %g", p)
	}
}

func TestBH(t *testing.T) {
	p := []float64{0.01, 0.04, 0.03, math.NaN(), 0.5}
	q := BH(p)
	// ranks 0.01, 0.03, 0.04, 0.5 of m = 4: q = min over higher ranks of p·m/rank.
	want := []float64{0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, math.NaN(), 0.5}
	for i := range q {
		if math.IsNaN(want[i]) != math.IsNaN(q[i]) || (!math.IsNaN(q[i]) && math.Abs(q[i]-want[i]) > 1e-12) {
			t.Errorf("q[%d] = %g, want %g", i, q[i], want[i])
		}
	}
}

func TestFitHillRecovers(t *testing.T) {
	var c, y []float64
	truth := Hill{EC50: 2.5, Slope: 0.7}
	for _, x := range []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 50} {
		for k := -1; k <= 1; k++ {
			c = append(c, x)
			y = append(y, truth.At(x)+0.02*float64(k))
		}
	}
	h, err := FitHill(c, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(h.EC50-2.5) > 0.01 || math.Abs(h.Slope-0.7) > 0.005 {
		t.Errorf("fit %+v, want EC50 2.5, slope 0.7", h)
	}
}

func TestLocalLinearReproducesLine(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4}
	y := []float64{1, 3, 5, 7, 9}
	got := LocalLinear(x, y, []float64{0.5, 2.5}, 1)
	if math.Abs(got[0]-2) > 1e-9 || math.Abs(got[1]-6) > 1e-9 {
		t.Errorf("local linear on a line = %v, want [2 6]", got)
	}
}
