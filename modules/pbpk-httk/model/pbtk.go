package model

import (
	"fmt"
	"math"
	"strings"
)

// Name and Version identify the model.
const (
	Name    = "httk-pbtk"
	Version = "1.1.1"
	// MaxDays is the longest simulation accepted.
	MaxDays = 730
	// MaxDosesPerDay bounds doses_per_day.
	MaxDosesPerDay = 24
	// MaxTSteps bounds tsteps (outputs per hour).
	MaxTSteps = 60
	// DefaultOutputPoints caps the rows of time_series when tsteps is not
	// given (the summary is always computed on the full tsteps grid).
	DefaultOutputPoints = 2000
	// MaxOutputPoints bounds output_points.
	MaxOutputPoints = 200000
	// SeriesDigits is the number of significant digits of the time_series
	// values (time itself is written exactly). httk rounds its own outputs to
	// 4 (set_httk_precision).
	SeriesDigits = 6
)

// Input is the request of /pbpk/httk.
type Input struct {
	// ChemName is a name, CAS number or DTXSID from httk's chemical table.
	ChemName string `json:"chem_name" desc:"chemical name, CAS number or DTXSID from httk's table" example:"\"Bisphenol A\""`
	// Species is human, rat, mouse, dog or rabbit (case-insensitive).
	Species string `json:"species" desc:"human, rat, mouse, dog or rabbit (case-insensitive)" example:"\"human\""`
	// DailyDose is the oral dose in mg/kg BW/day.
	DailyDose *float64 `json:"daily_dose" desc:"oral dose per kg of body weight per day, in (0, 1e6]" unit:"mg/kg BW/day" gt:"0" max:"1000000" example:"1"`
	// DosesPerDay splits the daily dose into equal oral doses (1..24).
	DosesPerDay *float64 `json:"doses_per_day" desc:"equal oral doses per day (whole number)" unit:"doses/day" min:"1" max:"24" example:"1"`
	// Days is the simulated duration in days (0 < days <= MaxDays).
	Days *float64 `json:"days" desc:"simulated duration, in (0, 730]" unit:"day" gt:"0" max:"730" example:"15"`
	// DefaultToHuman substitutes human in vitro values missing for the species.
	DefaultToHuman bool `json:"default_to_human,omitempty"`
	// TSteps is the number of output times per hour (default 4, as solve_pbtk).
	// Given explicitly, time_series holds every time of that grid (unless
	// output_points is also given).
	TSteps int `json:"tsteps,omitempty" desc:"output times per hour (default 4)" unit:"1/h" min:"0" max:"60"`
	// OutputPoints caps the number of time_series rows (default
	// DefaultOutputPoints when tsteps is not given, no cap when it is): the
	// rows are every k-th time of the tsteps grid, with the smallest k of
	// thinSteps that fits, plus t = 1e-4 day and the end.
	OutputPoints int `json:"output_points,omitempty" desc:"most time_series rows, 10 to 200000 (default: thinned to a few hundred)" unit:"rows" min:"0" max:"200000"`
}

// thinSteps are the allowed strides through the tsteps grid (at tsteps = 4:
// 15, 30, 45 min, 1, 1.5, 2, 3, 4, 6, 12 h, 1, 2, 4, 8 days).
var thinSteps = []int{1, 2, 3, 4, 6, 8, 12, 16, 24, 48, 96, 192, 384, 768}

// Chemical identifies the simulated chemical.
type Chemical struct {
	Name   string  `json:"name"`
	CAS    string  `json:"cas"`
	DTXSID string  `json:"dtxsid"`
	MW     float64 `json:"mw_g_per_mol"`
}

// Dosing describes the simulated regimen.
type Dosing struct {
	DailyDoseMgPerKg float64   `json:"daily_dose_mg_per_kg"`
	DosesPerDay      int       `json:"doses_per_day"`
	Days             float64   `json:"days"`
	Route            string    `json:"route"`
	DoseTimesDays    []float64 `json:"dose_times_days"`
	// AbsorbedUmolPerDose is each dose in µmol times Fabsgut (what enters
	// the gut lumen, as in httk).
	AbsorbedUmolPerDose float64 `json:"absorbed_umol_per_dose"`
}

