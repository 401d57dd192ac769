package ode

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Func computes the derivative dy/dt at time t into dydt. It must not
// retain y or dydt, and must not modify y.
type Func func(t float64, y, dydt []float64)

// Jacobian computes the Jacobian matrix ∂f/∂y at (t, y) into jac, stored
// row-major: jac[i*n+j] = ∂f_i/∂y_j for a system of n states.
type Jacobian func(t float64, y []float64, jac []float64)

// LinearSolver lets a model solve the linear systems of the Rosenbrock
// method itself, using the structure of its Jacobian (a compartment model's
// Jacobian is mostly zeros with a known pattern): set Problem.Linear. The
// solver then calls Jacobian where it would evaluate the Jacobian, Factor
// once per step attempt and Solve six times per attempt, instead of
// building the dense n×n matrix and its LU factors with partial pivoting.
type LinearSolver interface {
	// Jacobian evaluates and keeps J = ∂f/∂y at (t, y), in any form.
	Jacobian(t float64, y []float64)
	// Factor prepares solves of (c·I − J)·x = b with the last Jacobian
	// (c = 1/(γh) > 0). An error (such as ErrSingular) rejects the step,
	// which is retried with half the step size.
	Factor(c float64) error
	// Solve overwrites b with the solution x of (c·I − J)·x = b.
	Solve(b []float64)
}

// Method selects the integration scheme.
type Method int

const (
	// Auto starts with DormandPrince and switches to Rosenbrock for the
	// rest of a dosing interval when it detects stiffness (as LSODA does
	// between Adams and BDF).
	Auto Method = iota
	// DormandPrince is the explicit adaptive Runge–Kutta 5(4) pair of
	// Dormand and Prince (1980) with Hairer's 4th-order dense output. Best
	// for non-stiff problems.
	DormandPrince
	// Rosenbrock is RODAS4 (Hairer & Wanner 1996): a 6-stage, L-stable,
	// stiffly accurate linearly implicit method of order 4(3) with dense
	// output. Use it for stiff problems (fast and slow rates together).
	Rosenbrock
)

