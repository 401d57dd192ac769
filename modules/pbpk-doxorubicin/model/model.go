package model

import (
	"fmt"
	"math"

	"toxgate/sdk/ode"
)

// Name and Version identify the model.
const (
	Name    = "doxorubicin-pbpk"
	Version = "1.0.3"
	// MaxDays bounds the simulated duration.
	MaxDays = 28
)

// Input is the request of /pbpk/doxorubicin.
type Input struct {
	// DoseMg is the dose in mg per m² of body surface area.
	DoseMg *float64 `json:"dose_mg" desc:"dose per m² of body surface area (Du Bois), in (0, 150]" unit:"mg/m²" gt:"0" max:"150" example:"60"`
	// Age in years (18–100) sets cardiac output.
	Age *float64 `json:"age" desc:"age; sets cardiac output (adults)" unit:"years" min:"18" max:"100" example:"50"`
	// Weight in kg (30–250) sets organ volumes and BSA.
	Weight *float64 `json:"weight" desc:"body weight; sets organ volumes and body surface area" unit:"kg" min:"30" max:"250" example:"70"`
	// Height in cm (100–250) sets BSA.
	Height *float64 `json:"height" desc:"body height; sets body surface area" unit:"cm" min:"100" max:"250" example:"190"`
	// InfusionH is the intravenous infusion duration in hours (default 0.05 = 3 min).
	InfusionH *float64 `json:"infusion_h,omitempty" desc:"intravenous infusion duration, in (0, 24] (default 0.05 = 3 min)" unit:"h" gt:"0" max:"24"`
	// Days simulated (default 7, at most MaxDays).
	Days *float64 `json:"days,omitempty" desc:"simulated duration, in (0, 28] (default 7)" unit:"day" gt:"0" max:"28"`
}

// Series are the time courses (time in h; concentrations in ng/mL and µM).
type Series struct {
	TimeH []float64 `json:"time_h"`
	// Each entry maps a compartment to its concentration time course.
	NgPerML map[string][]float64 `json:"ng_per_mL"`
	UM      map[string][]float64 `json:"uM"`
}

// Summary holds the pharmacokinetic figures of plasma and heart.
type Summary struct {
	DoseMgTotal         float64 `json:"dose_mg_total"`
	DoseUmol            float64 `json:"dose_umol"`
	CmaxNgPerML         float64 `json:"plasma_Cmax_ng_per_mL"`
	TmaxH               float64 `json:"plasma_Tmax_h"`
	AUC0tMgHPerL        float64 `json:"plasma_AUC0_t_mg_h_per_L"`
	AUCInfMgHPerL       float64 `json:"plasma_AUC0_inf_mg_h_per_L"`
	TerminalHalfLifeH   float64 `json:"plasma_terminal_half_life_h"`
	ClearanceLPerH      float64 `json:"plasma_clearance_L_per_h"`
	HeartCmaxNgPerML    float64 `json:"heart_Cmax_ng_per_mL"`
	HeartAUCMgHPerL     float64 `json:"heart_AUC0_t_mg_h_per_L"`
	HeartDNABoundAUCMgH float64 `json:"heart_DNA_bound_AUC0_t_mg_h_per_L"`
	MassBalanceError    float64 `json:"mass_balance_relative_error"`
}

// Output is the response of /pbpk/doxorubicin.
type Output struct {
	Model      string            `json:"model"`
	Version    string            `json:"version"`
	Physiology *Physiology       `json:"physiology"`
	Summary    Summary           `json:"summary"`
	Series     Series            `json:"time_series"`
	Units      map[string]string `json:"units"`
	PlotSVG    string            `json:"plot_svg"`
}

// State indices.
const (
	sVen = iota
	sArt
	sTissue0 // first of nTissues tissue states
	sHeartEC = sTissue0 + nTissues
	sHeartIC = sHeartEC + 1
	sElimHep = sHeartIC + 1
	sElimRen = sElimHep + 1
	sAUCp    = sElimRen + 1 // ∫ Cplasma dt, µM·h
	sAUCh    = sAUCp + 1    // ∫ Cheart dt, µM·h
	sAUChb   = sAUCh + 1    // ∫ Cheart,DNA-bound dt, µM·h
	nStates  = sAUChb + 1
)

