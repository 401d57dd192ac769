// Package model is the /TK/3D/evaluate model: the chemistry of the 2D model
// (httk 2.7 Armitage partitioning) in a spherical cardiac microtissue of
// concentric cell layers, with diffusion between layers (VCBA 3D style), per-
// layer concentrations over time and, where public data exist, per-layer
// viability from the 2D model's cell-based Hill relation.
package model

import (
	"errors"
	"fmt"
	"math"
	"strings"

	tk2d "toxgate/modules/tk-2d/model"
	"toxgate/modules/tk-2d/viability"
	"toxgate/sdk/invitro"
	"toxgate/sdk/ode"
	"toxgate/sdk/plot"
)

// Version is the model version.
const Version = "1.0.0"

// Geometry and transport constants (see the model card).
const (
	RadiusUM     = 150.0 // microtissue radius, µm (HeCaToS-size cardiac microtissue, ~300 µm diameter)
	Layers       = 10    // concentric shells of equal thickness
	DeffM2s      = 1e-10 // effective diffusivity of the free chemical in tissue, m²/s (assumed: 1/5 of water)
	MediumUL     = 70.0  // medium per microtissue well, µL (96-well spheroid plate, assumed)
	DurationH    = 48.0
	Steps        = 96
	CellVolumePL = 3.0 // httk cell volume (3 ng at 1 g/mL)
)

// Input is the request body.
type Input struct {
	Compound  string  `json:"compound" desc:"DOX, AMI, ROT or TBBPA, or an httk chemical by name, CAS or DTXSID" example:"\"DOX\"" minlen:"1" maxlen:"200"`
	NominalUM float64 `json:"nominal_uM,omitempty" desc:"nominal medium concentration for the layer time courses (default 1)" unit:"µM" min:"0" max:"100000"`
	DurationH float64 `json:"duration_h,omitempty" desc:"exposure duration (default 48)" unit:"h" min:"0" max:"720"`
}

// Output is the response.
type Output struct {
	// PlotSVG is an SVG document: the layer concentrations at the EC5 and
	// the EC10 (panels one above another), or at the nominal concentration
	// without viability data.
	PlotSVG       string            `json:"plot_svg"`
	Model         string            `json:"model"`
	Version       string            `json:"version"`
	Compound      tk2d.Compound     `json:"compound"`
	Meaning       string            `json:"plot_meaning"`
	LayerRadiiUM  []float64         `json:"layer_outer_radius_um"`
	TimeH         []float64         `json:"time_h"`
	NominalUM     float64           `json:"nominal_uM"`
	MediumFreeUM  []float64         `json:"medium_free_uM"`
	LayerUM       [][]float64       `json:"layer_uM"` // [layer][time], outermost first
	LayerViab     [][]float64       `json:"layer_viability,omitempty"`
	TissueViab    []float64         `json:"tissue_viability,omitempty"`
	EC5NominalUM  *float64          `json:"ec5_nominal_uM"`
	EC10NominalUM *float64          `json:"ec10_nominal_uM"`
	Kcw           float64           `json:"K_cw"`
	Note          string            `json:"note,omitempty"`
	Units         map[string]string `json:"units"`
}

// InputError names the offending field.
type InputError = tk2d.InputError

