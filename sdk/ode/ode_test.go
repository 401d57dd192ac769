package ode

import (
	"errors"
	"math"
	"testing"
)

func linspace(a, b float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = a + (b-a)*float64(i)/float64(n-1)
	}
	return out
}

func relErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
}

var methods = []Method{DormandPrince, Rosenbrock, Auto}

// y' = -2ty, y(0) = 1: y = exp(-t²). Non-autonomous, exercises ∂f/∂t.
func TestGaussianExactSolution(t *testing.T) {
	for _, m := range methods {
		t.Run(m.String(), func(t *testing.T) {
			p := Problem{Func: func(tt float64, y, dy []float64) { dy[0] = -2 * tt * y[0] }, Y0: []float64{1}}
			times := linspace(0, 3, 61) // dense output between steps
			sol, err := Solve(p, times, WithMethod(m), WithTolerances(1e-8, 1e-12))
			if err != nil {
				t.Fatal(err)
			}
			for k, tt := range times {
				want := math.Exp(-tt * tt)
				if d := math.Abs(sol.Y[k][0] - want); d > 1e-7*math.Max(want, 1e-3) {
					t.Errorf("t=%g: got %.12g want %.12g (diff %.2g)", tt, sol.Y[k][0], want, d)
				}
			}
		})
	}
}

// Harmonic oscillator: y1 = cos t, y2 = -sin t over several periods.
func TestOscillatorDenseOutput(t *testing.T) {
	for _, m := range methods {
		t.Run(m.String(), func(t *testing.T) {
			p := Problem{Func: func(_ float64, y, dy []float64) { dy[0], dy[1] = y[1], -y[0] }, Y0: []float64{1, 0}}
			times := linspace(0, 20, 401)
			sol, err := Solve(p, times, WithMethod(m), WithTolerances(1e-9, 1e-12), WithAutonomous())
			if err != nil {
				t.Fatal(err)
			}
			for k, tt := range times {
				if d := math.Abs(sol.Y[k][0] - math.Cos(tt)); d > 1e-6 {
					t.Fatalf("t=%g: y1 %.10g want %.10g", tt, sol.Y[k][0], math.Cos(tt))
				}
				if d := math.Abs(sol.Y[k][1] + math.Sin(tt)); d > 1e-6 {
					t.Fatalf("t=%g: y2 %.10g want %.10g", tt, sol.Y[k][1], -math.Sin(tt))
				}
			}
		})
	}
}

// Tightening the tolerance must reduce the global error (convergence).
func TestErrorDecreasesWithTolerance(t *testing.T) {
	for _, m := range []Method{DormandPrince, Rosenbrock} {
		t.Run(m.String(), func(t *testing.T) {
			p := Problem{Func: func(_ float64, y, dy []float64) { dy[0] = -y[0] + math.Sin(y[0]) }, Y0: []float64{1}}
			// Reference with a very tight tolerance.
			ref, err := Solve(p, []float64{5}, WithMethod(DormandPrince), WithTolerances(1e-13, 1e-15))
			if err != nil {
				t.Fatal(err)
			}
			prev := math.Inf(1)
			for _, tol := range []float64{1e-4, 1e-6, 1e-8} {
				sol, err := Solve(p, []float64{5}, WithMethod(m), WithTolerances(tol, tol*1e-3))
				if err != nil {
					t.Fatal(err)
				}
				e := math.Abs(sol.Y[0][0] - ref.Y[0][0])
				if e >= prev {
					t.Errorf("tol %g: error %.3g did not decrease (previous %.3g)", tol, e, prev)
				}
				if e > 50*tol*math.Abs(ref.Y[0][0]) {
					t.Errorf("tol %g: error %.3g too large", tol, e)
				}
				prev = e
			}
		})
	}
}

func robertson() Problem {
	return Problem{
		Func: func(_ float64, y, dy []float64) {
			dy[0] = -0.04*y[0] + 1e4*y[1]*y[2]
			dy[2] = 3e7 * y[1] * y[1]
			dy[1] = -dy[0] - dy[2]
		},
		Jacobian: func(_ float64, y []float64, j []float64) {
			j[0], j[1], j[2] = -0.04, 1e4*y[2], 1e4*y[1]
			j[6], j[7], j[8] = 0, 6e7*y[1], 0
			j[3], j[4], j[5] = 0.04, -1e4*y[2]-6e7*y[1], -1e4*y[1]
		},
		Y0: []float64{1, 0, 0},
	}
}

