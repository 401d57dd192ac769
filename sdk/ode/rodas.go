package ode

import (
	"fmt"
	"math"
)

// RODAS4 coefficients in the transformed form of Hairer & Wanner, Solving
// ODEs II (2nd ed.), IV.7 (Fortran code rodas.f, METH=1), with the dense
// output coefficients of the same code.
const (
	rbGamma = 0.25

	rbA21 = 1.544
	rbA31 = 0.9466785280815826
	rbA32 = 0.2557011698983284
	rbA41 = 3.314825187068521
	rbA42 = 2.896124015972201
	rbA43 = 0.9986419139977817
	rbA51 = 1.221224509226641
	rbA52 = 6.019134481288629
	rbA53 = 12.53708332932087
	rbA54 = -0.6878860361058950

	rbC21 = -5.6688
	rbC31 = -2.430093356833875
	rbC32 = -0.2063599157091915
	rbC41 = -0.1073529058151375
	rbC42 = -9.594562251023355
	rbC43 = -20.47028614809616
	rbC51 = 7.496443313967647
	rbC52 = -10.24680431464352
	rbC53 = -33.99990352819905
	rbC54 = 11.70890893206160
	rbC61 = 8.083246795921522
	rbC62 = -7.981132988064893
	rbC63 = -31.52159432874371
	rbC64 = 16.31930543123136
	rbC65 = -6.058818238834054

	rbc2, rbc3, rbc4 = 0.386, 0.21, 0.63

	rbD1 = 0.25
	rbD2 = -0.1043
	rbD3 = 0.1035
	rbD4 = -0.0362

	rbH21 = 10.12623508344586
	rbH22 = -7.487995877610167
	rbH23 = -34.80091861555747
	rbH24 = -7.992771707568823
	rbH25 = 1.025137723295662
	rbH31 = -0.6762803392801253
	rbH32 = 6.087714651680015
	rbH33 = 16.43084320892478
	rbH34 = 24.76722511418386
	rbH35 = -6.594389125716872
)

type rodas struct {
	n                      int
	k1, k2, k3, k4, k5, k6 []float64
	u, du, f0, fx, ynew    []float64
	d1, d2                 []float64 // dense output coefficients
	jac, w                 []float64
	piv, cols              []int
	lu                     sparseLU
	jacValid               bool         // jac holds a Jacobian valid for reuse
	lin                    LinearSolver // Problem.Linear, if any
}

func (r *rodas) init(n int) {
	r.n = n
	buf := make([]float64, 13*n+2*n*n)
	sl := func(i int) []float64 { return buf[i*n : (i+1)*n : (i+1)*n] }
	r.k1, r.k2, r.k3, r.k4, r.k5, r.k6 = sl(0), sl(1), sl(2), sl(3), sl(4), sl(5)
	r.u, r.du, r.f0, r.fx, r.ynew = sl(6), sl(7), sl(8), sl(9), sl(10)
	r.d1, r.d2 = sl(11), sl(12)
	r.jac = buf[13*n : 13*n+n*n]
	r.w = buf[13*n+n*n:]
	r.piv = make([]int, n)
	r.cols = make([]int, 0, n)
	r.lu.init(n)
}

// jacobian evaluates ∂f/∂y at (t, y), given f0 = f(t, y).
func (r *rodas) jacobian(s *solver, t float64, y []float64) {
	if s.o.ConstantJacobian && r.jacValid {
		return
	}
	s.stats.JacEvals++
	n := r.n
	if s.p.Linear != nil {
		s.p.Linear.Jacobian(t, y)
		r.jacValid = true
		return
	}
	if s.p.Jacobian != nil {
		s.p.Jacobian(t, y, r.jac)
		r.jacValid = true
		return
	}
	// Forward differences, column by column.
	copy(r.u, y)
	for j := 0; j < n; j++ {
		yj := r.u[j]
		delta := math.Sqrt(2.2e-16 * math.Max(1e-5, math.Abs(yj)))
		if s.o.AbsTolVec != nil {
			delta = math.Max(delta, math.Sqrt(2.2e-16)*s.o.AbsTolVec[j])
		}
		r.u[j] = yj + delta
		s.f(t, r.u, r.du)
		r.u[j] = yj
		for i := 0; i < n; i++ {
			r.jac[i*n+j] = (r.du[i] - r.f0[i]) / delta
		}
	}
	r.jacValid = true
}

