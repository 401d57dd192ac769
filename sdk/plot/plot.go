// Package plot draws simple SVG line plots (time courses of simulations):
// axes with ticks and labels, optional log-scale y axis, a legend and a
// title. Pure Go, no I/O; the result is an SVG document as a string.
//
//	p := plot.New("Doxorubicin, 60 mg/m²", "time (h)", "concentration (ng/mL)")
//	p.LogY = true
//	p.Add("plasma", t, cp)
//	p.Add("heart", t, ch)
//	svg := p.SVG()
package plot

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Series is one named line.
type Series struct {
	Name string
	X, Y []float64
}

// Plot is a line plot. Set fields before calling SVG.
type Plot struct {
	Title, XLabel, YLabel string
	// Width and Height in pixels (default 720×440).
	Width, Height int
	// LogY draws the y axis on a log10 scale; non-positive values are
	// skipped. YMin, when > 0, clips the lower end of a log axis.
	LogY bool
	YMin float64
	// Series holds the lines in drawing order.
	Series []Series
}

// palette is a colour-blind-friendly palette (Okabe & Ito 2008).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// New returns a plot with a title and axis labels (include units).
func New(title, xlabel, ylabel string) *Plot {
	return &Plot{Title: title, XLabel: xlabel, YLabel: ylabel, Width: 720, Height: 440}
}

// Add appends a series; x and y must have the same length.
func (p *Plot) Add(name string, x, y []float64) {
	n := min(len(x), len(y))
	p.Series = append(p.Series, Series{Name: name, X: x[:n], Y: y[:n]})
}