// String names the method.
func (m Method) String() string {
	switch m {
	case Auto:
		return "auto"
	case DormandPrince:
		return "dopri5"
	case Rosenbrock:
		return "rodas4"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Bolus adds Amount to state State at time Time (an instantaneous dose).
type Bolus struct {
	Time   float64
	State  int
	Amount float64
}

// Infusion adds a constant Rate (amount per unit time) to the derivative of
// state State from Start (inclusive) to Stop (exclusive).
type Infusion struct {
	Start, Stop float64
	State       int
	Rate        float64
}

// Event is a general discontinuity: Apply may change the state in place at
// time Time (for example to empty a compartment or reset a counter).
type Event struct {
	Time  float64
	Apply func(t float64, y []float64)
}

// Problem is an initial-value problem with optional dosing.
//
// The solver stops exactly at every bolus, infusion start and stop and event
// time, applies the change and restarts, so that no step straddles a
// discontinuity. Several changes at the same time are applied in the order:
// events, then boluses.
type Problem struct {
	// Func is the right-hand side; required.
	Func Func
	// Jacobian is optional. Without it the Rosenbrock method approximates
	// the Jacobian by forward differences (n extra Func calls per step).
	Jacobian Jacobian
	// Linear is optional. When set, the Rosenbrock method evaluates the
	// Jacobian and solves its linear systems through it (Jacobian is then
	// not used); see LinearSolver.
	Linear LinearSolver
	// T0 and Y0 are the initial time and state; Y0 is not modified.
	T0 float64
	Y0 []float64

	Boluses   []Bolus
	Infusions []Infusion
	Events    []Event
}

// Options tunes the solver. The zero value is not meant to be used directly:
// start from DefaultOptions or pass functional options to Solve.
type Options struct {
	Method Method
	// RelTol and AbsTol are the local error tolerances: each component's
	// error is scaled by AbsTol + RelTol·|y_i|.
	RelTol, AbsTol float64
	// AbsTolVec, when non-nil, gives a per-component absolute tolerance and
	// overrides AbsTol.
	AbsTolVec []float64
	// InitialStep is the first step size; 0 chooses it automatically.
	InitialStep float64
	// MaxStep bounds the step size; 0 means no bound.
	MaxStep float64
	// MaxSteps caps the number of attempted steps over the whole solve.
	MaxSteps int
	// ConstantJacobian declares the system linear with a constant
	// Jacobian: it is computed once per Solve instead of once per step.
	ConstantJacobian bool
	// Autonomous declares that Func does not depend on t explicitly (the
	// Rosenbrock method then skips estimating ∂f/∂t).
	Autonomous bool
}

// DefaultOptions returns the defaults: Auto method, RelTol 1e-6, AbsTol
// 1e-10, automatic initial step, no step bound, at most 100000 steps.
func DefaultOptions() Options {
	return Options{Method: Auto, RelTol: 1e-6, AbsTol: 1e-10, MaxSteps: 100000}
}

// Option modifies Options.
type Option func(*Options)

// WithMethod selects the integration method.
func WithMethod(m Method) Option { return func(o *Options) { o.Method = m } }

// WithTolerances sets the relative and absolute tolerances.
func WithTolerances(rel, abs float64) Option {
	return func(o *Options) { o.RelTol, o.AbsTol = rel, abs }
}

// WithAbsTolVec sets per-component absolute tolerances.
func WithAbsTolVec(abs []float64) Option { return func(o *Options) { o.AbsTolVec = abs } }

// WithInitialStep sets the first step size.
func WithInitialStep(h float64) Option { return func(o *Options) { o.InitialStep = h } }

// WithMaxStep bounds the step size (useful to not step over short features).
func WithMaxStep(h float64) Option { return func(o *Options) { o.MaxStep = h } }

// WithMaxSteps caps the total number of attempted steps.
func WithMaxSteps(n int) Option { return func(o *Options) { o.MaxSteps = n } }

// WithConstantJacobian declares the Jacobian constant (linear systems).
func WithConstantJacobian() Option { return func(o *Options) { o.ConstantJacobian = true } }

// WithAutonomous declares that Func does not depend on t explicitly.
func WithAutonomous() Option { return func(o *Options) { o.Autonomous = true } }

// WithOptions replaces all options at once.
func WithOptions(opts Options) Option { return func(o *Options) { *o = opts } }

// Stats counts the work done by a solve.
type Stats struct {
	Steps     int // accepted steps
	Rejected  int // rejected steps
	FuncEvals int // calls of Func (including Jacobian differences)
	JacEvals  int // Jacobian evaluations (analytic or numeric)
	LUDecomps int // LU factorizations
	Switches  int // method switches made by Auto
}

// Solution holds the state at the requested output times.
type Solution struct {
	// T are the output times, as requested.
	T []float64
	// Y[k] is the state at T[k]; at a dosing time it is the state after
	// the dose.
	Y [][]float64
	// Stats reports the work done.
	Stats Stats
}

// Component returns the time course of state i.
func (s *Solution) Component(i int) []float64 {
	out := make([]float64, len(s.Y))
	for k, y := range s.Y {
		out[k] = y[i]
	}
	return out
}

// Errors returned by Solve (wrapped with context).
var (
	ErrMaxSteps     = errors.New("ode: maximum number of steps reached")
	ErrStepTooSmall = errors.New("ode: step size became too small")
	ErrSingular     = errors.New("ode: singular iteration matrix")
	ErrNonFinite    = errors.New("ode: non-finite state")
)

// Solve integrates p and returns the state at each of the output times,
// which must be non-decreasing and not earlier than p.T0.
func Solve(p Problem, times []float64, opts ...Option) (*Solution, error) {
	o := DefaultOptions()
	for _, f := range opts {
		f(&o)
	}
	if err := validate(p, times, o); err != nil {
		return nil, err
	}
	n := len(p.Y0)
	s := newSolver(p, o)
	sol := &Solution{T: append([]float64(nil), times...), Y: make([][]float64, len(times))}
	backing := make([]float64, n*len(times))
	for k := range sol.Y {
		sol.Y[k] = backing[k*n : (k+1)*n : (k+1)*n]
	}
	y := append([]float64(nil), p.Y0...)
	t := p.T0
	tEnd := p.T0
	if len(times) > 0 {
		tEnd = times[len(times)-1]
	}
	breaks := s.breakpoints(tEnd)
	next := 0 // next output index
	for {
		// Apply discontinuities at t, then emit outputs at t.
		s.applyAt(t, y)
		for next < len(times) && times[next] <= t {
			copy(sol.Y[next], y)
			next++
		}
		if next >= len(times) {
			break
		}
		// Next segment end: next breakpoint after t, or tEnd.
		tb := tEnd
		for len(breaks) > 0 && breaks[0] <= t {
			breaks = breaks[1:]
		}
		if len(breaks) > 0 && breaks[0] < tb {
			tb = breaks[0]
		}
		s.setInfusions(t, tb)
		var err error
		next, err = s.segment(t, tb, y, times, next, sol.Y)
		sol.Stats = s.stats
		if err != nil {
			return sol, err
		}
		t = tb
	}
	sol.Stats = s.stats
	return sol, nil
}

func validate(p Problem, times []float64, o Options) error {
	n := len(p.Y0)
	switch {
	case p.Func == nil:
		return errors.New("ode: Problem.Func is nil")
	case n == 0:
		return errors.New("ode: Problem.Y0 is empty")
	case !(o.RelTol > 0) || o.AbsTol < 0 || (o.AbsTol == 0 && o.AbsTolVec == nil):
		return fmt.Errorf("ode: invalid tolerances rel=%g abs=%g", o.RelTol, o.AbsTol)
	case o.AbsTolVec != nil && len(o.AbsTolVec) != n:
		return fmt.Errorf("ode: AbsTolVec has %d entries for %d states", len(o.AbsTolVec), n)
	case o.MaxSteps <= 0:
		return fmt.Errorf("ode: MaxSteps must be positive, got %d", o.MaxSteps)
	case o.Method < Auto || o.Method > Rosenbrock:
		return fmt.Errorf("ode: unknown method %d", int(o.Method))
	}
	for _, v := range p.Y0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("ode: initial state: %w", ErrNonFinite)
		}
	}
	for k, t := range times {
		if math.IsNaN(t) || t < p.T0 || (k > 0 && t < times[k-1]) {
			return fmt.Errorf("ode: output time %d (%g) out of order or before T0 %g", k, t, p.T0)
		}
	}
	for i, b := range p.Boluses {
		if b.State < 0 || b.State >= n {
			return fmt.Errorf("ode: bolus %d: state %d out of range [0,%d)", i, b.State, n)
		}
	}
	for i, in := range p.Infusions {
		if in.State < 0 || in.State >= n {
			return fmt.Errorf("ode: infusion %d: state %d out of range [0,%d)", i, in.State, n)
		}
		if !(in.Stop >= in.Start) {
			return fmt.Errorf("ode: infusion %d: stop %g before start %g", i, in.Stop, in.Start)
		}
	}
	for i, e := range p.Events {
		if e.Apply == nil {
			return fmt.Errorf("ode: event %d has no Apply function", i)
		}
	}
	return nil
}