// Robertson's stiff chemical kinetics (Hairer & Wanner II, IV.1). Reference
// values at t = 40 from Hairer & Wanner's test set: y1 = 0.7158270687,
// y2 = 9.185534764e-6, y3 = 0.2841637457.
func TestRobertsonStiff(t *testing.T) {
	want := []float64{0.7158270687193066, 9.185534764557e-6, 0.2841637457458}
	for _, tc := range []struct {
		name string
		m    Method
		jac  bool
	}{{"rodas4-analytic-jac", Rosenbrock, true}, {"rodas4-numeric-jac", Rosenbrock, false}, {"auto", Auto, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := robertson()
			if !tc.jac {
				p.Jacobian = nil
			}
			sol, err := Solve(p, []float64{0.4, 4, 40, 4e5}, WithMethod(tc.m),
				WithTolerances(1e-8, 1e-14), WithAutonomous())
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range want {
				if e := relErr(sol.Y[2][i], w); e > 1e-5 {
					t.Errorf("y%d(40) = %.10g, want %.10g (rel err %.2g)", i+1, sol.Y[2][i], w, e)
				}
			}
			for k, y := range sol.Y {
				if s := y[0] + y[1] + y[2]; math.Abs(s-1) > 1e-9 {
					t.Errorf("t=%g: mass %.15g != 1", sol.T[k], s)
				}
			}
			if sol.Stats.Steps > 2000 {
				t.Errorf("%d steps: the stiff solver should need few steps", sol.Stats.Steps)
			}
			if tc.m == Auto && sol.Stats.Switches == 0 {
				t.Errorf("auto did not switch to the stiff method")
			}
		})
	}
}

// An explicit method on a stiff problem hits the step cap; the error says so.
func TestMaxStepsError(t *testing.T) {
	_, err := Solve(robertson(), []float64{1e4}, WithMethod(DormandPrince), WithMaxSteps(500))
	if !errors.Is(err, ErrMaxSteps) {
		t.Fatalf("got %v, want ErrMaxSteps", err)
	}
}

// One compartment with first-order elimination k and repeated boluses D at
// t = 0, 1, 2: y(t) = Σ D·exp(-k(t - t_i)) over past doses. Outputs at dose
// times report the state after the dose.
func TestBolusDosing(t *testing.T) {
	const k, dose = 0.7, 5.0
	for _, m := range methods {
		t.Run(m.String(), func(t *testing.T) {
			p := Problem{
				Func:    func(_ float64, y, dy []float64) { dy[0] = -k * y[0] },
				Y0:      []float64{0},
				Boluses: []Bolus{{Time: 0, Amount: dose}, {Time: 1, Amount: dose}, {Time: 2, Amount: dose}},
			}
			times := linspace(0, 4, 41)
			sol, err := Solve(p, times, WithMethod(m), WithTolerances(1e-9, 1e-12))
			if err != nil {
				t.Fatal(err)
			}
			for kk, tt := range times {
				var want float64
				for _, td := range []float64{0, 1, 2} {
					if tt >= td-1e-12 {
						want += dose * math.Exp(-k*(tt-td))
					}
				}
				if e := relErr(sol.Y[kk][0], want); e > 1e-7 {
					t.Errorf("t=%g: %.10g want %.10g", tt, sol.Y[kk][0], want)
				}
			}
		})
	}
}

// Zero-order infusion of rate R from 1 to 3 into a compartment with
// elimination k: analytic rise to R/k and decay afterwards.
func TestInfusionStartStop(t *testing.T) {
	const k, rate = 1.3, 2.0
	exact := func(t float64) float64 {
		switch {
		case t <= 1:
			return 0
		case t <= 3:
			return rate / k * (1 - math.Exp(-k*(t-1)))
		default:
			return rate / k * (1 - math.Exp(-k*2)) * math.Exp(-k*(t-3))
		}
	}
	for _, m := range methods {
		t.Run(m.String(), func(t *testing.T) {
			p := Problem{
				Func:      func(_ float64, y, dy []float64) { dy[0], dy[1] = -k*y[0], k*y[0] },
				Y0:        []float64{0, 0},
				Infusions: []Infusion{{Start: 1, Stop: 3, State: 0, Rate: rate}},
			}
			times := linspace(0, 6, 25)
			sol, err := Solve(p, times, WithMethod(m), WithTolerances(1e-9, 1e-12))
			if err != nil {
				t.Fatal(err)
			}
			for kk, tt := range times {
				want := exact(tt)
				if d := math.Abs(sol.Y[kk][0] - want); d > 1e-8*math.Max(1, want) {
					t.Errorf("t=%g: %.10g want %.10g", tt, sol.Y[kk][0], want)
				}
				// Mass balance: amount in + amount eliminated = amount infused.
				infused := rate * math.Max(0, math.Min(tt, 3)-1)
				if d := math.Abs(sol.Y[kk][0] + sol.Y[kk][1] - infused); d > 1e-9*math.Max(1, infused) {
					t.Errorf("t=%g: mass balance off by %.3g", tt, d)
				}
			}
		})
	}
}

