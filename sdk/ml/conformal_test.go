package ml

import (
	"bytes"
	"math"
	"math/rand"
	"testing"
)

// The p-value is (#{calibration α of the class ≥ α_new} + 1) / (n_c + 1),
// with α = 1 − p(class).
func TestConformalPValuesCountCalibrationScores(t *testing.T) {
	// Positives with p = 0.9, 0.7, 0.4 (α 0.1, 0.3, 0.6); negatives with
	// p = 0.1, 0.2, 0.5, 0.8 (α 0.1, 0.2, 0.5, 0.8).
	c := NewConformal([]bool{true, true, true, false, false, false, false},
		[]float64{0.9, 0.7, 0.4, 0.1, 0.2, 0.5, 0.8})
	for _, tc := range []struct{ p, pos, neg float64 }{
		{0.7, (2 + 1) / 4.0, (1 + 1) / 5.0}, // α+ 0.3: 0.3, 0.6; α− 0.7: 0.8
		{0.95, (3 + 1) / 4.0, (0 + 1) / 5.0},
		{0.05, (0 + 1) / 4.0, (4 + 1) / 5.0},
		{0.5, (1 + 1) / 4.0, (2 + 1) / 5.0}, // ties count: α− 0.5 ≥ 0.5
	} {
		pos, neg := c.PValues(tc.p)
		if math.Abs(pos-tc.pos) > 1e-12 || math.Abs(neg-tc.neg) > 1e-12 {
			t.Errorf("p=%v: p-values %v, %v; want %v, %v", tc.p, pos, neg, tc.pos, tc.neg)
		}
	}
	if pos, neg := c.Set(0.95, 0.8); !pos || neg {
		t.Errorf("p=0.95 at 0.8: set %v %v, want positive only", pos, neg)
	}
	if pos, neg := c.Set(0.5, 0.55); !pos || !neg {
		t.Errorf("p=0.5 at 0.55: set %v %v, want both", pos, neg) // 0.5 and 0.6 > 0.45
	}
	if pos, neg := c.Set(0.5, 0.5); pos || !neg {
		t.Errorf("p=0.5 at 0.5: set %v %v, want negative only", pos, neg) // 0.5 is not > 0.5
	}
	if (&Conformal{Positive: []float64{0.1}}).Ready() || (*Conformal)(nil).Ready() {
		t.Error("a conformal predictor without both classes is ready")
	}
}

// exchangeable draws n labelled examples from one fixed distribution: the
// class with probability prior, and a noisy, imperfect score for it.
func exchangeable(r *rand.Rand, n int, prior float64) ([]bool, []float64) {
	y := make([]bool, n)
	p := make([]float64, n)
	for i := range y {
		y[i] = r.Float64() < prior
		z := r.NormFloat64() * 1.5
		if y[i] {
			z += 1
		}
		p[i] = 1 / (1 + math.Exp(-z))
	}
	return y, p
}

// Property: on exchangeable data the class-conditional coverage of the
// prediction sets is at least the confidence, up to sampling error, for
// any class balance and calibration size.
func TestConformalCoversExchangeableData(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for trial := 0; trial < 20; trial++ {
		prior := 0.1 + 0.8*r.Float64()
		nCal := 200 + r.Intn(2000)
		cy, cp := exchangeable(r, nCal, prior)
		c := NewConformal(cy, cp)
		ty, tp := exchangeable(r, 20000, prior)
		for _, conf := range []float64{0.7, 0.8, 0.9, 0.95} {
			var n, hit [2]float64
			for i := range ty {
				pos, neg := c.Set(tp[i], conf)
				k, in := 0, neg
				if ty[i] {
					k, in = 1, pos
				}
				n[k]++
				if in {
					hit[k]++
				}
			}
			for k := range n {
				nc := float64(len(c.Negative))
				if k == 1 {
					nc = float64(len(c.Positive))
				}
				// The coverage of one calibration set varies with it (Beta,
				// sd ≈ sqrt(ε(1−ε)/n_c)); allow 4 sd plus the test set's
				// error, so that 160 checks fail by chance with odds below 1%.
				tol := 4*math.Sqrt(conf*(1-conf)/nc) + 3*math.Sqrt(conf*(1-conf)/n[k])
				if cov := hit[k] / n[k]; cov < conf-tol {
					t.Errorf("trial %d (prior %.2f, n_cal %d): class %d coverage %.3f at %.2f (tolerance %.3f)", trial, prior, nCal, k, cov, conf, tol)
				}
			}
		}
	}
}

// MeasureCoverage on exchangeable data measures the requested confidence
// within 3 points, per class and overall, at every reported level.
func TestMeasureCoverageWithinThreePoints(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	y, p := exchangeable(r, 8000, 0.3)
	cov := MeasureCoverage(y, p, ConformalLevels, 20240501)
	if len(cov) != len(ConformalLevels) {
		t.Fatalf("%d levels measured, want %d", len(cov), len(ConformalLevels))
	}
	for _, c := range cov {
		for name, v := range map[string]float64{"overall": c.Overall, "positive": c.Positive, "negative": c.Negative} {
			if math.Abs(v-c.Confidence) > 0.03 {
				t.Errorf("%s coverage %.3f at %.2f", name, v, c.Confidence)
			}
		}
		if c.Single+c.Empty > 1 || c.Single < 0 || c.Empty < 0 {
			t.Errorf("set sizes %+v", c)
		}
	}
	again := MeasureCoverage(y, p, ConformalLevels, 20240501)
	for i := range cov {
		if cov[i] != again[i] {
			t.Fatalf("not deterministic: %+v vs %+v", cov[i], again[i])
		}
	}
}

// A bundle keeps its tasks' conformal predictors through Encode and
// DecodeBundle, and a bundle encoded without them decodes with none.
func TestBundleKeepsConformal(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	y, p := exchangeable(r, 500, 0.4)
	c := FitConformal(y, p, 1)
	for _, task := range []Task{{Key: "with", Conformal: c}, {Key: "without"}} {
		var buf bytes.Buffer
		if err := (&Bundle{Name: "b", Tasks: []Task{task}}).Encode(&buf); err != nil {
			t.Fatal(err)
		}
		b, err := DecodeBundle(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		got := b.Tasks[0].Conformal
		if task.Conformal == nil {
			if got != nil {
				t.Errorf("%s: decoded %v", task.Key, got)
			}
			continue
		}
		if !got.Ready() || len(got.Positive) != len(c.Positive) || len(got.Coverage) != len(ConformalLevels) {
			t.Fatalf("%s: decoded %v", task.Key, got)
		}
		for _, q := range []float64{0.1, 0.5, 0.9} {
			a1, b1 := c.PValues(q)
			a2, b2 := got.PValues(q)
			if a1 != a2 || b1 != b2 {
				t.Errorf("p=%v: p-values %v %v after decoding, %v %v before", q, a2, b2, a1, b1)
			}
		}
	}
}
