// Package ode solves initial-value problems y' = f(t, y) for model authors:
// pharmacokinetic and other compartment models compiled to WebAssembly.
//
// Two methods are provided, plus automatic switching:
//
//   - DormandPrince: explicit Runge–Kutta 5(4) with 4th-order dense output,
//     for non-stiff problems.
//   - Rosenbrock: RODAS4, L-stable and stiffly accurate, order 4(3), for
//     stiff problems (PBPK models with fast blood flows and slow
//     elimination are typically stiff).
//   - Auto (the default): starts explicit and switches to RODAS4 for the rest
//     of a dosing interval once stiffness is detected.
//
// Output is returned at the requested times through dense output, so the
// step size is never constrained by the output grid. Doses are declared on
// the Problem (Bolus, Infusion, or a general Event); the solver stops exactly
// at each dosing time, applies the change and restarts, and the output at a
// dosing time is the state after the dose.
//
// Minimal use:
//
//	p := ode.Problem{
//		Func: func(t float64, y, dy []float64) { dy[0] = -k * y[0]; dy[1] = k * y[0] },
//		Y0:   []float64{0, 0},
//		Boluses:   []ode.Bolus{{Time: 0, State: 0, Amount: 100}},
//		Infusions: []ode.Infusion{{Start: 24, Stop: 25, State: 0, Rate: 50}},
//	}
//	sol, err := ode.Solve(p, times,
//		ode.WithMethod(ode.Rosenbrock), ode.WithTolerances(1e-8, 1e-12))
//	// sol.Y[k] is the state at times[k]; sol.Component(0) one time course.
//
// Options (functional; DefaultOptions gives RelTol 1e-6, AbsTol 1e-10 and a
// cap of 100000 steps): WithMethod, WithTolerances, WithAbsTolVec,
// WithInitialStep, WithMaxStep, WithMaxSteps, WithConstantJacobian (linear
// systems: Jacobian computed once), WithAutonomous (f does not depend on t:
// skips ∂f/∂t), WithOptions. A Jacobian may be supplied on the Problem;
// otherwise RODAS4 uses forward differences. A model that knows the
// structure of its Jacobian can instead supply a LinearSolver
// (Problem.Linear) that solves RODAS4's linear systems itself.
//
// Errors wrap ErrMaxSteps, ErrStepTooSmall, ErrSingular or ErrNonFinite;
// test them with errors.Is. Everything is pure Go without goroutines or I/O,
// and builds for GOOS=wasip1 GOARCH=wasm.
//
// References: J. R. Dormand and P. J. Prince, J. Comput. Appl. Math. 6
// (1980) 19–26; E. Hairer, S. P. Nørsett and G. Wanner, Solving Ordinary
// Differential Equations I (2nd ed., 1993); E. Hairer and G. Wanner, Solving
// Ordinary Differential Equations II (2nd ed., 1996), IV.7 (RODAS).
package ode