// factor prepares solves with W = fac·I − J: through Problem.Linear when
// set, else by the dense LU of W (skipping exact zeros).
func (r *rodas) factor(s *solver, fac float64) error {
	if r.lin = s.p.Linear; r.lin != nil {
		return r.lin.Factor(fac)
	}
	n := r.n
	w, jac := r.w[:n*n], r.jac[:n*n]
	for i, v := range jac {
		w[i] = -v
	}
	for i := 0; i < n; i++ {
		w[i*n+i] += fac
	}
	if err := luFactor(w, n, r.piv, r.cols); err != nil {
		return err
	}
	r.lu.load(w, r.piv)
	return nil
}

// solve overwrites b with W⁻¹·b for the W of the last factor.
func (r *rodas) solve(b []float64) {
	if r.lin != nil {
		r.lin.Solve(b)
		return
	}
	r.lu.solve(b)
}

// run integrates from ta to tb with RODAS4.
func (r *rodas) run(s *solver, ta, tb float64, y []float64, times []float64, next int, out [][]float64) (int, error) {
	n := r.n
	t := ta
	s.f(t, y, r.f0)
	step := s.h
	s.h = 0
	if step <= 0 {
		step = s.initialStep(t, tb, y, r.f0, r.u, r.du, 3)
	}
	needJac := true
	for {
		if s.stats.Steps+s.stats.Rejected >= s.o.MaxSteps {
			return next, fmt.Errorf("ode: rodas4 at t=%g: %w (%d)", t, ErrMaxSteps, s.o.MaxSteps)
		}
		if s.o.MaxStep > 0 && step > s.o.MaxStep {
			step = s.o.MaxStep
		}
		last := false
		if t+1.01*step >= tb {
			step, last = tb-t, true
		}
		if step <= 1e-14*math.Max(1, math.Abs(t)) {
			return next, fmt.Errorf("ode: rodas4 at t=%g, h=%g: %w", t, step, ErrStepTooSmall)
		}
		h := step
		if needJac {
			r.jacobian(s, t, y)
			if !s.o.Autonomous { // ∂f/∂t by a forward difference (unused when autonomous)
				dt := math.Sqrt(2.2e-16) * math.Max(1e-5, math.Abs(t))
				s.f(t+dt, y, r.du)
				for i := range r.fx {
					r.fx[i] = (r.du[i] - r.f0[i]) / dt
				}
			}
			needJac = false
		}
		// W = I/(γh) − J.
		fac := 1 / (rbGamma * h)
		s.stats.LUDecomps++
		if err := r.factor(s, fac); err != nil {
			s.stats.Rejected++
			step = h / 2
			continue
		}
		// The stages below evaluate the same expressions as rodas.f, with the
		// products of constants hoisted (ih*c·k = (ih*c)·k in Go's order) and
		// the ∂f/∂t terms left out when f is autonomous (they are zero).
		ih := 1 / h
		nonAuto := !s.o.Autonomous
		y := y[:n]
		k1, k2, k3, k4, k5, k6 := r.k1[:n], r.k2[:n], r.k3[:n], r.k4[:n], r.k5[:n], r.k6[:n]
		u, du, fx := r.u[:n], r.du[:n], r.fx[:n]
		// Stage 1.
		copy(k1, r.f0[:n])
		if nonAuto {
			d := h * rbD1
			for i := range k1 {
				k1[i] += d * fx[i]
			}
		}
		r.solve(k1)
		// Stage 2.
		for i := range u {
			u[i] = y[i] + rbA21*k1[i]
		}
		s.f(t+rbc2*h, u, du)
		c21 := ih * rbC21
		for i := range k2 {
			k2[i] = du[i] + c21*k1[i]
		}
		if nonAuto {
			d := h * rbD2
			for i := range k2 {
				k2[i] += d * fx[i]
			}
		}
		r.solve(k2)
		// Stage 3.
		for i := range u {
			u[i] = y[i] + rbA31*k1[i] + rbA32*k2[i]
		}
		s.f(t+rbc3*h, u, du)
		for i := range k3 {
			k3[i] = du[i] + ih*(rbC31*k1[i]+rbC32*k2[i])
		}
		if nonAuto {
			d := h * rbD3
			for i := range k3 {
				k3[i] += d * fx[i]
			}
		}
		r.solve(k3)
		// Stage 4.
		for i := range u {
			u[i] = y[i] + rbA41*k1[i] + rbA42*k2[i] + rbA43*k3[i]
		}
		s.f(t+rbc4*h, u, du)
		for i := range k4 {
			k4[i] = du[i] + ih*(rbC41*k1[i]+rbC42*k2[i]+rbC43*k3[i])
		}
		if nonAuto {
			d := h * rbD4
			for i := range k4 {
				k4[i] += d * fx[i]
			}
		}
		r.solve(k4)
		// Stage 5.
		tnew := t + h
		if last {
			tnew = tb
		}
		for i := range u {
			u[i] = y[i] + rbA51*k1[i] + rbA52*k2[i] + rbA53*k3[i] + rbA54*k4[i]
		}
		s.f(tnew, u, du)
		for i := range k5 {
			k5[i] = du[i] + ih*(rbC51*k1[i]+rbC52*k2[i]+rbC53*k3[i]+rbC54*k4[i])
		}
		r.solve(k5)
		// Stage 6 (stiffly accurate: the embedded solution is u + k5).
		for i := range u {
			u[i] += k5[i]
		}
		s.f(tnew, u, du)
		for i := range k6 {
			k6[i] = du[i] + ih*(rbC61*k1[i]+rbC62*k2[i]+rbC63*k3[i]+rbC64*k4[i]+rbC65*k5[i])
		}
		r.solve(k6)
		// The new state, its error norm (as errNorm) and finiteness in one pass.
		ynew := r.ynew[:n]
		var sum float64
		nonFinite := false
		rtol, atolVec, atol := s.o.RelTol, s.o.AbsTolVec, s.o.AbsTol
		if atolVec != nil {
			atolVec = atolVec[:n]
		}
		for i := range ynew {
			yn := u[i] + k6[i]
			ynew[i] = yn
			sc := atol
			if atolVec != nil {
				sc = atolVec[i]
			}
			q := k6[i] / (sc + rtol*math.Max(math.Abs(y[i]), math.Abs(yn)))
			sum += q * q
			nonFinite = nonFinite || math.IsNaN(yn) || math.IsInf(yn, 0)
		}
		e := math.Sqrt(sum / float64(n))
		if math.IsNaN(e) || nonFinite {
			e = math.Inf(1)
		}
		if e > 1 {
			s.stats.Rejected++
			step = nextStep(h, e, 3, false)
			continue
		}
		s.stats.Steps++
		if next < len(times) && times[next] <= tnew && times[next] < tb {
			// Dense output at the times in (t, tnew] (strictly below tb), as
			// emitDense, written out here: a closure call per output time
			// is dear in WebAssembly.
			d1, d2 := r.d1[:n], r.d2[:n]
			for i := range d1 {
				d1[i] = rbH21*k1[i] + rbH22*k2[i] + rbH23*k3[i] + rbH24*k4[i] + rbH25*k5[i]
				d2[i] = rbH31*k1[i] + rbH32*k2[i] + rbH33*k3[i] + rbH34*k4[i] + rbH35*k5[i]
			}
			for ; next < len(times) && times[next] <= tnew && times[next] < tb; next++ {
				th := (times[next] - t) / h
				th1 := 1 - th
				dst := out[next][:n]
				for i := range dst {
					dst[i] = th1*y[i] + th*(ynew[i]+th1*(d1[i]+th*d2[i]))
				}
			}
		}
		copy(y, ynew)
		t = tnew
		if last {
			return next, nil
		}
		s.f(t, y, r.f0)
		needJac = true
		step = nextStep(h, e, 3, true)
	}
}
