package plot_test

import (
	"testing"

	"toxgate/sdk/plot"
)

// BenchmarkDoxorubicin draws the doxorubicin model's 7-day plot (7 curves of
// ~800 output times): "thin+svg" is what the model does per call, "svg" the
// drawing of the thinned curves alone, "thin" the thinning alone, "axes" the
// plot without points.
func BenchmarkDoxorubicin(b *testing.B) {
	c := readDoxoCases(b)["doxorubicin-ref-7d.json.gz"]
	b.Run("thin+svg", func(b *testing.B) {
		for b.Loop() {
			doxoPlot(c)
		}
	})
	p := plot.New(c.Title, "time (h)", "concentration (ng/mL)")
	p.LogY = true
	for _, n := range c.Names {
		x, y := plot.Thin(c.TimeH, c.NgPerML[n], 500)
		p.Add(doxoLabels[n], x, y)
	}
	b.Run("svg", func(b *testing.B) {
		for b.Loop() {
			_ = p.SVG()
		}
	})
	b.Run("thin", func(b *testing.B) {
		for b.Loop() {
			for _, n := range c.Names {
				plot.Thin(c.TimeH, c.NgPerML[n], 500)
			}
		}
	})
	e := plot.New(c.Title, "time (h)", "concentration (ng/mL)")
	e.LogY = true
	for _, n := range c.Names {
		e.Add(n, nil, nil)
	}
	b.Run("axes", func(b *testing.B) {
		for b.Loop() {
			_ = e.SVG()
		}
	})
	q := plot.New(c.Title, "time (h)", "concentration (ng/mL)")
	for _, n := range c.Names {
		q.Add(n, c.TimeH, c.NgPerML[n])
	}
	b.Run("svg-linear-raw", func(b *testing.B) {
		for b.Loop() {
			_ = q.SVG()
		}
	})
}
