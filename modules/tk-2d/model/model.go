// Package model is the /TK/2D/evaluate model: in-vitro biokinetics of a
// chemical in a 2D cardiomyocyte culture (httk 2.7 Armitage equilibrium
// distribution, first-order uptake towards it) and, where public data exist,
// viability from a Hill model on the cell concentration–time area
// calibrated to the Matthews et al. (2023) 48-h hiPSC-CM data.
package model

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"toxgate/modules/tk-2d/chem"
	"toxgate/modules/tk-2d/viability"
	"toxgate/sdk/invitro"
	"toxgate/sdk/plot"
)

// Version is the model version reported in every response.
const Version = "1.0.0"

// Defaults of the exposure scenario (see the model card).
const (
	DefaultNominalUM = 1.0
	DefaultPlate     = 96
	DefaultDurationH = 48.0
	// Steps is the number of time intervals of the returned time courses
	// (t_i = duration·(i/Steps)², dense at early times).
	Steps = 96
)

// Input is the request body.
type Input struct {
	Compound      string   `json:"compound" desc:"DOX, AMI, ROT or TBBPA, or any httk chemical by name, CAS or DTXSID" example:"\"DOX\"" minlen:"1" maxlen:"200"`
	NominalUM     float64  `json:"nominal_uM,omitempty" desc:"nominal medium concentration at t = 0 (default 1)" unit:"µM" min:"0" max:"100000"`
	PlateFormat   int      `json:"plate_format,omitempty" desc:"wells per plate: 6, 12, 24, 48, 96, 384 or 1536 (default 96)" unit:"wells" min:"0" max:"1536"`
	MediumUL      float64  `json:"medium_uL,omitempty" desc:"medium volume per well (default: httk's for the format, 150 µL in 96-well)" unit:"µL" min:"0"`
	SerumFraction *float64 `json:"serum_fraction,omitempty" desc:"volume fraction of fetal bovine serum in the medium (default 0: serum-free cardiomyocyte medium)" unit:"fraction" min:"0" max:"1"`
	Cells         float64  `json:"cells,omitempty" desc:"cells per well (default: httk's for the format, 32 000 in 96-well)" unit:"cells" min:"0" max:"100000000"`
	DurationH     float64  `json:"duration_h,omitempty" desc:"exposure duration (default 48)" unit:"h" min:"0" max:"720"`
}

// InputError names the offending input field.
type InputError struct{ Field, Message string }

func (e *InputError) Error() string { return e.Field + ": " + e.Message }

// Compound identifies the chemical and the inputs used.
type Compound struct {
	Code string `json:"code,omitempty"`
	invitro.Chemical
}

// ViabilityModel documents the viability relation used.
type ViabilityModel struct {
	Source         string    `json:"source"`
	EC50NominalUM  float64   `json:"ec50_nominal_48h_uM"`
	SEl10EC50      float64   `json:"se_log10_ec50"`
	Slope          float64   `json:"hill_slope"`
	SESlope        float64   `json:"se_slope"`
	EC50CellUM     float64   `json:"ec50_cell_uM"`
	DonorLD50UM    []float64 `json:"donor_ld50_uM"`
	CalibrationRef string    `json:"calibration_scenario"`
	N              int       `json:"n_observations"`
}

// Output is the response body.
type Output struct {
	// PlotSVG is an SVG document: the concentrations in cells and medium
	// and, where modelled, the viability, in panels one above another.
	PlotSVG        string            `json:"plot_svg"`
	Model          string            `json:"model"`
	Version        string            `json:"version"`
	Compound       Compound          `json:"compound"`
	System         invitro.System    `json:"system"`
	NominalUM      float64           `json:"nominal_uM"`
	TimeH          []float64         `json:"time_h"`
	MediumFreeUM   []float64         `json:"medium_free_uM"`
	MediumTotalUM  []float64         `json:"medium_total_uM"`
	CellUM         []float64         `json:"cell_uM"`
	Viability      []float64         `json:"viability"`
	ViabilityNote  string            `json:"viability_note,omitempty"`
	ViabilityModel *ViabilityModel   `json:"viability_model,omitempty"`
	Equilibrium    invitro.Result    `json:"equilibrium"`
	Uptake         invitro.Uptake    `json:"uptake"`
	Units          map[string]string `json:"units"`
}

// Scenario is a resolved request.
type Scenario struct {
	Chem      invitro.Chemical
	Code      string
	Nominal   float64
	System    invitro.System
	DurationH float64
}

