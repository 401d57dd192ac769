// Package gonumcmp draws the doxorubicin model's plot (sdk/plot's testdata)
// with gonum/plot's SVG backend and with toxgate's sdk/plot, for the
// comparison in sdk/plot/RATIONALE.md: module size and time per plot in
// WebAssembly.
package gonumcmp

import (
	"bytes"
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"toxgate/sdk/plot"
	"toxgate/sdk/plot/internal/gonumcmp/doxocase"
)

var okabeIto = []color.RGBA{{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}}

// Gonum draws c with gonum/plot (log y axis, legend to the right of the
// data) as an SVG document, fonts referenced by name (not embedded).
func Gonum(c *doxocase.Case) ([]byte, error) {
	p := gplot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = "time (h)"
	p.Y.Label.Text = "concentration (ng/mL)"
	p.Y.Scale = gplot.LogScale{}
	p.Y.Tick.Marker = gplot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	for i, name := range c.Names {
		x, y := plot.Thin(c.TimeH, c.NgPerML[name], 500)
		xy := make(plotter.XYs, 0, len(x))
		for k := range x {
			if y[k] > 0 { // LogScale panics on values ≤ 0
				xy = append(xy, plotter.XY{X: x[k], Y: y[k]})
			}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color = okabeIto[i%len(okabeIto)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(name, l)
	}
	// The legend beside the data: shrink the data area by the legend's
	// width and draw the legend in the space left.
	const w, h = 7.5 * vg.Inch, 4.6 * vg.Inch
	cv := vgsvg.New(w, h)
	dc := draw.New(cv)
	lw := p.Legend.Rectangle(dc).Size().X + vg.Points(12)
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	p.Legend.Top = true
	p.Legend.Draw(draw.Crop(dc, w-lw, 0, 0, 0))
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
