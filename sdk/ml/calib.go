package ml

import "math"

// Calibration maps a raw model probability p to sigmoid(A·logit(p) + B)
// (Platt scaling). The zero value (A = 0) leaves p unchanged.
type Calibration struct {
	A, B float64
}

// Apply calibrates p.
func (c Calibration) Apply(p float64) float64 {
	if c.A == 0 {
		return p
	}
	return sigmoid(c.A*logit(p) + c.B)
}

func logit(p float64) float64 {
	p = math.Min(math.Max(p, 1e-7), 1-1e-7)
	return math.Log(p / (1 - p))
}

// FitCalibration fits Platt scaling to out-of-fold probabilities p of labels y
// by damped Newton steps on the log-loss.
func FitCalibration(y []bool, p []float64) Calibration {
	x := make([]float64, len(p))
	t := make([]float64, len(p))
	for i := range p {
		x[i] = logit(p[i])
		if y[i] {
			t[i] = 1
		}
	}
	loss := func(a, b float64) float64 {
		var l float64
		for i := range x {
			z := a*x[i] + b
			// log(1+e^z) - t·z, computed stably.
			l += math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) - t[i]*z
		}
		return l
	}
	a, b := 1.0, 0.0
	cur := loss(a, b)
	for it := 0; it < 100; it++ {
		var ga, gb, haa, hab, hbb float64
		for i := range x {
			q := sigmoid(a*x[i] + b)
			d, w := q-t[i], math.Max(q*(1-q), 1e-12)
			ga += d * x[i]
			gb += d
			haa += w * x[i] * x[i]
			hab += w * x[i]
			hbb += w
		}
		haa, hbb = haa+1e-9, hbb+1e-9
		det := haa*hbb - hab*hab
		if det <= 0 {
			break
		}
		da, db := (hbb*ga-hab*gb)/det, (haa*gb-hab*ga)/det
		step := 1.0
		for ; step > 1e-6; step /= 2 {
			if l := loss(a-step*da, b-step*db); l < cur {
				a, b, cur = a-step*da, b-step*db, l
				break
			}
		}
		if step <= 1e-6 || math.Abs(step*da)+math.Abs(step*db) < 1e-10 {
			break
		}
	}
	if a <= 0 || math.IsNaN(a) || math.IsNaN(b) {
		return Calibration{}
	}
	return Calibration{A: a, B: b}
}