// Evaluate answers one request.
func Evaluate(in Input) (Output, error) {
	s, err := tk2d.Resolve(tk2d.Input{Compound: in.Compound})
	if err != nil {
		return Output{}, err
	}
	nom := in.NominalUM
	if nom == 0 {
		nom = 1
	}
	if !(nom > 0) || nom > 1e5 {
		return Output{}, &InputError{Field: "nominal_uM", Message: "must be positive and at most 1e5 µM"}
	}
	dur := in.DurationH
	if dur == 0 {
		dur = DurationH
	}
	if !(dur > 0) || dur > 720 {
		return Output{}, &InputError{Field: "duration_h", Message: "must be within (0, 720] h"}
	}
	sim, err := simulate(s.Chem, dur)
	if err != nil {
		return Output{}, fmt.Errorf("simulating %s: %w", s.Chem.Name, err)
	}
	out := Output{Model: "tk-3d", Version: Version, Compound: tk2d.Compound{Code: s.Code, Chemical: s.Chem},
		TimeH: sim.t, NominalUM: nom, Kcw: sim.kcw, LayerRadiiUM: make([]float64, Layers),
		Meaning: "plot_svg: per-layer concentration time courses in the microtissue at the nominal medium concentrations that lower the whole-tissue (volume-averaged) viability by 5 % and by 10 % at the end of the exposure (EC5, EC10; two panels); without viability data, at nominal_uM (one panel)",
		Units:   map[string]string{"time_h": "h", "*_uM": "µM (layer: amount per tissue volume)", "viability": "fraction of control", "radius": "µm"}}
	for i := range out.LayerRadiiUM {
		out.LayerRadiiUM[i] = RadiusUM * float64(Layers-i) / Layers
	}
	out.MediumFreeUM = scale(sim.medium, nom)
	out.LayerUM = make([][]float64, Layers)
	for i := range out.LayerUM {
		out.LayerUM[i] = scale(sim.layer[i], nom)
	}
	fit, err := viability.ForCAS(s.Chem.CAS)
	if err != nil {
		return Output{}, err
	}
	if fit == nil {
		out.Note = fmt.Sprintf("viability and EC5/EC10 are not available: no public concentration–viability data for %s in cardiomyocytes (supported: doxorubicin, daunorubicin, epirubicin, mitoxantrone); the plot shows the layers at nominal_uM", s.Chem.Name)
		out.PlotSVG = layerPlot(fmt.Sprintf("%s, %g µM nominal: layer concentrations", label(s), nom), &out, sim, nom).SVG()
		return out, nil
	}
	ec50c, err := tk2d.CellEC50(s.Chem, fit.Hill.EC50)
	if err != nil {
		return Output{}, err
	}
	h := fit.Hill.Slope
	via := func(c float64, k int) (float64, []float64) { // tissue and layer viability at time index k for nominal c
		lv := make([]float64, Layers)
		tot := 0.0
		for i := 0; i < Layers; i++ {
			d := c * sim.driver[i][k]
			lv[i] = 1 / (1 + math.Pow(d/ec50c, h))
			tot += lv[i] * sim.vol[i]
		}
		return tot / sim.volSum, lv
	}
	out.LayerViab = make([][]float64, Layers)
	out.TissueViab = make([]float64, len(sim.t))
	for i := range out.LayerViab {
		out.LayerViab[i] = make([]float64, len(sim.t))
	}
	for k := range sim.t {
		tv, lv := via(nom, k)
		out.TissueViab[k] = tv
		for i := range lv {
			out.LayerViab[i][k] = lv[i]
		}
	}
	last := len(sim.t) - 1
	var panels []*plot.Plot
	for _, effect := range []float64{0.05, 0.10} {
		lo, hi := 1e-6, 1e6
		for it := 0; it < 200; it++ {
			mid := math.Sqrt(lo * hi)
			if v, _ := via(mid, last); v > 1-effect {
				lo = mid
			} else {
				hi = mid
			}
		}
		ec := math.Sqrt(lo * hi)
		pct := int(effect*100 + 0.5)
		panels = append(panels, layerPlot(fmt.Sprintf("%s at EC_{%d} = %.3g µM nominal (%d %% less tissue viability at %g h)", label(s), pct, ec, pct, dur),
			&out, sim, ec))
		ecv := ec
		if effect < 0.075 {
			out.EC5NominalUM = &ecv
		} else {
			out.EC10NominalUM = &ecv
		}
	}
	out.PlotSVG = plot.Stack(panels...)
	return out, nil
}

// layerPlot draws every third layer from the outermost, the core and the free medium
// concentration at nominal concentration c, on a log axis.
func layerPlot(title string, out *Output, sim simResult, c float64) *plot.Plot {
	p := plot.New(title, "time (h)", "concentration (µM)")
	p.LogY = true
	p.Height = 400
	for i := 0; i < Layers-1; i += 3 {
		p.Add(fmt.Sprintf("layer %d (r ≤ %.0f µm)", i+1, out.LayerRadiiUM[i]), sim.t, scale(sim.layer[i], c))
	}
	p.Add(fmt.Sprintf("core, layer %d (r ≤ %.0f µm)", Layers, out.LayerRadiiUM[Layers-1]), sim.t, scale(sim.layer[Layers-1], c))
	p.Add("medium, free", sim.t, scale(sim.medium, c)).Dashed = true
	return p
}

