package model

import (
	"fmt"

	"toxgate/sdk/plot"
)

// plotProfiles draws plasma and tissue concentrations on a log axis.
func plotProfiles(out *Output) string {
	ts := &out.TimeSeries
	p := plot.New(fmt.Sprintf("%s, %s, %g mg/kg/day oral (httk pbtk)", out.Chemical.Name, out.Species,
		out.Dosing.DailyDoseMgPerKg), "time (day)", "concentration (µM)")
	p.LogY = true
	var cmax float64
	for _, v := range ts.Cliver {
		cmax = max(cmax, v)
	}
	for _, v := range ts.Cplasma {
		cmax = max(cmax, v)
	}
	p.YMin = cmax * 1e-4
	p.Add("plasma", ts.Time, ts.Cplasma)
	p.Add("liver", ts.Time, ts.Cliver)
	p.Add("kidney", ts.Time, ts.Ckidney)
	p.Add("gut", ts.Time, ts.Cgut)
	p.Add("lung", ts.Time, ts.Clung)
	p.Add("rest of body", ts.Time, ts.Crest)
	return p.SVG()
}
