package ode

import (
	"errors"
	"testing"
)

// cramer3 is a LinearSolver for 3 states: the Jacobian of a Problem, kept
// dense, and (c·I − J)·x = b solved by Cramer's rule.
type cramer3 struct {
	jac              func(t float64, y []float64, j []float64)
	j, w             [9]float64
	det              float64
	jacs, factorings int
}

func (c *cramer3) Jacobian(t float64, y []float64) { c.jac(t, y, c.j[:]); c.jacs++ }

func det3(m *[9]float64) float64 {
	return m[0]*(m[4]*m[8]-m[5]*m[7]) - m[1]*(m[3]*m[8]-m[5]*m[6]) + m[2]*(m[3]*m[7]-m[4]*m[6])
}

func (c *cramer3) Factor(s float64) error {
	c.factorings++
	for i, v := range c.j {
		c.w[i] = -v
	}
	c.w[0], c.w[4], c.w[8] = c.w[0]+s, c.w[4]+s, c.w[8]+s
	if c.det = det3(&c.w); c.det == 0 {
		return ErrSingular
	}
	return nil
}

func (c *cramer3) Solve(b []float64) {
	var x [3]float64
	for k := range 3 {
		m := c.w
		for i := range 3 {
			m[i*3+k] = b[i]
		}
		x[k] = det3(&m) / c.det
	}
	copy(b, x[:])
}

// Problem.Linear replaces the Jacobian and the dense LU: the same steps and
// the same solution (up to rounding) on Robertson's stiff problem.
func TestLinearSolverOption(t *testing.T) {
	times := []float64{0.4, 4, 40, 4e5}
	opts := []Option{WithMethod(Rosenbrock), WithTolerances(1e-8, 1e-12), WithAutonomous()}
	ref, err := Solve(robertson(), times, opts...)
	if err != nil {
		t.Fatal(err)
	}
	p := robertson()
	lin := &cramer3{jac: p.Jacobian}
	p.Jacobian = func(float64, []float64, []float64) { t.Fatal("Problem.Jacobian called with Problem.Linear set") }
	p.Linear = lin
	sol, err := Solve(p, times, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Stats.Steps != ref.Stats.Steps || lin.jacs != sol.Stats.JacEvals || lin.factorings != sol.Stats.LUDecomps {
		t.Errorf("stats %+v (Jacobians %d, factorings %d), dense LU %+v", sol.Stats, lin.jacs, lin.factorings, ref.Stats)
	}
	for k := range times {
		for i := range 3 {
			if d := sol.Y[k][i] - ref.Y[k][i]; d > 1e-9*ref.Y[k][i]+1e-15 || -d > 1e-9*ref.Y[k][i]+1e-15 {
				t.Errorf("t=%g y%d = %.12g, dense LU %.12g", times[k], i, sol.Y[k][i], ref.Y[k][i])
			}
		}
	}
	// A failing Factor rejects the step and halves it until the solve gives up.
	p.Linear = failing{}
	if _, err := Solve(p, times, opts...); !errors.Is(err, ErrStepTooSmall) {
		t.Errorf("always singular: %v, want ErrStepTooSmall", err)
	}
}

type failing struct{}

func (failing) Jacobian(float64, []float64) {}
func (failing) Factor(float64) error        { return ErrSingular }
func (failing) Solve([]float64)             {}
