package model

import (
	"fmt"
	"math"

	"toxgate/sdk/ode"
	"toxgate/sdk/plot"
)

func summarize(ph *Physiology, sol *ode.Solution, doseMg, doseUmol, tinf float64) *Output {
	n := len(sol.T)
	// The concentrations in µM, one series per compartment, computed in one
	// pass over the solution (plasma, the tissues, then the heart's four).
	const nSeries = 1 + nTissues + 4
	names := [nSeries]string{"plasma"}
	copy(names[1:], tissueNames[:])
	copy(names[1+nTissues:], []string{"heart", "heart_extracellular", "heart_intracellular_free", "heart_DNA_bound"})
	backing := make([]float64, 2*nSeries*n)
	var u, g [nSeries][]float64 // µM and ng/mL
	for j := range u {
		u[j] = backing[j*n : (j+1)*n : (j+1)*n]
		g[j] = backing[(nSeries+j)*n : (nSeries+j+1)*n : (nSeries+j+1)*n]
	}
	vh := ph.vHeartEC + ph.vHeartIC
	for k, y := range sol.Y {
		y = y[:nStates]
		u[0][k] = y[sVen] / ph.vven / BP
		for i := range nTissues {
			u[1+i][k] = y[sTissue0+i] / ph.v[i]
		}
		ct := y[sHeartIC] / ph.vHeartIC
		ce := freeIntracellular(ct)
		u[1+nTissues][k] = (y[sHeartEC] + y[sHeartIC]) / vh
		u[2+nTissues][k] = y[sHeartEC] / ph.vHeartEC
		u[3+nTissues][k] = ce
		u[4+nTissues][k] = ct - ce
	}
	um, ng := make(map[string][]float64, nSeries), make(map[string][]float64, nSeries)
	for j, name := range names {
		for k, v := range u[j] {
			g[j][k] = v * MW // µM × g/mol = µg/L = ng/mL
		}
		um[name], ng[name] = u[j], g[j]
	}
	out := &Output{Model: Name, Version: Version, Physiology: ph,
		Series: Series{TimeH: sol.T, NgPerML: ng, UM: um},
		Units: map[string]string{"time_h": "h", "ng_per_mL": "ng/mL", "uM": "µmol/L",
			"heart_intracellular_free": "per litre of intracellular water", "heart_DNA_bound": "per litre of heart tissue intracellular volume",
			"AUC": "mg·h/L", "dose_mg": "mg/m²", "age": "years", "weight": "kg", "height": "cm"}}
	sm := &out.Summary
	sm.DoseMgTotal, sm.DoseUmol = doseMg, doseUmol
	cp := ng["plasma"]
	for k, c := range cp {
		if c > sm.CmaxNgPerML {
			sm.CmaxNgPerML, sm.TmaxH = c, sol.T[k]
		}
	}
	for _, c := range ng["heart"] {
		sm.HeartCmaxNgPerML = math.Max(sm.HeartCmaxNgPerML, c)
	}
	last := sol.Y[n-1]
	sm.AUC0tMgHPerL = last[sAUCp] * MW / 1000
	sm.HeartAUCMgHPerL = last[sAUCh] * MW / 1000
	sm.HeartDNABoundAUCMgH = last[sAUChb] * MW / 1000
	lz := terminalSlope(sol.T, cp)
	if lz > 0 {
		sm.TerminalHalfLifeH = math.Ln2 / lz
		sm.AUCInfMgHPerL = sm.AUC0tMgHPerL + cp[n-1]/1000/lz
		sm.ClearanceLPerH = doseMg / sm.AUCInfMgHPerL
	}
	rate := doseUmol / tinf
	for k, y := range sol.Y {
		dosed := rate * math.Min(sol.T[k], tinf)
		if dosed <= 0 {
			continue
		}
		var total float64
		for i := sVen; i <= sElimRen; i++ {
			total += y[i]
		}
		sm.MassBalanceError = math.Max(sm.MassBalanceError, math.Abs(total-dosed)/dosed)
	}
	out.PlotSVG = plotProfiles(out)
	return out
}

// terminalSlope fits log C over the last third of the profile (at least
// the last 24 h) by least squares and returns λz (1/h).
func terminalSlope(t, c []float64) float64 {
	tend := t[len(t)-1]
	from := tend - math.Max(24, tend/3)
	var sx, sy, sxx, sxy, m float64
	for k := range t {
		if t[k] < from || c[k] <= 0 {
			continue
		}
		x, y := t[k], math.Log(c[k])
		sx, sy, sxx, sxy, m = sx+x, sy+y, sxx+x*x, sxy+x*y, m+1
	}
	if m < 3 {
		return 0
	}
	return -(m*sxy - sx*sy) / (m*sxx - sx*sx)
}

// plotPoints bounds the points of each plotted curve.
const plotPoints = 500

// plotNames are the plotted compartments (keys of the time series) and
// their legend entries.
var plotNames = [...][2]string{{"plasma", "plasma"}, {"heart", "heart"}, {"heart_DNA_bound", "heart, DNA-bound"},
	{"heart_intracellular_free", "heart, intracellular free"}, {"liver", "liver"}, {"kidney", "kidney"}, {"muscle", "muscle"}}

// plotProfiles draws the concentrations on a log axis that covers every
// plotted value.
func plotProfiles(out *Output) string {
	p := plot.New(fmt.Sprintf("Doxorubicin %.0f mg IV (%.3g m²), plasma C_{max} %.4g ng/mL", out.Summary.DoseMgTotal,
		out.Physiology.BSA, out.Summary.CmaxNgPerML), "time (h)", "concentration (ng/mL)")
	p.LogY = true
	s := out.Series
	for _, n := range plotNames {
		// ≤ 500 points a curve (4 per bucket of about 4 pixel columns): the
		// same drawing as from all ~800 output times, at less cost.
		x, y := plot.Thin(s.TimeH, s.NgPerML[n[0]], plotPoints)
		p.Add(n[1], x, y)
	}
	return p.SVG()
}
