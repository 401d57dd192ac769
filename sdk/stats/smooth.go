package stats

import "math"

// LocalLinear returns the Gaussian-kernel local-linear regression of (x, y)
// evaluated at each of at, with bandwidth bw (in units of x). Where the local
// design is singular it falls back to the kernel-weighted mean.
func LocalLinear(x, y, at []float64, bw float64) []float64 {
	out := make([]float64, len(at))
	for k, x0 := range at {
		var s0, s1, s2, t0, t1 float64
		for i := range x {
			if math.IsNaN(y[i]) {
				continue
			}
			d := x[i] - x0
			w := math.Exp(-0.5 * d * d / (bw * bw))
			s0 += w
			s1 += w * d
			s2 += w * d * d
			t0 += w * y[i]
			t1 += w * d * y[i]
		}
		det := s0*s2 - s1*s1
		switch {
		case s0 == 0:
			out[k] = math.NaN()
		case math.Abs(det) < 1e-12*s0*s0:
			out[k] = t0 / s0
		default:
			out[k] = (s2*t0 - s1*t1) / det
		}
	}
	return out
}
