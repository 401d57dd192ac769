package ml

import "math"

// LogReg is an L2-regularised logistic regression on sparse features.
type LogReg struct {
	W []float32
	B float32
}

func (m *LogReg) predict(x Sparse) float64 {
	z := float64(m.B)
	for k, i := range x.Idx {
		z += float64(m.W[i]) * float64(x.Val[k])
	}
	return sigmoid(z)
}

// fitLogReg minimises the weighted mean log-loss plus λ/2·|w|² by full-batch
// Adam, which is deterministic.
func fitLogReg(spec Spec, X []Sparse, y, w []float32, nf int) *LogReg {
	lambda, rate, steps := spec.l2(1e-3), spec.rate(0.05), spec.epochs(300)
	W := make([]float64, nf)
	var B float64
	gW := make([]float64, nf)
	mW, vW := make([]float64, nf), make([]float64, nf)
	var mB, vB float64
	const b1, b2, eps = 0.9, 0.999, 1e-8
	var wsum float64
	for _, v := range w {
		wsum += float64(v)
	}
	for t := 1; t <= steps; t++ {
		clear(gW)
		var gB float64
		for r, x := range X {
			z := B
			for k, i := range x.Idx {
				z += W[i] * float64(x.Val[k])
			}
			d := (sigmoid(z) - float64(y[r])) * float64(w[r]) / wsum
			gB += d
			for k, i := range x.Idx {
				gW[i] += d * float64(x.Val[k])
			}
		}
		c1, c2 := 1-math.Pow(b1, float64(t)), 1-math.Pow(b2, float64(t))
		for i := range W {
			g := gW[i] + lambda*W[i]
			mW[i] = b1*mW[i] + (1-b1)*g
			vW[i] = b2*vW[i] + (1-b2)*g*g
			W[i] -= rate * (mW[i] / c1) / (math.Sqrt(vW[i]/c2) + eps)
		}
		mB = b1*mB + (1-b1)*gB
		vB = b2*vB + (1-b2)*gB*gB
		B -= rate * (mB / c1) / (math.Sqrt(vB/c2) + eps)
	}
	out := &LogReg{W: make([]float32, nf), B: float32(B)}
	for i, v := range W {
		out.W[i] = float32(v)
	}
	return out
}