// TimeSeries holds solve_pbtk's columns (concentrations µM, amounts µmol,
// AUC µM·day, time in days).
type TimeSeries struct {
	Time         []float64 `json:"time"`
	Agutlumen    []float64 `json:"Agutlumen"`
	Cgut         []float64 `json:"Cgut"`
	Cliver       []float64 `json:"Cliver"`
	Cven         []float64 `json:"Cven"`
	Clung        []float64 `json:"Clung"`
	Cart         []float64 `json:"Cart"`
	Crest        []float64 `json:"Crest"`
	Ckidney      []float64 `json:"Ckidney"`
	Cplasma      []float64 `json:"Cplasma"`
	Aplasma      []float64 `json:"Aplasma"`
	Atubules     []float64 `json:"Atubules"`
	Ametabolized []float64 `json:"Ametabolized"`
	AUC          []float64 `json:"AUC"`
}

// Summary gives the headline figures.
type Summary struct {
	CmaxUM           float64 `json:"Cmax_uM"`
	TmaxDays         float64 `json:"Tmax_days"`
	AUCUMDays        float64 `json:"AUC_uM_days"`
	CplasmaEndUM     float64 `json:"Cplasma_end_uM"`
	CssAnalyticUM    float64 `json:"Css_analytic_uM"`
	MassBalanceError float64 `json:"mass_balance_relative_error"`
}

// Output is the response of /pbpk/httk.
type Output struct {
	Model      string            `json:"model"`
	Version    string            `json:"version"`
	Chemical   Chemical          `json:"chemical"`
	Species    string            `json:"species"`
	Dosing     Dosing            `json:"dosing"`
	Parameters *Params           `json:"parameters"`
	Summary    Summary           `json:"summary"`
	Units      map[string]string `json:"units"`
	TimeSeries TimeSeries        `json:"time_series"`
	PlotSVG    string            `json:"plot_svg"`
	Notes      []string          `json:"notes,omitempty"`
}

// State indices of the pbtk model (httk modelpbtk.c order).
const (
	sGutlumen = iota
	sGut
	sLiver
	sVen
	sLung
	sArt
	sRest
	sKidney
	sTubules
	sMetabolized
	sAUC
	nStates
)

// system holds the model in units of days, litres and µmol.
type system struct {
	a                                                       [nStates * nStates]float64
	nz                                                      []entry // non-zeros of a
	vgut, vliver, vven, vlung, vart, vrest, vkidney, r, hct float64
}

// newSystem builds the linear pbtk system dA/dt = M·A (per day) from httk
// parameters, following modelpbtk.c: flows and clearances ×24, volumes ×BW.
func newSystem(p *Params) *system {
	s := &system{}
	bw := p.BW
	bw75 := math.Pow(bw, 0.75)
	qc := p.Qcardiacc * 24 * bw75
	qgfr := p.Qgfrc * 24 * bw75
	qgut, qliver, qkidney := p.Qgutf*qc, p.Qliverf*qc, p.Qkidneyf*qc
	qrest := qc - qgut - qliver - qkidney
	clmet := p.Clmetabolismc * 24 * bw
	ka := p.Kgutabs * 24
	s.vgut, s.vliver, s.vven, s.vlung = p.Vgutc*bw, p.Vliverc*bw, p.Vvenc*bw, p.Vlungc*bw
	s.vart, s.vrest, s.vkidney = p.Vartc*bw, p.Vrestc*bw, p.Vkidneyc*bw
	s.r, s.hct = p.Rblood2plasma, p.Hematocrit
	r, fu := p.Rblood2plasma, p.Fup
	set := func(i, j int, v float64) { s.a[i*nStates+j] += v }
	// Concentration factors: C_x = A_x / V_x; outflow C_x·R/(K_x·fu).
	gutOut := r / (p.Kgut2pu * fu) / s.vgut
	liverOut := r / (p.Kliver2pu * fu) / s.vliver
	kidneyOut := r / (p.Kkidney2pu * fu) / s.vkidney
	restOut := r / (p.Krest2pu * fu) / s.vrest
	lungOut := r / (p.Klung2pu * fu) / s.vlung
	cart := 1 / s.vart
	cven := 1 / s.vven
	set(sGutlumen, sGutlumen, -ka)
	set(sGut, sGutlumen, ka)
	set(sGut, sArt, qgut*cart)
	set(sGut, sGut, -qgut*gutOut)
	set(sLiver, sArt, qliver*cart)
	set(sLiver, sGut, qgut*gutOut)
	set(sLiver, sLiver, -(qliver+qgut)*liverOut-clmet/(p.Kliver2pu*fu)/s.vliver)
	set(sVen, sLiver, (qliver+qgut)*liverOut)
	set(sVen, sKidney, qkidney*kidneyOut)
	set(sVen, sRest, qrest*restOut)
	set(sVen, sVen, -qc*cven)
	set(sLung, sVen, qc*cven)
	set(sLung, sLung, -qc*lungOut)
	set(sArt, sLung, qc*lungOut)
	set(sArt, sArt, -qc*cart)
	set(sRest, sArt, qrest*cart)
	set(sRest, sRest, -qrest*restOut)
	set(sKidney, sArt, qkidney*cart-qgfr*fu/r*cart)
	set(sKidney, sKidney, -qkidney*kidneyOut)
	set(sTubules, sArt, qgfr*fu/r*cart)
	set(sMetabolized, sLiver, clmet/(p.Kliver2pu*fu)/s.vliver)
	set(sAUC, sVen, cven/r)
	for i := 0; i < nStates; i++ {
		for j := 0; j < nStates; j++ {
			if v := s.a[i*nStates+j]; v != 0 {
				s.nz = append(s.nz, entry{i, j, v})
			}
		}
	}
	return s
}