// solver holds the work arrays shared by the methods.
type solver struct {
	p      Problem
	o      Options
	n      int
	stats  Stats
	rate   []float64 // infusion rates active in the current segment
	anyIn  bool
	done   []bool // boluses/events already applied
	evDone []bool

	dp dopri
	rb rodas
	h  float64 // step-size suggestion carried within a segment
}

func newSolver(p Problem, o Options) *solver {
	n := len(p.Y0)
	s := &solver{p: p, o: o, n: n, rate: make([]float64, n),
		done: make([]bool, len(p.Boluses)), evDone: make([]bool, len(p.Events))}
	s.dp.init(n)
	s.rb.init(n)
	return s
}

func (s *solver) breakpoints(tEnd float64) []float64 {
	var b []float64
	add := func(t float64) {
		if t > s.p.T0 && t < tEnd {
			b = append(b, t)
		}
	}
	for _, x := range s.p.Boluses {
		add(x.Time)
	}
	for _, x := range s.p.Events {
		add(x.Time)
	}
	for _, x := range s.p.Infusions {
		add(x.Start)
		add(x.Stop)
	}
	sort.Float64s(b)
	return b
}

// applyAt applies events and boluses scheduled at time t (not yet applied).
func (s *solver) applyAt(t float64, y []float64) {
	for i, e := range s.p.Events {
		if !s.evDone[i] && e.Time <= t {
			e.Apply(t, y)
			s.evDone[i] = true
		}
	}
	for i, b := range s.p.Boluses {
		if !s.done[i] && b.Time <= t {
			y[b.State] += b.Amount
			s.done[i] = true
		}
	}
}

// setInfusions computes the infusion rates active over [ta, tb).
func (s *solver) setInfusions(ta, tb float64) {
	for i := range s.rate {
		s.rate[i] = 0
	}
	s.anyIn = false
	mid := ta + 0.5*(tb-ta)
	for _, in := range s.p.Infusions {
		if in.Start <= mid && mid < in.Stop {
			s.rate[in.State] += in.Rate
			s.anyIn = true
		}
	}
}

// f evaluates the right-hand side plus active infusions.
func (s *solver) f(t float64, y, dy []float64) {
	s.stats.FuncEvals++
	s.p.Func(t, y, dy)
	if s.anyIn {
		for i, r := range s.rate {
			dy[i] += r
		}
	}
}