// Resolve validates the input and fills defaults.
func Resolve(in Input) (Scenario, error) {
	if strings.TrimSpace(in.Compound) == "" {
		return Scenario{}, &InputError{"compound", "is required: one of " + strings.Join(chem.CodeList, ", ") + " or an httk chemical name, CAS or DTXSID"}
	}
	c, code, err := chem.Lookup(in.Compound)
	var nf *chem.NotFoundError
	if errors.As(err, &nf) {
		return Scenario{}, &InputError{"compound", nf.Error()}
	}
	if err != nil {
		return Scenario{}, err
	}
	if miss := chem.Missing(c); len(miss) > 0 {
		return Scenario{}, &InputError{"compound", fmt.Sprintf("%s (%s) lacks %s in httk's chemical table, needed by the Armitage model; supported codes: %s",
			c.Name, c.CAS, strings.Join(miss, ", "), strings.Join(chem.CodeList, ", "))}
	}
	s := Scenario{Chem: c, Code: code, Nominal: in.NominalUM, DurationH: in.DurationH}
	if s.Nominal == 0 {
		s.Nominal = DefaultNominalUM
	}
	if !(s.Nominal > 0) || s.Nominal > 1e5 {
		return Scenario{}, &InputError{"nominal_uM", "must be positive and at most 1e5 µM"}
	}
	if s.DurationH == 0 {
		s.DurationH = DefaultDurationH
	}
	if !(s.DurationH > 0) || s.DurationH > 720 {
		return Scenario{}, &InputError{"duration_h", "must be within (0, 720] h"}
	}
	format := in.PlateFormat
	if format == 0 {
		format = DefaultPlate
	}
	if _, err := invitro.WellFor(format); err != nil {
		return Scenario{}, &InputError{"plate_format", err.Error()}
	}
	fbs := 0.0
	if in.SerumFraction != nil {
		fbs = *in.SerumFraction
	}
	if fbs < 0 || fbs > 1 {
		return Scenario{}, &InputError{"serum_fraction", "must be within 0–1 (e.g. 0.1 for 10 % FBS)"}
	}
	if in.MediumUL < 0 {
		return Scenario{}, &InputError{"medium_uL", "must be positive"}
	}
	if in.Cells < 0 || in.Cells > 1e8 {
		return Scenario{}, &InputError{"cells", "must be within 0–1e8 cells per well"}
	}
	sys, err := invitro.NewSystem(format, in.MediumUL, in.Cells, fbs)
	if err != nil {
		return Scenario{}, &InputError{"medium_uL", err.Error()}
	}
	s.System = sys
	return s, nil
}

// Course is the simulated time course of a scenario.
type Course struct {
	Eq     invitro.Result
	Uptake invitro.Uptake
	States []invitro.State
}

// Simulate runs the distribution and uptake model of s.
func Simulate(s Scenario) (Course, error) {
	o := invitro.DefaultOptions()
	r, err := invitro.Armitage(s.Chem, s.Nominal, s.System, o)
	if err != nil {
		return Course{}, err
	}
	u := invitro.NewUptake(s.Chem, s.System, r, o, invitro.DefaultKinetics())
	st := make([]invitro.State, Steps+1)
	for i := range st { // quadratic spacing: dense where uptake is fast
		f := float64(i) / Steps
		st[i] = u.At(s.DurationH * f * f)
	}
	return Course{r, u, st}, nil
}

// CalibrationHours is the exposure time of the viability data.
const CalibrationHours = 48.0

// Driver is the dose metric of the viability model: the area under the cell
// concentration curve divided by the 48-h calibration time (Haber's rule,
// effect ∝ concentration × time), so that at 48 h it is the mean cell
// concentration the EC50 was calibrated on, µM.
func Driver(st invitro.State) float64 { return st.CellMeanToT * st.TimeH / CalibrationHours }

// CalibrationScenario is the assumed set-up of the Matthews 48-h assay.
const CalibrationScenario = "96-well, 150 µL serum-free medium, 32 000 cells (httk defaults), 48 h"

// CellEC50 converts a nominal 48-h EC50 into the time-averaged cell
// concentration it produces in the calibration scenario (the model is linear
// in the nominal concentration below the solubility limit).
func CellEC50(c invitro.Chemical, ec50 float64) (float64, error) {
	sys, err := invitro.NewSystem(96, 0, 0, 0)
	if err != nil {
		return 0, err
	}
	o := invitro.DefaultOptions()
	r, err := invitro.Armitage(c, ec50, sys, o)
	if err != nil {
		return 0, err
	}
	return Driver(invitro.NewUptake(c, sys, r, o, invitro.DefaultKinetics()).At(CalibrationHours)), nil
}