// deriv is the whole-body model: perfusion-limited tissues, portal
// drainage of gut and spleen into the liver, a heart with extracellular
// space and a permeability-limited intracellular space with DNA binding.
// Every tissue follows dA/dt = qa·C_art − qo·C_out − ke·A (C_out = g·A, the
// venous blood concentration leaving it), plus the portal inflow of the
// liver and the venous inflow of the lung (coefficients in rhsCoef).
func (ph *Physiology) deriv(_ float64, y, dy []float64) {
	y, dy = y[:nStates], dy[:nStates]
	c := &ph.rhs
	cart := y[sArt] * c.invArt // blood concentrations, µM
	cven := y[sVen] * c.invVen
	var vout [nTissues]float64 // venous blood concentration leaving each tissue
	toVen := 0.0
	for i := range nTissues {
		a := y[sTissue0+i]
		vout[i] = a * c.g[i]
		dy[sTissue0+i] = c.qa[i]*cart - c.qo[i]*vout[i] - c.ke[i]*a
		toVen += c.qv[i] * vout[i]
	}
	dy[sTissue0+tLiver] += ph.q[tGut]*vout[tGut] + ph.q[tSpleen]*vout[tSpleen]
	dy[sTissue0+tLung] += ph.CardiacOutput * cven
	dy[sElimHep] = c.ke[tLiver] * y[sTissue0+tLiver]
	dy[sElimRen] = c.ke[tKidney] * y[sTissue0+tKidney]
	// Heart: flux = PS·(fu·C_ec/Kpec − C_free/Kpp).
	hout := y[sHeartEC] * c.hg
	ct := y[sHeartIC] * c.invIC
	ce := freeIntracellular(ct)
	flux := c.fEC*y[sHeartEC] - c.psKpp*ce
	dy[sHeartEC] = ph.qHeart*(cart-hout) - flux
	dy[sHeartIC] = flux
	toVen += ph.qHeart * hout
	dy[sVen] = toVen - ph.CardiacOutput*cven
	dy[sArt] = ph.CardiacOutput * (vout[tLung] - cart)
	dy[sAUCp] = cven / BP
	dy[sAUCh] = (y[sHeartEC] + y[sHeartIC]) * c.invVh
	dy[sAUChb] = (ct - ce) * ph.vHeartIC * c.invVh
}

// jacobian is ∂deriv/∂y (row-major, nStates×nStates): every term of deriv is
// linear in the state except the DNA binding of the heart cells, whose slope
// is dCe/dCt. It replaces the solver's finite differences (20 extra deriv
// calls per step).
func (ph *Physiology) jacobian(_ float64, y, jac []float64) {
	clear(jac)
	set := func(i, j int, v float64) { jac[i*nStates+j] += v }
	var g [nTissues]float64 // ∂vout/∂y of each tissue
	for i := 0; i < nTissues; i++ {
		g[i] = 1 / ph.v[i] / kp[i] * BP
	}
	co := ph.CardiacOutput
	dcart, dcven := 1/ph.vart, 1/ph.vven
	for i := 0; i < nTissues; i++ {
		ti := sTissue0 + i
		switch i {
		case tLung:
			set(ti, sVen, co*dcven)
			set(ti, ti, -co*g[i])
		case tLiver:
			qtot := ph.q[tLiver] + ph.q[tGut] + ph.q[tSpleen]
			ke := CLHepatic * Fup / BP / ph.v[i]
			set(ti, sArt, ph.q[tLiver]*dcart)
			set(ti, sTissue0+tGut, ph.q[tGut]*g[tGut])
			set(ti, sTissue0+tSpleen, ph.q[tSpleen]*g[tSpleen])
			set(ti, ti, -qtot*g[i]-ke)
			set(sElimHep, ti, ke)
			set(sVen, ti, qtot*g[i])
		case tGut, tSpleen:
			set(ti, sArt, ph.q[i]*dcart)
			set(ti, ti, -ph.q[i]*g[i])
		case tKidney:
			ke := CLRenal * Fup / BP / ph.v[i]
			set(ti, sArt, ph.q[i]*dcart)
			set(ti, ti, -ph.q[i]*g[i]-ke)
			set(sElimRen, ti, ke)
			set(sVen, ti, ph.q[i]*g[i])
		default:
			set(ti, sArt, ph.q[i]*dcart)
			set(ti, ti, -ph.q[i]*g[i])
			set(sVen, ti, ph.q[i]*g[i])
		}
	}
	// Heart: flux = ps·(Fup·cec/kpec − Ce(ct)/Kpp).
	hg := BP / (ph.vHeartEC * ph.kpec) // ∂hout/∂y[sHeartEC]
	dce := freeIntracellularSlope(y[sHeartIC] / ph.vHeartIC)
	fEC := ph.ps * Fup / (ph.vHeartEC * ph.kpec)
	fIC := -ph.ps / kpp * dce / ph.vHeartIC
	set(sHeartEC, sArt, ph.qHeart*dcart)
	set(sHeartEC, sHeartEC, -ph.qHeart*hg-fEC)
	set(sHeartEC, sHeartIC, -fIC)
	set(sHeartIC, sHeartEC, fEC)
	set(sHeartIC, sHeartIC, fIC)
	set(sVen, sHeartEC, ph.qHeart*hg)
	set(sVen, sVen, -co*dcven)
	set(sArt, sTissue0+tLung, co*g[tLung])
	set(sArt, sArt, -co*dcart)
	set(sAUCp, sVen, dcven/BP)
	vh := ph.vHeartEC + ph.vHeartIC
	set(sAUCh, sHeartEC, 1/vh)
	set(sAUCh, sHeartIC, 1/vh)
	set(sAUChb, sHeartIC, (1-dce)/vh)
}

