package model

import "toxgate/sdk/ode"

func SolveOnly(in Input) {
	tinf, days := 0.05, *in.Days
	ph := newPhysiology(*in.Age, *in.Weight, *in.Height)
	doseUmol := *in.DoseMg * ph.BSA / MW * 1000
	times := outputTimes(tinf, days*24)
	prob := ode.Problem{Func: ph.deriv, Y0: make([]float64, nStates),
		Infusions: []ode.Infusion{{Start: 0, Stop: tinf, State: sVen, Rate: doseUmol / tinf}}}
	atol := make([]float64, nStates)
	for i := range atol {
		atol[i] = 1e-9 * doseUmol
	}
	ode.Solve(prob, times, ode.WithMethod(ode.Rosenbrock), ode.WithTolerances(1e-7, 1e-12),
		ode.WithAbsTolVec(atol), ode.WithAutonomous())
}