// Evaluate answers one request.
func Evaluate(in Input) (Output, error) {
	s, err := Resolve(in)
	if err != nil {
		return Output{}, err
	}
	course, err := Simulate(s)
	if err != nil {
		return Output{}, fmt.Errorf("simulating %s: %w", s.Chem.Name, err)
	}
	n := len(course.States)
	out := Output{Model: "tk-2d", Version: Version, Compound: Compound{s.Code, s.Chem}, System: s.System,
		NominalUM: s.Nominal, Equilibrium: course.Eq, Uptake: course.Uptake,
		TimeH: make([]float64, n), MediumFreeUM: make([]float64, n), MediumTotalUM: make([]float64, n), CellUM: make([]float64, n),
		Units: map[string]string{"time_h": "h", "medium_free_uM": "µM (freely dissolved)", "medium_total_uM": "µM (dissolved + serum-bound, per medium volume)",
			"cell_uM": "µM (amount per cell volume)", "viability": "fraction of vehicle control", "ec50": "µM"}}
	for i, st := range course.States {
		out.TimeH[i], out.MediumFreeUM[i], out.MediumTotalUM[i], out.CellUM[i] = st.TimeH, st.MediumFree, st.MediumTotal, st.Cell
	}
	fit, err := viability.ForCAS(s.Chem.CAS)
	if err != nil {
		return Output{}, fmt.Errorf("viability data: %w", err)
	}
	if fit == nil {
		out.ViabilityNote = fmt.Sprintf("not available: no public concentration–viability data for %s in cardiomyocytes; viability is modelled for doxorubicin, daunorubicin, epirubicin and mitoxantrone (Matthews et al. 2023, hiPSC-CMs, 48 h)", s.Chem.Name)
	} else {
		ec50c, err := CellEC50(s.Chem, fit.Hill.EC50)
		if err != nil {
			return Output{}, fmt.Errorf("calibrating the viability model: %w", err)
		}
		out.ViabilityModel = &ViabilityModel{Source: "Matthews et al. 2023 (bioRxiv 10.1101/2023.10.03.560405), 48-h PrestoBlue viability, 6 donors, pooled two-parameter Hill fit",
			EC50NominalUM: fit.Hill.EC50, SEl10EC50: fit.Hill.SELog10EC50, Slope: fit.Hill.Slope, SESlope: fit.Hill.SESlope,
			EC50CellUM: ec50c, DonorLD50UM: fit.DonorLD50, CalibrationRef: CalibrationScenario, N: fit.Hill.N}
		out.Viability = make([]float64, n)
		for i, st := range course.States {
			out.Viability[i] = 1 / (1 + math.Pow(Driver(st)/ec50c, fit.Hill.Slope))
		}
	}
	if err := out.plots(s); err != nil {
		return Output{}, fmt.Errorf("plotting: %w", err)
	}
	return out, nil
}

func (o *Output) plots(s Scenario) error {
	name := s.Chem.Name
	if s.Code != "" {
		name = s.Code + " (" + s.Chem.Name + ")"
	}
	c := plot.New(fmt.Sprintf("%s, %g µM nominal, %d-well plate: concentrations", name, s.Nominal, s.System.Well.Format),
		"time (h)", "concentration (µM)")
	c.LogY = true
	c.Height = 400
	c.Add("cells", o.TimeH, o.CellUM)
	c.Add("medium, total", o.TimeH, o.MediumTotalUM)
	c.Add("medium, free", o.TimeH, o.MediumFreeUM).Dashed = true
	if o.Viability == nil {
		o.PlotSVG = c.SVG()
		return nil
	}
	v := make([]float64, len(o.Viability))
	for i, x := range o.Viability {
		v[i] = 100 * x
	}
	via := plot.New(fmt.Sprintf("%s, %g µM nominal: viability (EC_{50} %.3g µM nominal at 48 h)", name, s.Nominal, o.ViabilityModel.EC50NominalUM),
		"time (h)", "viability (% of vehicle)")
	via.Height = 320
	via.Add("viability", o.TimeH, v)
	o.PlotSVG = plot.Stack(c, via)
	return nil
}