func validate(in Input) error {
	req := []struct {
		name   string
		v      *float64
		lo, hi float64
		unit   string
	}{{"dose_mg", in.DoseMg, 0, 150, "mg/m²"}, {"age", in.Age, 18, 100, "years"},
		{"weight", in.Weight, 30, 250, "kg"}, {"height", in.Height, 100, 250, "cm"}}
	for _, r := range req {
		if r.v == nil {
			return inputErr(r.name, "required (%s)", r.unit)
		}
		if math.IsNaN(*r.v) || *r.v < r.lo || *r.v > r.hi || (r.name == "dose_mg" && *r.v <= 0) {
			return inputErr(r.name, "must be in (%g, %g] %s, got %g", r.lo, r.hi, r.unit, *r.v)
		}
	}
	if in.InfusionH != nil && (!(*in.InfusionH > 0) || *in.InfusionH > 24) {
		return inputErr("infusion_h", "must be in (0, 24] hours, got %g", *in.InfusionH)
	}
	if in.Days != nil && (!(*in.Days > 0) || *in.Days > MaxDays) {
		return inputErr("days", "must be in (0, %d] days, got %g", MaxDays, *in.Days)
	}
	return nil
}

// Simulate runs the doxorubicin PBPK for one intravenous infusion.
func Simulate(in Input) (*Output, error) {
	if err := validate(in); err != nil {
		return nil, err
	}
	tinf, days := 0.05, 7.0
	if in.InfusionH != nil {
		tinf = *in.InfusionH
	}
	if in.Days != nil {
		days = *in.Days
	}
	ph := newPhysiology(*in.Age, *in.Weight, *in.Height)
	doseMg := *in.DoseMg * ph.BSA
	doseUmol := doseMg / MW * 1000
	tend := days * 24
	if tinf >= tend {
		return nil, inputErr("infusion_h", "infusion (%g h) must end before the simulation (%g h)", tinf, tend)
	}
	times := outputTimes(tinf, tend)
	prob := ode.Problem{Func: ph.deriv, Linear: newLinearSolver(ph), Y0: make([]float64, nStates),
		Infusions: []ode.Infusion{{Start: 0, Stop: tinf, State: sVen, Rate: doseUmol / tinf}}}
	atol := make([]float64, nStates)
	for i := range atol {
		atol[i] = 1e-9 * doseUmol
	}
	sol, err := ode.Solve(prob, times, ode.WithMethod(ode.Rosenbrock), ode.WithTolerances(1e-7, 1e-12),
		ode.WithAbsTolVec(atol), ode.WithAutonomous())
	if err != nil {
		return nil, fmt.Errorf("doxorubicin pbpk: solving: %w", err)
	}
	return summarize(ph, sol, doseMg, doseUmol, tinf), nil
}

// outputTimes: every 0.01 h through the infusion and the first hour
// (to catch Cmax), then every 0.25 h.
func outputTimes(tinf, tend float64) []float64 {
	var ts []float64
	fine := math.Max(1, tinf+0.5)
	for k := 0; ; k++ {
		t := float64(k) * 0.01
		if t > fine || t > tend {
			break
		}
		ts = append(ts, t)
	}
	if tinf < fine && math.Abs(math.Round(tinf/0.01)*0.01-tinf) > 1e-9 {
		ts = append(ts, tinf)
		sortFloats(ts)
	}
	start := math.Floor(fine/0.25)*0.25 + 0.25
	for t := start; t <= tend+1e-9; t += 0.25 {
		ts = append(ts, math.Min(t, tend))
	}
	return ts
}

func sortFloats(a []float64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