// errNorm is the RMS norm of e scaled by atol + rtol·max(|y0|,|y1|).
func (s *solver) errNorm(e, y0, y1 []float64) float64 {
	var sum float64
	y0, y1 = y0[:len(e)], y1[:len(e)]
	rtol := s.o.RelTol
	if atol := s.o.AbsTolVec; atol != nil {
		atol = atol[:len(e)]
		for i, ei := range e {
			r := ei / (atol[i] + rtol*math.Max(math.Abs(y0[i]), math.Abs(y1[i])))
			sum += r * r
		}
	} else {
		for i, ei := range e {
			r := ei / (s.o.AbsTol + rtol*math.Max(math.Abs(y0[i]), math.Abs(y1[i])))
			sum += r * r
		}
	}
	return math.Sqrt(sum / float64(len(e)))
}

// initialStep follows Hairer, Nørsett & Wanner (1993), II.4.
func (s *solver) initialStep(t, tb float64, y, f0, tmp, f1 []float64, order int) float64 {
	if s.o.InitialStep > 0 {
		return math.Min(s.o.InitialStep, tb-t)
	}
	var d0, d1 float64
	for i := range y {
		sc := s.o.AbsTol
		if s.o.AbsTolVec != nil {
			sc = s.o.AbsTolVec[i]
		}
		sc += s.o.RelTol * math.Abs(y[i])
		d0 += (y[i] / sc) * (y[i] / sc)
		d1 += (f0[i] / sc) * (f0[i] / sc)
	}
	nf := float64(len(y))
	d0, d1 = math.Sqrt(d0/nf), math.Sqrt(d1/nf)
	h0 := 1e-6
	if d0 > 1e-5 && d1 > 1e-5 {
		h0 = 0.01 * d0 / d1
	}
	h0 = math.Min(h0, tb-t)
	for i := range y {
		tmp[i] = y[i] + h0*f0[i]
	}
	s.f(t+h0, tmp, f1)
	var d2 float64
	for i := range y {
		sc := s.o.AbsTol
		if s.o.AbsTolVec != nil {
			sc = s.o.AbsTolVec[i]
		}
		sc += s.o.RelTol * math.Abs(y[i])
		r := (f1[i] - f0[i]) / sc
		d2 += r * r
	}
	d2 = math.Sqrt(d2/nf) / h0
	var h1 float64
	if m := math.Max(d1, d2); m <= 1e-15 {
		h1 = math.Max(1e-6, h0*1e-3)
	} else {
		h1 = math.Pow(0.01/m, 1/float64(order+1))
	}
	h := math.Min(100*h0, h1)
	if s.o.MaxStep > 0 {
		h = math.Min(h, s.o.MaxStep)
	}
	return math.Min(h, tb-t)
}

// segment integrates y from ta to tb (no discontinuity inside), writing the
// outputs with times in (ta, tb) and returning the next output index.
// Outputs at exactly tb are left to the caller (after the discontinuity).
func (s *solver) segment(ta, tb float64, y []float64, times []float64, next int, out [][]float64) (int, error) {
	if tb <= ta {
		return next, nil
	}
	method := s.o.Method
	switch method {
	case Rosenbrock:
		return s.rb.run(s, ta, tb, y, times, next, out)
	default:
		next, stiffAt, err := s.dp.run(s, ta, tb, y, times, next, out, method == Auto)
		if err != nil || stiffAt < 0 {
			return next, err
		}
		s.stats.Switches++
		return s.rb.run(s, stiffAt, tb, y, times, next, out)
	}
}

// emitDense writes outputs in (told, tnew] (strictly below tb) using interp.
func emitDense(times []float64, next int, out [][]float64, tnew, tb float64, interp func(t float64, dst []float64)) int {
	for next < len(times) && times[next] <= tnew && times[next] < tb {
		interp(times[next], out[next])
		next++
	}
	return next
}

func finite(y []float64) bool {
	for _, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// nextStep proposes the next step size from the error norm for a method
// whose error estimate has order q (h·err^(-1/(q+1)) with safety factors).
func nextStep(h, err float64, q int, accepted bool) float64 {
	const safety, facMin, facMax = 0.9, 0.2, 6.0
	var fac float64
	if err == 0 {
		fac = facMax
	} else {
		fac = safety * math.Pow(err, -1/float64(q+1))
		fac = math.Max(facMin, math.Min(facMax, fac))
	}
	if !accepted {
		fac = math.Min(1, fac)
	}
	return h * fac
}
