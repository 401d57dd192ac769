package stats

import (
	"errors"
	"math"
	"sort"
)

// MeanVar returns the mean and the unbiased variance of x.
func MeanVar(x []float64) (mean, variance float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v
	}
	mean /= n
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	if len(x) > 1 {
		variance /= n - 1
	}
	return mean, variance
}

// TTest is the result of a two-sample test of a against b.
type TTest struct {
	Diff float64 `json:"diff"` // mean(a) − mean(b)
	T    float64 `json:"t"`
	DF   float64 `json:"df"`
	P    float64 `json:"p"` // two-sided
}

// ErrTooFew reports samples too small for a test (fewer than 2 per group or no variance).
var ErrTooFew = errors.New("stats: need at least 2 finite values per group with non-zero variance")

// Welch runs Welch's unequal-variance two-sample t-test (two-sided), with the
// Welch–Satterthwaite degrees of freedom.
func Welch(a, b []float64) (TTest, error) {
	if len(a) < 2 || len(b) < 2 {
		return TTest{}, ErrTooFew
	}
	ma, va := MeanVar(a)
	mb, vb := MeanVar(b)
	na, nb := float64(len(a)), float64(len(b))
	se2 := va/na + vb/nb
	if !(se2 > 0) {
		return TTest{}, ErrTooFew
	}
	t := (ma - mb) / math.Sqrt(se2)
	df := se2 * se2 / ((va/na)*(va/na)/(na-1) + (vb/nb)*(vb/nb)/(nb-1))
	return TTest{Diff: ma - mb, T: t, DF: df, P: StudentTwoSided(t, df)}, nil
}

// StudentTwoSided returns P(|T| ≥ |t|) for Student's t with df degrees of freedom.
func StudentTwoSided(t, df float64) float64 {
	if math.IsNaN(t) {
		return math.NaN()
	}
	x := df / (df + t*t)
	return RegIncBeta(df/2, 0.5, x)
}

// RegIncBeta is the regularized incomplete beta function I_x(a, b), evaluated
// with the continued fraction of Numerical Recipes (modified Lentz).
func RegIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// BH returns Benjamini–Hochberg adjusted p-values (q-values) in the order of p;
// NaN entries are ignored and stay NaN.
func BH(p []float64) []float64 {
	idx := make([]int, 0, len(p))
	for i, v := range p {
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(i, j int) bool { return p[idx[i]] < p[idx[j]] })
	q := make([]float64, len(p))
	for i := range q {
		q[i] = math.NaN()
	}
	m := float64(len(idx))
	run := 1.0
	for r := len(idx) - 1; r >= 0; r-- {
		v := p[idx[r]] * m / float64(r+1)
		run = math.Min(run, v)
		q[idx[r]] = math.Min(run, 1)
	}
	return q
}