// SVG renders the plot.
func (p *Plot) SVG() string {
	w, h := p.Width, p.Height
	if w <= 0 {
		w = 720
	}
	if h <= 0 {
		h = 440
	}
	const left, right, top, bottom = 78.0, 150.0, 36.0, 52.0
	pw, ph := float64(w)-left-right, float64(h)-top-bottom

	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for i := range s.X {
			x, y := s.X[i], s.Y[i]
			if !finite(x) || !finite(y) || (p.LogY && y <= 0) {
				continue
			}
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
		}
	}
	if xmin > xmax { // no data
		xmin, xmax, ymin, ymax = 0, 1, 0, 1
		if p.LogY {
			ymin, ymax = 1, 10
		}
	}
	if p.LogY && p.YMin > 0 && ymin < p.YMin {
		ymin = p.YMin
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	var yticks []float64
	var fy func(float64) float64
	if p.LogY {
		lo, hi := math.Floor(math.Log10(ymin)), math.Ceil(math.Log10(ymax))
		if hi == lo {
			hi = lo + 1
		}
		for e := lo; e <= hi; e++ {
			yticks = append(yticks, math.Pow(10, e))
		}
		fy = func(y float64) float64 { return top + ph*(1-(math.Log10(y)-lo)/(hi-lo)) }
	} else {
		if ymin > 0 {
			ymin = 0
		}
		if ymax == ymin {
			ymax = ymin + 1
		}
		yticks = niceTicks(ymin, ymax)
		lo, hi := yticks[0], yticks[len(yticks)-1]
		fy = func(y float64) float64 { return top + ph*(1-(y-lo)/(hi-lo)) }
	}
	xticks := niceTicks(xmin, xmax)
	xlo, xhi := xticks[0], xticks[len(xticks)-1]
	fx := func(x float64) float64 { return left + pw*(x-xlo)/(xhi-xlo) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/>`, w, h)
	if p.Title != "" {
		fmt.Fprintf(&b, `<text x="%.1f" y="22" text-anchor="middle" font-size="14" font-weight="bold">%s</text>`, left+pw/2, esc(p.Title))
	}
	// Grid and ticks.
	for _, t := range yticks {
		y := fy(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`, left, y, left+pw, y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, left-6, y, fmtTick(t))
	}
	for _, t := range xticks {
		x := fx(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`, x, top, x, top+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, top+ph+16, fmtTick(t))
	}
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#333"/>`, left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, left+pw/2, float64(h)-12, esc(p.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(16,%.1f) rotate(-90)" text-anchor="middle">%s</text>`, top+ph/2, esc(p.YLabel))
	// Lines, clipped to the plot area.
	fmt.Fprintf(&b, `<clipPath id="area"><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"/></clipPath>`, left, top, pw, ph)
	var pts []byte
	for i, s := range p.Series {
		col := palette[i%len(palette)]
		pts = slices.Grow(pts[:0], 16*min(len(s.X), 4*int(pw)))
		d := decimator{emit: func(px, py float64) {
			pts = appendFixed1(pts, px)
			pts = append(pts, ',')
			pts = appendFixed1(pts, py)
			pts = append(pts, ' ')
		}}
		for k := range s.X {
			x, y := s.X[k], s.Y[k]
			if !finite(x) || !finite(y) || (p.LogY && y <= 0) {
				continue
			}
			if p.LogY && y < ymin {
				y = ymin
			}
			d.add(fx(x), fy(y))
		}
		d.flush()
		fmt.Fprintf(&b, `<polyline clip-path="url(#area)" fill="none" stroke="%s" stroke-width="1.8" points="`, col)
		b.Write(bytes.TrimSpace(pts))
		b.WriteString(`"/>`)
		ly := top + 10 + 18*float64(i)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"/>`, left+pw+12, ly, left+pw+34, ly, col)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`, left+pw+40, ly, esc(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// niceTicks returns about 5–10 round tick values covering [lo, hi].
func niceTicks(lo, hi float64) []float64 {
	span := hi - lo
	step := math.Pow(10, math.Floor(math.Log10(span/5)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if span/(step*m) <= 8 {
			step *= m
			break
		}
	}
	start := math.Floor(lo/step) * step
	var t []float64
	for v := start; v <= hi+step*0.999; v += step {
		t = append(t, math.Round(v/step)*step)
	}
	if len(t) < 2 {
		t = append(t, start+step)
	}
	return t
}

func fmtTick(v float64) string {
	a := math.Abs(v)
	if v == 0 {
		return "0"
	}
	if a >= 1e5 || a < 1e-3 {
		return strconv.FormatFloat(v, 'e', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func esc(s string) string { return html.EscapeString(s) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// decimator reduces a dense polyline to at most four points per pixel
// column (first, lowest, highest, last), which keeps peaks and troughs of
// long simulations while bounding the SVG size.
type decimator struct {
	emit func(x, y float64)
	// scale and origin map x to the column (bucket) index
	// min(floor((x−origin)·scale), last); zero scale means columns of width 1
	// from 0 (pixels).
	scale, origin, lastCol float64
	col                    float64
	n                      int
	first, lo, hi, last    [2]float64
}

func (d *decimator) add(x, y float64) {
	c := math.Floor(x)
	if d.scale != 0 {
		c = math.Min(math.Floor((x-d.origin)*d.scale), d.lastCol)
	}
	if d.n > 0 && c != d.col {
		d.flush()
	}
	p := [2]float64{x, y}
	if d.n == 0 {
		d.col, d.first, d.lo, d.hi = c, p, p, p
	}
	if y < d.lo[1] {
		d.lo = p
	}
	if y > d.hi[1] {
		d.hi = p
	}
	d.last = p
	d.n++
}

func (d *decimator) flush() {
	if d.n == 0 {
		return
	}
	pts := [4][2]float64{d.first, d.lo, d.hi, d.last}
	if d.hi[0] < d.lo[0] {
		pts[1], pts[2] = d.hi, d.lo
	}
	prev := [2]float64{math.NaN(), math.NaN()}
	for _, p := range pts {
		if p != prev {
			d.emit(p[0], p[1])
			prev = p
		}
	}
	d.n = 0
}

// appendFixed1 appends v with one decimal, as strconv.AppendFloat(dst, v,
// 'f', 1, 64) does, without strconv's general path in the common case (a
// pixel coordinate well away from a rounding tie).
func appendFixed1(dst []byte, v float64) []byte {
	if !(math.Abs(v) < 1e9) {
		return strconv.AppendFloat(dst, v, 'f', 1, 64)
	}
	x := math.Abs(v) * 10
	r := math.Floor(x)
	frac := x - r
	if math.Abs(frac-0.5) < 1e-6 { // near a tie: let strconv round the exact value
		return strconv.AppendFloat(dst, v, 'f', 1, 64)
	}
	n := int64(r)
	if frac > 0.5 {
		n++
	}
	if math.Signbit(v) {
		dst = append(dst, '-')
	}
	dst = strconv.AppendInt(dst, n/10, 10)
	return append(dst, '.', byte('0'+n%10))
}

// Thin reduces a dense series to at most about n points for Add: the x range
// is cut into n/4 equal buckets and each keeps its first, lowest, highest and
// last point (in x order), the rule the plot itself applies per pixel column.
// With n of about the plot's width in pixels the drawing looks the same while
// the plot has far fewer points to place. Points with a non-finite coordinate
// are dropped; x must be non-decreasing. Series of at most n points are
// returned as they are.
func Thin(x, y []float64, n int) ([]float64, []float64) {
	m := min(len(x), len(y))
	if m <= n || n < 8 {
		return x[:m], y[:m]
	}
	buckets := n / 4
	x0, x1 := x[0], x[m-1]
	if !finite(x0) || !finite(x1) || x1 <= x0 {
		return x[:m], y[:m]
	}
	w := (x1 - x0) / float64(buckets)
	xs, ys := make([]float64, 0, n), make([]float64, 0, n)
	d := decimator{emit: func(px, py float64) { xs, ys = append(xs, px), append(ys, py) }, scale: 1 / w, origin: x0, lastCol: float64(buckets - 1)}
	for k := 0; k < m; k++ {
		if finite(x[k]) && finite(y[k]) {
			d.add(x[k], y[k])
		}
	}
	d.flush()
	return xs, ys
}
