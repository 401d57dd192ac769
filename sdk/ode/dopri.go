package ode

import (
	"fmt"
	"math"
)

// Dormand–Prince 5(4) coefficients (Dormand & Prince 1980, J. Comput. Appl.
// Math. 6:19–26) and the dense-output weights of Hairer, Nørsett & Wanner,
// Solving ODEs I (2nd ed.), II.6.
const (
	dpC2, dpC3, dpC4, dpC5 = 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9

	dpA21 = 1.0 / 5
	dpA31 = 3.0 / 40
	dpA32 = 9.0 / 40
	dpA41 = 44.0 / 45
	dpA42 = -56.0 / 15
	dpA43 = 32.0 / 9
	dpA51 = 19372.0 / 6561
	dpA52 = -25360.0 / 2187
	dpA53 = 64448.0 / 6561
	dpA54 = -212.0 / 729
	dpA61 = 9017.0 / 3168
	dpA62 = -355.0 / 33
	dpA63 = 46732.0 / 5247
	dpA64 = 49.0 / 176
	dpA65 = -5103.0 / 18656
	dpA71 = 35.0 / 384
	dpA73 = 500.0 / 1113
	dpA74 = 125.0 / 192
	dpA75 = -2187.0 / 6784
	dpA76 = 11.0 / 84

	// Error weights: 5th-order minus embedded 4th-order solution.
	dpE1 = 71.0 / 57600
	dpE3 = -71.0 / 16695
	dpE4 = 71.0 / 1920
	dpE5 = -17253.0 / 339200
	dpE6 = 22.0 / 525
	dpE7 = -1.0 / 40

	dpD1 = -12715105075.0 / 11282082432
	dpD3 = 87487479700.0 / 32700410799
	dpD4 = -10690763975.0 / 1880347072
	dpD5 = 701980252875.0 / 199316789632
	dpD6 = -1453857185.0 / 822651844
	dpD7 = 69997945.0 / 29380423
)

type dopri struct {
	k1, k2, k3, k4, k5, k6, k7 []float64
	ytmp, ynew, yerr           []float64
	r1, r2, r3, r4, r5         []float64
}

func (d *dopri) init(n int) {
	buf := make([]float64, 15*n)
	sl := func(i int) []float64 { return buf[i*n : (i+1)*n : (i+1)*n] }
	d.k1, d.k2, d.k3, d.k4, d.k5, d.k6, d.k7 = sl(0), sl(1), sl(2), sl(3), sl(4), sl(5), sl(6)
	d.ytmp, d.ynew, d.yerr = sl(7), sl(8), sl(9)
	d.r1, d.r2, d.r3, d.r4, d.r5 = sl(10), sl(11), sl(12), sl(13), sl(14)
}

