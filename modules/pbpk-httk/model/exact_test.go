package model

import (
	"math"
	"testing"

	"toxgate/sdk/ode"
)

// The exact (matrix exponential) solution agrees with a tightly toleranced
// RODAS4 integration of the same system.
func TestExactSolutionMatchesTightODE(t *testing.T) {
	for _, in := range []Input{bpa(15), {ChemName: "Caffeine", Species: "rat", DailyDose: f(3), DosesPerDay: f(3), Days: f(4), TSteps: 4}} {
		out, err := Simulate(in)
		if err != nil {
			t.Fatal(err)
		}
		tb, _ := loadTables()
		c, _ := tb.lookup(in.ChemName)
		sp, _ := in.Validate()
		p, err := tb.parameterize(c, sp, false)
		if err != nil {
			t.Fatal(err)
		}
		sys := newSystem(p)
		var boluses []ode.Bolus
		for _, td := range out.Dosing.DoseTimesDays {
			boluses = append(boluses, ode.Bolus{Time: td, State: sGutlumen, Amount: out.Dosing.AbsorbedUmolPerDose})
		}
		ts := out.TimeSeries
		sol, err := ode.Solve(ode.Problem{Func: sys.deriv, Jacobian: sys.jacobian, Y0: make([]float64, nStates), Boluses: boluses},
			ts.Time, ode.WithMethod(ode.Rosenbrock), ode.WithTolerances(1e-11, 1e-14), ode.WithConstantJacobian(), ode.WithAutonomous(), ode.WithMaxSteps(1e7))
		if err != nil {
			t.Fatal(err)
		}
		var worst float64
		for k, y := range sol.Y {
			worst = math.Max(worst, math.Abs(y[sVen]/sys.vven/sys.r-ts.Cplasma[k])/out.Summary.CmaxUM)
		}
		if worst > 1e-9 {
			t.Errorf("%s: max |exact − RODAS4(1e-11)| / Cmax = %.2g", in.ChemName, worst)
		}
		t.Logf("%s: max |exact − RODAS4(1e-11)| / Cmax = %.2g", in.ChemName, worst)
	}
}