// A general event can reset a state.
func TestEventApplied(t *testing.T) {
	p := Problem{
		Func:   func(_ float64, y, dy []float64) { dy[0] = 1 },
		Y0:     []float64{0},
		Events: []Event{{Time: 2, Apply: func(_ float64, y []float64) { y[0] = 0 }}},
	}
	sol, err := Solve(p, []float64{1.5, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []float64{1.5, 0, 1} {
		if math.Abs(sol.Y[k][0]-want) > 1e-9 {
			t.Errorf("t=%g: got %g want %g", sol.T[k], sol.Y[k][0], want)
		}
	}
}

// A constant Jacobian is evaluated once for a linear system.
func TestConstantJacobian(t *testing.T) {
	calls := 0
	p := Problem{
		Func: func(_ float64, y, dy []float64) { dy[0], dy[1] = -1000*y[0]+y[1], -y[1] },
		Jacobian: func(_ float64, _ []float64, j []float64) {
			calls++
			j[0], j[1], j[2], j[3] = -1000, 1, 0, -1
		},
		Y0:      []float64{1, 1},
		Boluses: []Bolus{{Time: 1, State: 1, Amount: 1}},
	}
	sol, err := Solve(p, []float64{2}, WithMethod(Rosenbrock), WithConstantJacobian(), WithAutonomous())
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("Jacobian called %d times, want 1", calls)
	}
	// y2 = e^-2 + e^-1; y1 quasi-steady ≈ y2/999.
	y2 := math.Exp(-2) + math.Exp(-1)
	if e := relErr(sol.Y[0][1], y2); e > 1e-6 {
		t.Errorf("y2 = %.10g want %.10g", sol.Y[0][1], y2)
	}
}

func TestInvalidInput(t *testing.T) {
	f := func(_ float64, y, dy []float64) { dy[0] = -y[0] }
	cases := map[string]struct {
		p     Problem
		times []float64
		opts  []Option
	}{
		"nil func":      {Problem{Y0: []float64{1}}, []float64{1}, nil},
		"empty state":   {Problem{Func: f}, []float64{1}, nil},
		"times order":   {Problem{Func: f, Y0: []float64{1}}, []float64{2, 1}, nil},
		"before t0":     {Problem{Func: f, Y0: []float64{1}, T0: 1}, []float64{0}, nil},
		"bad tolerance": {Problem{Func: f, Y0: []float64{1}}, []float64{1}, []Option{WithTolerances(0, 1e-6)}},
		"bolus state":   {Problem{Func: f, Y0: []float64{1}, Boluses: []Bolus{{State: 3}}}, []float64{1}, nil},
		"nan state":     {Problem{Func: f, Y0: []float64{math.NaN()}}, []float64{1}, nil},
	}
	for name, c := range cases {
		if _, err := Solve(c.p, c.times, c.opts...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func BenchmarkRobertsonRodas4(b *testing.B) {
	p := robertson()
	times := []float64{0.4, 4, 40, 400, 4e3, 4e4, 4e5}
	for b.Loop() {
		if _, err := Solve(p, times, WithMethod(Rosenbrock), WithTolerances(1e-6, 1e-10), WithAutonomous()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOscillatorDopri5(b *testing.B) {
	p := Problem{Func: func(_ float64, y, dy []float64) { dy[0], dy[1] = y[1], -y[0] }, Y0: []float64{1, 0}}
	times := linspace(0, 20, 201)
	for b.Loop() {
		if _, err := Solve(p, times, WithMethod(DormandPrince)); err != nil {
			b.Fatal(err)
		}
	}
}
