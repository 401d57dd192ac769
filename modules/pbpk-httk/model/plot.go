package model

import (
	"fmt"
	"math"
	"strconv"

	"toxgate/sdk/plot"
)

// plotBlocks bounds the blocks of grid times drawn (up to 4 points each):
// 250 blocks are about two pixel columns each, the plot's own resolution
// (first, lowest, highest and last point per column), so the drawing is the
// same as from every time while the SVG is built from ≤ 1000 points a curve
// (before 1.1.1: 1000 blocks, ≤ 4000 points).
const plotBlocks = 250

// plotNames are the plotted concentrations, in the order of plotData.add.
var plotNames = [...]string{"plasma", "liver", "kidney", "gut", "lung", "rest of body"}

// plotData collects the plotted concentrations over the whole tsteps grid,
// reduced per block of rows to the first, lowest, highest and last point.
type plotData struct {
	thin  int
	x, y  [len(plotNames)][]float64
	blk   [len(plotNames)]struct{ first, lo, hi, last [2]float64 }
	inBlk int
}

// newPlotData makes room for n grid times thinned by blocks of thin (at most
// four points a block), so that the series never grow by copying.
func newPlotData(thin, n int) *plotData {
	d := &plotData{thin: thin}
	points := n
	if thin > 1 {
		points = 4 * (n/thin + 3)
	}
	for i := range d.x {
		d.x[i], d.y[i] = make([]float64, 0, points), make([]float64, 0, points)
	}
	return d
}

// add records the values at time t; row says that t is a row of time_series
// (a block ends there).
func (d *plotData) add(row bool, t float64, v ...float64) {
	if d.thin == 1 {
		for i, c := range v {
			d.x[i], d.y[i] = append(d.x[i], t), append(d.y[i], c)
		}
	} else {
		for i, c := range v {
			b := &d.blk[i]
			p := [2]float64{t, c}
			if d.inBlk == 0 {
				b.first, b.lo, b.hi = p, p, p
			}
			if c < b.lo[1] {
				b.lo = p
			}
			if c > b.hi[1] {
				b.hi = p
			}
			b.last = p
		}
		d.inBlk++
		if row {
			for i := range v {
				b := &d.blk[i]
				pts := [4][2]float64{b.first, b.lo, b.hi, b.last}
				if b.hi[0] < b.lo[0] {
					pts[1], pts[2] = b.hi, b.lo
				}
				for k, p := range pts {
					if k == 0 || p != pts[k-1] {
						d.x[i], d.y[i] = append(d.x[i], p[0]), append(d.y[i], p[1])
					}
				}
			}
			d.inBlk = 0
		}
	}
}

// plotProfiles draws plasma and tissue concentrations on a log axis that
// covers every plotted value.
func plotProfiles(out *Output, d *plotData) string {
	p := plot.New(fmt.Sprintf("%s, %s, %g mg/kg/day oral (httk pbtk), plasma C_{max} %.3g µM", out.Chemical.Name, out.Species,
		out.Dosing.DailyDoseMgPerKg, out.Summary.CmaxUM), "time (day)", "concentration (µM)")
	p.LogY = true
	for i, name := range plotNames {
		p.Add(name, d.x[i], d.y[i])
	}
	return p.SVG()
}

// spacing names a time step given in hours.
func spacing(h float64) string {
	switch {
	case h < 1:
		return strconv.FormatFloat(h*60, 'g', 4, 64) + " min"
	case h < 24 || math.Mod(h, 24) != 0:
		return strconv.FormatFloat(h, 'g', 4, 64) + " h"
	}
	return strconv.FormatFloat(h/24, 'g', 4, 64) + " days"
}