// run integrates from ta to tb. With detect set, it returns the time at
// which stiffness was detected (y then holds the state there), else -1.
func (d *dopri) run(s *solver, ta, tb float64, y []float64, times []float64, next int, out [][]float64, detect bool) (int, float64, error) {
	t := ta
	s.f(t, y, d.k1)
	step := s.initialStep(t, tb, y, d.k1, d.ytmp, d.k2, 4)
	var nonStiff, stiff int
	for {
		if s.stats.Steps+s.stats.Rejected >= s.o.MaxSteps {
			return next, -1, fmt.Errorf("ode: dopri5 at t=%g: %w (%d)", t, ErrMaxSteps, s.o.MaxSteps)
		}
		if s.o.MaxStep > 0 && step > s.o.MaxStep {
			step = s.o.MaxStep
		}
		last := false
		if t+1.01*step >= tb {
			step, last = tb-t, true
		}
		if step <= 1e-14*math.Max(1, math.Abs(t)) {
			return next, -1, fmt.Errorf("ode: dopri5 at t=%g, h=%g: %w", t, step, ErrStepTooSmall)
		}
		hh := step
		n := len(y)
		for i := 0; i < n; i++ {
			d.ytmp[i] = y[i] + hh*dpA21*d.k1[i]
		}
		s.f(t+dpC2*hh, d.ytmp, d.k2)
		for i := 0; i < n; i++ {
			d.ytmp[i] = y[i] + hh*(dpA31*d.k1[i]+dpA32*d.k2[i])
		}
		s.f(t+dpC3*hh, d.ytmp, d.k3)
		for i := 0; i < n; i++ {
			d.ytmp[i] = y[i] + hh*(dpA41*d.k1[i]+dpA42*d.k2[i]+dpA43*d.k3[i])
		}
		s.f(t+dpC4*hh, d.ytmp, d.k4)
		for i := 0; i < n; i++ {
			d.ytmp[i] = y[i] + hh*(dpA51*d.k1[i]+dpA52*d.k2[i]+dpA53*d.k3[i]+dpA54*d.k4[i])
		}
		s.f(t+dpC5*hh, d.ytmp, d.k5)
		for i := 0; i < n; i++ {
			d.ytmp[i] = y[i] + hh*(dpA61*d.k1[i]+dpA62*d.k2[i]+dpA63*d.k3[i]+dpA64*d.k4[i]+dpA65*d.k5[i])
		}
		tnew := t + hh
		if last {
			tnew = tb
		}
		s.f(tnew, d.ytmp, d.k6)
		for i := 0; i < n; i++ {
			d.ynew[i] = y[i] + hh*(dpA71*d.k1[i]+dpA73*d.k3[i]+dpA74*d.k4[i]+dpA75*d.k5[i]+dpA76*d.k6[i])
		}
		s.f(tnew, d.ynew, d.k7)
		for i := 0; i < n; i++ {
			d.yerr[i] = hh * (dpE1*d.k1[i] + dpE3*d.k3[i] + dpE4*d.k4[i] + dpE5*d.k5[i] + dpE6*d.k6[i] + dpE7*d.k7[i])
		}
		e := s.errNorm(d.yerr, y, d.ynew)
		if math.IsNaN(e) || !finite(d.ynew) {
			e = math.Inf(1)
		}
		if e > 1 {
			s.stats.Rejected++
			step = nextStep(hh, e, 4, false)
			continue
		}
		s.stats.Steps++
		if next < len(times) && times[next] <= tnew && times[next] < tb {
			d.dense(y, hh)
			next = emitDense(times, next, out, tnew, tb, func(tt float64, dst []float64) {
				th := (tt - t) / hh
				th1 := 1 - th
				for i := range dst {
					dst[i] = d.r1[i] + th*(d.r2[i]+th1*(d.r3[i]+th*(d.r4[i]+th1*d.r5[i])))
				}
			})
		}
		// Stiffness detection (after Hairer, Nørsett & Wanner I, IV.2): estimate
		// h·|λ| from the last two stages, which share the same time.
		if detect {
			var num, den float64
			for i := 0; i < n; i++ {
				a := d.k7[i] - d.k6[i]
				b := d.ynew[i] - d.ytmp[i]
				num += a * a
				den += b * b
			}
			if den > 0 && hh*math.Sqrt(num/den) > stiffThreshold {
				nonStiff = 0
				stiff++
				if stiff >= 15 && !last {
					copy(y, d.ynew)
					s.h = nextStep(hh, e, 4, true)
					return next, tnew, nil
				}
			} else {
				nonStiff++
				if nonStiff >= 6 {
					stiff = 0
				}
			}
		}
		copy(y, d.ynew)
		copy(d.k1, d.k7)
		t = tnew
		if last {
			return next, -1, nil
		}
		step = nextStep(hh, e, 4, true)
	}
}

// dense prepares the continuous extension for the step just accepted from
// y (old state, d.ynew new state) with size h.
func (d *dopri) dense(y []float64, h float64) {
	for i := range y {
		diff := d.ynew[i] - y[i]
		bspl := h*d.k1[i] - diff
		d.r1[i] = y[i]
		d.r2[i] = diff
		d.r3[i] = bspl
		d.r4[i] = diff - h*d.k7[i] - bspl
		d.r5[i] = h * (dpD1*d.k1[i] + dpD3*d.k3[i] + dpD4*d.k4[i] + dpD5*d.k5[i] + dpD6*d.k6[i] + dpD7*d.k7[i])
	}
}

// stiffThreshold is the estimated h·|λ| above which a step counts as limited
// by stability rather than accuracy. DOPRI5's real stability boundary is
// about 3.3; Hairer's code uses 3.25, but with the step-size controller
// oscillating just below the boundary 2.4 detects stiffness sooner (15
// such steps in a row switch the method).
const stiffThreshold = 2.4
