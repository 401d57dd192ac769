package ml

import (
	"fmt"
	"math"
	"sort"
)

// ConformalLevels are the confidence levels at which training measures and
// reports the coverage of the prediction sets.
var ConformalLevels = []float64{0.8, 0.9, 0.95}

// Conformal is a Mondrian (class-conditional) conformal predictor of one
// binary task: the sorted nonconformity scores α = 1 − p(class) of the
// calibration examples of each class, p the calibrated probability of that
// class. The p-value of class c for a new compound is
// (#{α_i of class c ≥ α_new} + 1) / (n_c + 1); the prediction set at
// confidence 1 − ε holds the classes whose p-value exceeds ε, which then
// covers the true class with probability at least 1 − ε within each class
// for exchangeable data.
type Conformal struct {
	// Negative and Positive are the calibration scores of each class, ascending.
	Negative, Positive []float64
	// Coverage is the measured coverage on held-out halves of the
	// calibration examples (see MeasureCoverage), one per ConformalLevels.
	Coverage []Coverage
}

// Coverage is the measured validity and efficiency of prediction sets at one
// confidence level: the fraction of held-out examples whose set contains
// their true class, overall and per class, and the fractions of sets with
// exactly one class and with none.
type Coverage struct {
	Confidence float64 `json:"confidence"`
	Overall    float64 `json:"overall"`
	Positive   float64 `json:"positive"`
	Negative   float64 `json:"negative"`
	Single     float64 `json:"single"`
	Empty      float64 `json:"empty"`
}

// NewConformal builds the conformal predictor of labels y from calibrated
// positive-class probabilities p of examples the scoring model did not see.
func NewConformal(y []bool, p []float64) *Conformal {
	c := &Conformal{}
	for i, v := range p {
		if v = clamp01(v); y[i] {
			c.Positive = append(c.Positive, 1-v)
		} else {
			c.Negative = append(c.Negative, v)
		}
	}
	sort.Float64s(c.Positive)
	sort.Float64s(c.Negative)
	return c
}

// Ready reports whether c holds calibration examples of both classes.
func (c *Conformal) Ready() bool {
	return c != nil && len(c.Positive) > 0 && len(c.Negative) > 0
}

// PValues returns the p-values of the positive and the negative class of a
// compound whose calibrated positive-class probability is p.
func (c *Conformal) PValues(p float64) (pos, neg float64) {
	p = clamp01(p)
	return pValue(c.Positive, 1-p), pValue(c.Negative, p)
}

// pValue is (#{s ≥ alpha} + 1) / (len(s) + 1) for ascending s.
func pValue(s []float64, alpha float64) float64 {
	ge := len(s) - sort.SearchFloat64s(s, alpha)
	return float64(ge+1) / float64(len(s)+1)
}

// Set returns whether the positive and the negative class are in the
// prediction set at confidence (a p-value above 1 − confidence).
func (c *Conformal) Set(p, confidence float64) (pos, neg bool) {
	pp, pn := c.PValues(p)
	eps := Significance(confidence)
	return pp > eps, pn > eps
}

// Significance is 1 − confidence rounded to 12 decimals, so that a p-value
// of exactly 0.2 is not above the significance of confidence 0.8
// (1 − 0.8 is 0.19999999999999996 in floating point).
func Significance(confidence float64) float64 {
	return math.Round((1-confidence)*1e12) / 1e12
}

func clamp01(p float64) float64 {
	if math.IsNaN(p) {
		return 0.5
	}
	return math.Min(math.Max(p, 0), 1)
}

// MeasureCoverage estimates the coverage of Mondrian conformal prediction
// sets for labels y and calibrated out-of-sample probabilities p: the
// examples are split into two halves (stratified, seeded), one half
// calibrates and the other is predicted, both ways round, and the two
// measurements are averaged, at each of levels.
func MeasureCoverage(y []bool, p []float64, levels []float64, seed int64) []Coverage {
	half := RandomFolds(y, 2, seed)
	out := make([]Coverage, len(levels))
	for l, conf := range levels {
		out[l].Confidence = conf
	}
	for cal := 0; cal < 2; cal++ {
		var cy []bool
		var cp []float64
		for i := range y {
			if half[i] == cal {
				cy, cp = append(cy, y[i]), append(cp, p[i])
			}
		}
		c := NewConformal(cy, cp)
		for l, conf := range levels {
			var n, nPos, nNeg, hit, hitPos, hitNeg, single, empty float64
			for i := range y {
				if half[i] == cal {
					continue
				}
				pos, neg := c.Set(p[i], conf)
				in := (y[i] && pos) || (!y[i] && neg)
				n++
				if in {
					hit++
				}
				if y[i] {
					nPos++
					if in {
						hitPos++
					}
				} else {
					nNeg++
					if in {
						hitNeg++
					}
				}
				switch {
				case pos != neg:
					single++
				case !pos && !neg:
					empty++
				}
			}
			o := &out[l]
			o.Overall += ratio(hit, n) / 2
			o.Positive += ratio(hitPos, nPos) / 2
			o.Negative += ratio(hitNeg, nNeg) / 2
			o.Single += ratio(single, n) / 2
			o.Empty += ratio(empty, n) / 2
		}
	}
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// FitConformal builds the conformal predictor of labels y from calibrated
// out-of-fold probabilities p and records its measured coverage at
// ConformalLevels (halves drawn with seed).
func FitConformal(y []bool, p []float64, seed int64) *Conformal {
	c := NewConformal(y, p)
	c.Coverage = MeasureCoverage(y, p, ConformalLevels, seed)
	return c
}

// CoverageAt returns the measured coverage at confidence, if measured.
func (c *Conformal) CoverageAt(confidence float64) (Coverage, bool) {
	if c == nil {
		return Coverage{}, false
	}
	for _, v := range c.Coverage {
		if math.Abs(v.Confidence-confidence) < 1e-9 {
			return v, true
		}
	}
	return Coverage{}, false
}

// String summarises the calibration set and the measured coverage.
func (c *Conformal) String() string {
	if !c.Ready() {
		return "no conformal calibration"
	}
	s := fmt.Sprintf("Mondrian conformal prediction calibrated on %d out-of-fold predictions (%d positive, %d negative)",
		len(c.Positive)+len(c.Negative), len(c.Positive), len(c.Negative))
	for i, v := range c.Coverage {
		if i == 0 {
			s += "; measured coverage on held-out halves:"
		} else {
			s += ","
		}
		s += fmt.Sprintf(" %.3f at %.2f", v.Overall, v.Confidence)
	}
	return s
}