// entry is one non-zero coefficient of the system matrix.
type entry struct {
	i, j int
	v    float64
}

func (s *system) deriv(_ float64, y, dy []float64) {
	clear(dy)
	for _, e := range s.nz {
		dy[e.i] += e.v * y[e.j]
	}
}

func (s *system) jacobian(_ float64, _ []float64, j []float64) { copy(j, s.a[:]) }

// CssAnalytic is httk's calc_analytic_css_pbtk: the steady-state plasma
// concentration (µM) for a constant oral dose rate of dose mg/kg/day.
func CssAnalytic(p *Params, dose float64) float64 {
	hourly := dose / 24 // mg/kg/h
	qc := p.Qcardiacc / math.Pow(p.BW, 0.25)
	qgfr := p.Qgfrc / math.Pow(p.BW, 0.25)
	qgut, qliver, qkidney := p.Qgutf*qc, p.Qliverf*qc, p.Qkidneyf*qc
	qrest := qc - qgut - qliver - qkidney
	r, fu, cl := p.Rblood2plasma, p.Fup, p.Clmetabolismc
	ql := qliver + qgut
	cven := p.Fabsgut * (hourly * ql / (cl/r + ql)) /
		(qc - ql*ql/(cl/r+ql) - qkidney + qgfr*fu/r - qrest)
	return cven / r / p.MW * 1000 // mg/L -> µM
}

// Validate checks the input and returns the canonical species name.
func (in *Input) Validate() (string, error) {
	if strings.TrimSpace(in.ChemName) == "" {
		return "", inputErr("chem_name", "required: a chemical name, CAS number or DTXSID")
	}
	if in.Species == "" {
		return "", inputErr("species", "required: one of human, rat, mouse, dog, rabbit")
	}
	species := ""
	for _, s := range speciesNames {
		if strings.EqualFold(s, strings.TrimSpace(in.Species)) {
			species = s
		}
	}
	if species == "" {
		return "", inputErr("species", "unknown species %q: use one of human, rat, mouse, dog, rabbit", in.Species)
	}
	switch {
	case in.DailyDose == nil:
		return "", inputErr("daily_dose", "required: oral dose in mg/kg/day")
	case !(*in.DailyDose > 0) || math.IsInf(*in.DailyDose, 0):
		return "", inputErr("daily_dose", "must be a positive number of mg/kg/day, got %g", *in.DailyDose)
	case *in.DailyDose > 1e6:
		return "", inputErr("daily_dose", "must be at most 1e6 mg/kg/day, got %g", *in.DailyDose)
	case in.DosesPerDay == nil:
		return "", inputErr("doses_per_day", "required: number of equal oral doses per day (1 to %d)", MaxDosesPerDay)
	case *in.DosesPerDay != math.Trunc(*in.DosesPerDay) || *in.DosesPerDay < 1 || *in.DosesPerDay > MaxDosesPerDay:
		return "", inputErr("doses_per_day", "must be a whole number from 1 to %d, got %g", MaxDosesPerDay, *in.DosesPerDay)
	case in.Days == nil:
		return "", inputErr("days", "required: simulated duration in days (up to %d)", MaxDays)
	case !(*in.Days > 0) || *in.Days > MaxDays:
		return "", inputErr("days", "must be greater than 0 and at most %d, got %g", MaxDays, *in.Days)
	case in.TSteps < 0 || in.TSteps > MaxTSteps:
		return "", inputErr("tsteps", "must be from 1 to %d output times per hour, got %d", MaxTSteps, in.TSteps)
	case in.OutputPoints != 0 && (in.OutputPoints < 10 || in.OutputPoints > MaxOutputPoints):
		return "", inputErr("output_points", "must be from 10 to %d rows, got %d", MaxOutputPoints, in.OutputPoints)
	}
	return species, nil
}

