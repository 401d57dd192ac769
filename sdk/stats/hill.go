package stats

import (
	"errors"
	"math"
)

// Hill is the two-parameter log-logistic response y = 1/(1 + (c/EC50)^Slope),
// falling from 1 (no effect) to 0.
type Hill struct {
	EC50  float64 `json:"ec50"`
	Slope float64 `json:"slope"`
	// SE of log10(EC50) and of the slope from the Gauss–Newton covariance.
	SELog10EC50 float64 `json:"se_log10_ec50"`
	SESlope     float64 `json:"se_slope"`
	RSS         float64 `json:"rss"`
	N           int     `json:"n"`
}

// At evaluates the response at concentration c.
func (h Hill) At(c float64) float64 {
	if c <= 0 {
		return 1
	}
	return 1 / (1 + math.Pow(c/h.EC50, h.Slope))
}

// FitHill fits EC50 and slope to (c, y) by least squares (Levenberg–Marquardt
// on log10 EC50 and slope). Points with c ≤ 0 are controls and are kept (they
// constrain nothing but add to the residual). start is the initial EC50.
func FitHill(c, y []float64, start float64) (Hill, error) {
	if len(c) != len(y) || len(c) < 3 {
		return Hill{}, errors.New("stats: FitHill needs at least 3 paired points")
	}
	if !(start > 0) {
		start = 1
	}
	th := [2]float64{math.Log10(start), 1}
	rss := func(th [2]float64) float64 {
		s := 0.0
		for i := range c {
			r := y[i] - Hill{EC50: math.Pow(10, th[0]), Slope: th[1]}.At(c[i])
			s += r * r
		}
		return s
	}
	cur := rss(th)
	lambda := 1e-3
	var jtj [2][2]float64
	for iter := 0; iter < 200; iter++ {
		var g [2]float64
		jtj = [2][2]float64{}
		for i := range c {
			if c[i] <= 0 {
				continue
			}
			u := th[1] * (math.Log10(c[i]) - th[0]) * math.Ln10 // ln((c/EC50)^h)
			e := math.Exp(u)
			f := 1 / (1 + e)
			df := -e * f * f // d f / d u
			j0 := df * (-th[1] * math.Ln10)
			j1 := df * (math.Log10(c[i]) - th[0]) * math.Ln10
			r := y[i] - f
			g[0] += j0 * r
			g[1] += j1 * r
			jtj[0][0] += j0 * j0
			jtj[0][1] += j0 * j1
			jtj[1][1] += j1 * j1
		}
		jtj[1][0] = jtj[0][1]
		improved := false
		for try := 0; try < 30; try++ {
			a := jtj[0][0] * (1 + lambda)
			d := jtj[1][1] * (1 + lambda)
			b := jtj[0][1]
			det := a*d - b*b
			if det == 0 {
				lambda *= 10
				continue
			}
			step := [2]float64{(d*g[0] - b*g[1]) / det, (a*g[1] - b*g[0]) / det}
			next := [2]float64{th[0] + step[0], th[1] + step[1]}
			if v := rss(next); v < cur {
				done := cur-v < 1e-14*cur
				th, cur = next, v
				lambda = math.Max(lambda/10, 1e-12)
				improved = true
				if done {
					iter = 1 << 30
				}
				break
			}
			lambda *= 10
		}
		if !improved {
			break
		}
	}
	n := 0
	for i := range c {
		if c[i] > 0 {
			n++
		}
	}
	h := Hill{EC50: math.Pow(10, th[0]), Slope: th[1], RSS: cur, N: len(c)}
	det := jtj[0][0]*jtj[1][1] - jtj[0][1]*jtj[1][0]
	if det > 0 && len(c) > 2 {
		s2 := cur / float64(len(c)-2)
		h.SELog10EC50 = math.Sqrt(s2 * jtj[1][1] / det)
		h.SESlope = math.Sqrt(s2 * jtj[0][0] / det)
	}
	if math.IsNaN(h.EC50) || math.IsNaN(h.Slope) || n == 0 {
		return h, errors.New("stats: Hill fit did not converge")
	}
	return h, nil
}