func label(s tk2d.Scenario) string {
	if s.Code != "" {
		return s.Code
	}
	return s.Chem.Name
}

func scale(x []float64, c float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v * c
	}
	return out
}

type simResult struct {
	t, medium     []float64
	layer, driver [][]float64 // per unit nominal concentration
	vol           []float64
	volSum, kcw   float64
}

// simulate solves the layered model for a nominal concentration of 1 µM.
func simulate(c invitro.Chemical, dur float64) (simResult, error) {
	o := invitro.DefaultOptions()
	sys, err := invitro.NewSystem(96, MediumUL, 0, 0)
	if err != nil {
		return simResult{}, err
	}
	r, err := invitro.Armitage(c, 1, sys, o) // cell-free well: medium capacity
	if err != nil {
		return simResult{}, err
	}
	p := r.Partition
	v := r.Volumes
	vmed := v.Water + p.Kaw*v.Air + p.Kpl*sys.SAreaM2*1000 // L, water-equivalent
	kcw := p.Kcw
	R := RadiusUM * 1e-6
	dr := R / Layers
	vol := make([]float64, Layers) // L
	area := make([]float64, Layers+1)
	var vsum float64
	for i := 0; i < Layers; i++ {
		ro, ri := R-float64(i)*dr, R-float64(i+1)*dr
		vol[i] = 4.0 / 3 * math.Pi * (ro*ro*ro - ri*ri*ri) * 1000
		area[i] = 4 * math.Pi * ro * ro
		vsum += vol[i]
	}
	// Conductances (L/h): D·A/Δr between layer centres; half a layer at the surface.
	g := make([]float64, Layers)
	g[0] = DeffM2s * area[0] / (dr / 2) * 1000 * 3600
	for i := 1; i < Layers; i++ {
		g[i] = DeffM2s * area[i] / dr * 1000 * 3600
	}
	mtot := 1.0 * v.Bulk // µmol at 1 µM
	f := func(_ float64, y, dy []float64) {
		cw := y[0] / vmed
		free := func(i int) float64 { return y[1+i] / (vol[i] * kcw) }
		j := g[0] * (cw - free(0))
		dy[0] = -j
		for i := 0; i < Layers; i++ {
			in := 0.0
			if i == 0 {
				in = j
			} else {
				in = g[i] * (free(i-1) - free(i))
			}
			out := 0.0
			if i+1 < Layers {
				out = g[i+1] * (free(i) - free(i+1))
			}
			dy[1+i] = in - out
		}
	}
	y0 := make([]float64, Layers+1)
	y0[0] = mtot
	ts := make([]float64, Steps+1)
	for i := range ts {
		fr := float64(i) / Steps
		ts[i] = dur * fr * fr
	}
	sol, err := ode.Solve(ode.Problem{Func: f, Y0: y0}, ts, ode.WithMethod(ode.Rosenbrock), ode.WithTolerances(1e-8, 1e-14), ode.WithAutonomous(), ode.WithConstantJacobian())
	if err != nil {
		return simResult{}, err
	}
	res := simResult{t: ts, medium: make([]float64, len(ts)), layer: make([][]float64, Layers), driver: make([][]float64, Layers), vol: vol, volSum: vsum, kcw: kcw}
	for i := range res.layer {
		res.layer[i] = make([]float64, len(ts))
		res.driver[i] = make([]float64, len(ts))
	}
	for k, y := range sol.Y {
		res.medium[k] = y[0] / vmed
		for i := 0; i < Layers; i++ {
			res.layer[i][k] = y[1+i] / vol[i]
			if k > 0 { // Haber driver: AUC/48 h (trapezoid)
				res.driver[i][k] = res.driver[i][k-1] + 0.5*(res.layer[i][k]+res.layer[i][k-1])*(ts[k]-ts[k-1])/tk2d.CalibrationHours
			}
		}
	}
	return res, nil
}

// IsInputError reports whether err is an input error and returns it.
func IsInputError(err error) (*InputError, bool) {
	var ie *InputError
	ok := errors.As(err, &ie)
	return ie, ok && strings.TrimSpace(ie.Field) != ""
}