// Simulate runs httk's pbtk model for the input.
func Simulate(in Input) (*Output, error) {
	species, err := in.Validate()
	if err != nil {
		return nil, err
	}
	t, err := loadTables()
	if err != nil {
		return nil, fmt.Errorf("httk: loading tables: %w", err)
	}
	c, ok := t.lookup(in.ChemName)
	if !ok {
		e := inputErr("chem_name", "%q is not in httk's chemical table (by name, CAS or DTXSID)", in.ChemName)
		e.Suggestions = t.suggest(in.ChemName, species, in.DefaultToHuman, 5)
		return nil, e
	}
	p, err := t.parameterize(c, species, in.DefaultToHuman)
	if err != nil {
		if ie, ok := err.(*InputError); ok {
			ie.Suggestions = t.suggest(in.ChemName, species, in.DefaultToHuman, 5)
		}
		return nil, err
	}
	return run(in, species, c, p)
}

func run(in Input, species string, c *chemical, p *Params) (*Output, error) {
	days, dpd := *in.Days, int(*in.DosesPerDay)
	tsteps := in.TSteps
	if tsteps == 0 {
		tsteps = 4
	}
	sys := newSystem(p)
	doseUmol := *in.DailyDose / float64(dpd) * p.BW / p.MW * 1000 * p.Fabsgut
	var doseTimes []float64
	for k := 0; ; k++ {
		td := float64(k) / float64(dpd)
		if td >= days-1e-12 {
			break
		}
		doseTimes = append(doseTimes, td)
	}
	// Output grid as solve_pbtk: 0, 1e-4 d, then every 1/(24·tsteps) day.
	n := int(math.Round(days * 24 * float64(tsteps)))
	times := []float64{0, 1e-4}
	for k := 1; k <= n; k++ {
		tk := float64(k) / (24 * float64(tsteps))
		if tk > days {
			break
		}
		times = append(times, tk)
	}
	if times[len(times)-1] < days-1e-12 {
		times = append(times, days)
	}
	// Rows of time_series: every thin-th time of the grid (times[2:] are the
	// grid proper), t = 0, 1e-4 and the end.
	maxRows := in.OutputPoints
	if maxRows == 0 && in.TSteps == 0 {
		maxRows = DefaultOutputPoints
	}
	thin := 1
	if maxRows > 0 {
		for _, k := range thinSteps {
			thin = k
			if 3+(len(times)-2)/k <= maxRows {
				break
			}
		}
	}
	keep := func(k int) bool { return k < 2 || k == len(times)-1 || (k-1)%thin == 0 }
	m := 0
	for k := range times {
		if keep(k) {
			m++
		}
	}
	out := &Output{
		Model: Name, Version: Version, Species: species, Parameters: p,
		Chemical: Chemical{Name: c.Name, CAS: c.CAS, DTXSID: c.DTXSID, MW: c.MW},
		Dosing: Dosing{DailyDoseMgPerKg: *in.DailyDose, DosesPerDay: dpd, Days: days, Route: "oral",
			DoseTimesDays: doseTimes, AbsorbedUmolPerDose: doseUmol},
		Units: map[string]string{"time": "day", "C*": "uM", "A*": "umol", "AUC": "uM*day",
			"Cmax_uM": "uM", "Tmax_days": "day", "Css_analytic_uM": "uM", "daily_dose": "mg/kg/day"},
	}
	ts := &out.TimeSeries
	cols := []*[]float64{&ts.Time, &ts.Agutlumen, &ts.Cgut, &ts.Cliver, &ts.Cven, &ts.Clung, &ts.Cart,
		&ts.Crest, &ts.Ckidney, &ts.Cplasma, &ts.Aplasma, &ts.Atubules, &ts.Ametabolized, &ts.AUC}
	for _, cp := range cols {
		*cp = make([]float64, 0, m)
	}
	// The plot gets, per block of grid times, the first, lowest, highest
	// and last value of each concentration, so that peaks between rows show.
	plotBlock := max(thin, (len(times)-2)/plotBlocks)
	pl := newPlotData(plotBlock, len(times))
	sm := &out.Summary
	var maxErr float64
	prop := newPropagator(sys)
	y := make([]float64, nStates)
	t := 0.0
	nd := 0 // doses given so far
	for k, tk := range times {
		for nd < len(doseTimes) && doseTimes[nd] <= tk {
			prop.advance(y, doseTimes[nd]-t)
			t = doseTimes[nd]
			y[sGutlumen] += doseUmol
			nd++
		}
		prop.advance(y, tk-t)
		t = tk
		cplasma := y[sVen] / sys.vven / sys.r
		if cplasma > sm.CmaxUM {
			sm.CmaxUM, sm.TmaxDays = cplasma, tk
		}
		var total float64
		for i := sGutlumen; i <= sMetabolized; i++ {
			total += y[i]
		}
		if dosed := float64(nd) * doseUmol; dosed > 0 {
			maxErr = math.Max(maxErr, math.Abs(total-dosed)/dosed)
		}
		cgut, cliver, clung := y[sGut]/sys.vgut, y[sLiver]/sys.vliver, y[sLung]/sys.vlung
		crest, ckidney := y[sRest]/sys.vrest, y[sKidney]/sys.vkidney
		pl.add(k < 2 || k == len(times)-1 || (k-1)%plotBlock == 0, tk, cplasma, cliver, ckidney, cgut, clung, crest)
		if !keep(k) {
			continue
		}
		ts.Time = append(ts.Time, tk)
		ts.Agutlumen = append(ts.Agutlumen, y[sGutlumen])
		ts.Cgut = append(ts.Cgut, cgut)
		ts.Cliver = append(ts.Cliver, cliver)
		ts.Cven = append(ts.Cven, y[sVen]/sys.vven)
		ts.Clung = append(ts.Clung, clung)
		ts.Cart = append(ts.Cart, y[sArt]/sys.vart)
		ts.Crest = append(ts.Crest, crest)
		ts.Ckidney = append(ts.Ckidney, ckidney)
		ts.Cplasma = append(ts.Cplasma, cplasma)
		ts.Aplasma = append(ts.Aplasma, y[sVen]/sys.r*(1-sys.hct))
		ts.Atubules = append(ts.Atubules, y[sTubules])
		ts.Ametabolized = append(ts.Ametabolized, y[sMetabolized])
		ts.AUC = append(ts.AUC, y[sAUC])
	}
	if thin > 1 {
		out.Notes = append(out.Notes, fmt.Sprintf("time_series holds every %s (%d rows; the summary uses all %d times of the tsteps grid); ask output_points (up to %d) or tsteps for more rows",
			spacing(float64(thin)/float64(tsteps)), m, len(times), MaxOutputPoints))
	}
	sm.AUCUMDays = ts.AUC[m-1]
	sm.CplasmaEndUM = ts.Cplasma[m-1]
	sm.CssAnalyticUM = CssAnalytic(p, *in.DailyDose)
	sm.MassBalanceError = maxErr
	out.PlotSVG = plotProfiles(out, pl)
	if species != "Human" && in.DefaultToHuman {
		out.Notes = append(out.Notes, "human in vitro values substituted where the species lacks them (default_to_human)")
	}
	return out, nil
}
