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
	"math"
	"strconv"
	"unsafe"
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
//
// The text is written into one buffer: numbers with strconv's formatting
// (fmt's %d and %.1f are strconv's AppendInt and AppendFloat 'f' 1), the
// points of the lines with appendFixed1, and the per-pixel-column decimation
// inlined in the loop over the points (no closure or interface call per
// point). The arithmetic of the axis transforms is the same expression as in
// the straightforward implementation, so every coordinate, hence every byte,
// is the same (ref_test.go keeps that implementation; equal_test.go and
// golden_test.go check it).
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
	logY := p.LogY

	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	npts := 0 // an estimate of the points drawn, to size the buffer
	for _, s := range p.Series {
		xs, ys := s.X, s.Y[:len(s.X)]
		for i, x := range xs {
			y := ys[i]
			if !finite(x) || !finite(y) || (logY && y <= 0) {
				continue
			}
			// The builtin min and max are math.Min and math.Max (also for
			// NaN and signed zeros).
			xmin, xmax = min(xmin, x), max(xmax, x)
			ymin, ymax = min(ymin, y), max(ymax, y)
		}
		npts += min(len(xs), 4*max(int(pw), 1))
	}
	if xmin > xmax { // no data
		xmin, xmax, ymin, ymax = 0, 1, 0, 1
		if logY {
			ymin, ymax = 1, 10
		}
	}
	if logY && p.YMin > 0 && ymin < p.YMin {
		ymin = p.YMin
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	// The axis transforms: px = left + pw*(x-xlo)/xden and
	// py = top + ph*(1-(v-ylo)/yden) with v = log10(y) or y.
	var yticks []float64
	var ylo, yden float64
	if logY {
		lo, hi := math.Floor(math.Log10(ymin)), math.Ceil(math.Log10(ymax))
		if hi == lo {
			hi = lo + 1
		}
		for e := lo; e <= hi; e++ {
			yticks = append(yticks, math.Pow(10, e))
		}
		ylo, yden = lo, hi-lo
	} else {
		if ymin > 0 {
			ymin = 0
		}
		if ymax == ymin {
			ymax = ymin + 1
		}
		yticks = niceTicks(ymin, ymax)
		lo, hi := yticks[0], yticks[len(yticks)-1]
		ylo, yden = lo, hi-lo
	}
	fy := func(y float64) float64 {
		if logY {
			return top + ph*(1-(math.Log10(y)-ylo)/yden)
		}
		return top + ph*(1-(y-ylo)/yden)
	}
	xticks := niceTicks(xmin, xmax)
	xlo := xticks[0]
	xden := xticks[len(xticks)-1] - xlo

	b := make([]byte, 0, 1024+len(p.Title)+len(p.XLabel)+len(p.YLabel)+
		200*(len(yticks)+len(xticks))+300*len(p.Series)+12*npts)
	b = append(b, `<svg xmlns="http://www.w3.org/2000/svg" width="`...)
	b = strconv.AppendInt(b, int64(w), 10)
	b = append(b, `" height="`...)
	b = strconv.AppendInt(b, int64(h), 10)
	b = append(b, `" viewBox="0 0 `...)
	b = strconv.AppendInt(b, int64(w), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(h), 10)
	b = append(b, `" font-family="sans-serif" font-size="12">`...)
	b = append(b, `<rect width="`...)
	b = strconv.AppendInt(b, int64(w), 10)
	b = append(b, `" height="`...)
	b = strconv.AppendInt(b, int64(h), 10)
	b = append(b, `" fill="#fff"/>`...)
	if p.Title != "" {
		b = append(b, `<text x="`...)
		b = appendF1(b, left+pw/2)
		b = append(b, `" y="22" text-anchor="middle" font-size="14" font-weight="bold">`...)
		b = appendEsc(b, p.Title)
		b = append(b, `</text>`...)
	}
	// Grid and ticks.
	for _, t := range yticks {
		y := fy(t)
		b = appendLine(b, left, y, left+pw, y)
		b = append(b, ` stroke="#e5e5e5"/><text x="`...)
		b = appendF1(b, left-6)
		b = append(b, `" y="`...)
		b = appendF1(b, y)
		b = append(b, `" text-anchor="end" dominant-baseline="middle">`...)
		b = appendTick(b, t)
		b = append(b, `</text>`...)
	}
	for _, t := range xticks {
		x := left + pw*(t-xlo)/xden
		b = appendLine(b, x, top, x, top+ph)
		b = append(b, ` stroke="#e5e5e5"/><text x="`...)
		b = appendF1(b, x)
		b = append(b, `" y="`...)
		b = appendF1(b, top+ph+16)
		b = append(b, `" text-anchor="middle">`...)
		b = appendTick(b, t)
		b = append(b, `</text>`...)
	}
	b = append(b, `<rect`...)
	b = appendRect(b, left, top, pw, ph)
	b = append(b, ` fill="none" stroke="#333"/><text x="`...)
	b = appendF1(b, left+pw/2)
	b = append(b, `" y="`...)
	b = appendF1(b, float64(h)-12)
	b = append(b, `" text-anchor="middle">`...)
	b = appendEsc(b, p.XLabel)
	b = append(b, `</text><text transform="translate(16,`...)
	b = appendF1(b, top+ph/2)
	b = append(b, `) rotate(-90)" text-anchor="middle">`...)
	b = appendEsc(b, p.YLabel)
	b = append(b, `</text>`...)
	// Lines, clipped to the plot area.
	b = append(b, `<clipPath id="area"><rect`...)
	b = appendRect(b, left, top, pw, ph)
	b = append(b, `/></clipPath>`...)
	for i, s := range p.Series {
		col := palette[i%len(palette)]
		b = append(b, `<polyline clip-path="url(#area)" fill="none" stroke="`...)
		b = append(b, col...)
		b = append(b, `" stroke-width="1.8" points="`...)
		b = appendPolyline(b, s.X, s.Y, logY, ymin, left, pw, xlo, xden, top, ph, ylo, yden)
		b = append(b, `"/>`...)
		ly := top + 10 + 18*float64(i)
		b = appendLine(b, left+pw+12, ly, left+pw+34, ly)
		b = append(b, ` stroke="`...)
		b = append(b, col...)
		b = append(b, `" stroke-width="2.5"/><text x="`...)
		b = appendF1(b, left+pw+40)
		b = append(b, `" y="`...)
		b = appendF1(b, ly)
		b = append(b, `" dominant-baseline="middle">`...)
		b = appendEsc(b, s.Name)
		b = append(b, `</text>`...)
	}
	b = append(b, `</svg>`...)
	return unsafe.String(unsafe.SliceData(b), len(b)) // b is not used again
}

// appendPolyline appends the points of a series: the pixel coordinates of
// its drawable points (finite; positive on a log axis, raised to ymin)
// decimated per pixel column to first, lowest, highest and last, each as
// "x,y" with one decimal, separated by spaces. The decimation is the
// decimator's (add per point, flush per column) written out in the loop.
func appendPolyline(b []byte, xs, ys []float64, logY bool, ymin, left, pw, xlo, xden, top, ph, ylo, yden float64) []byte {
	ys = ys[:len(xs)]
	var d column
	sep := false // a point was written: the next one needs a separator
	for k, x := range xs {
		y := ys[k]
		if !finite(x) || !finite(y) || (logY && y <= 0) {
			continue
		}
		var py float64
		if logY {
			if y < ymin {
				y = ymin
			}
			py = top + ph*(1-(math.Log10(y)-ylo)/yden)
		} else {
			py = top + ph*(1-(y-ylo)/yden)
		}
		px := left + pw*(x-xlo)/xden
		c := math.Floor(px)
		if d.n > 0 && c != d.col {
			b, sep = d.appendPoints(b, sep)
		}
		d.add(c, px, py)
	}
	b, _ = d.appendPoints(b, sep)
	return b
}

// column is the state of the decimation of one pixel column (or bucket):
// its index, number of points, and first, lowest, highest and last point.
type column struct {
	col                 float64
	n                   int
	first, lo, hi, last point
}

type point struct{ x, y float64 }

// add adds a point of column c (the caller flushes when c changes).
func (d *column) add(c, x, y float64) {
	p := point{x, y}
	if d.n == 0 {
		d.col, d.first, d.lo, d.hi = c, p, p, p
	}
	if y < d.lo.y {
		d.lo = p
	}
	if y > d.hi.y {
		d.hi = p
	}
	d.last = p
	d.n++
}

// points returns the column's points to draw (first, lowest and highest in
// x order, last; a point equal to the one before is dropped) and empties it.
func (d *column) points() (pts [4]point, n int) {
	if d.n == 0 {
		return pts, 0
	}
	d.n = 0
	p1, p2 := d.lo, d.hi
	if d.hi.x < d.lo.x {
		p1, p2 = d.hi, d.lo
	}
	pts[0], n = d.first, 1
	// A NaN coordinate is never equal to the previous point's.
	if p1.x != pts[n-1].x || p1.y != pts[n-1].y {
		pts[n], n = p1, n+1
	}
	if p2.x != pts[n-1].x || p2.y != pts[n-1].y {
		pts[n], n = p2, n+1
	}
	if d.last.x != pts[n-1].x || d.last.y != pts[n-1].y {
		pts[n], n = d.last, n+1
	}
	return pts, n
}

// appendPoints appends the column's points as "x,y", separated by spaces
// (sep: whether a point precedes them), and empties the column.
func (d *column) appendPoints(b []byte, sep bool) ([]byte, bool) {
	pts, n := d.points()
	for _, p := range pts[:n] {
		if sep {
			b = append(b, ' ')
		}
		b = appendFixed1(b, p.x)
		b = append(b, ',')
		b = appendFixed1(b, p.y)
		sep = true
	}
	return b, sep
}

// appendF1 appends v as fmt's %.1f does.
func appendF1(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'f', 1, 64) }

// appendLine appends `<line x1=".." y1=".." x2=".." y2=".."`.
func appendLine(b []byte, x1, y1, x2, y2 float64) []byte {
	b = append(b, `<line x1="`...)
	b = appendF1(b, x1)
	b = append(b, `" y1="`...)
	b = appendF1(b, y1)
	b = append(b, `" x2="`...)
	b = appendF1(b, x2)
	b = append(b, `" y2="`...)
	b = appendF1(b, y2)
	return append(b, '"')
}

// appendRect appends ` x=".." y=".." width=".." height=".."`.
func appendRect(b []byte, x, y, w, h float64) []byte {
	b = append(b, ` x="`...)
	b = appendF1(b, x)
	b = append(b, `" y="`...)
	b = appendF1(b, y)
	b = append(b, `" width="`...)
	b = appendF1(b, w)
	b = append(b, `" height="`...)
	b = appendF1(b, h)
	return append(b, '"')
}

// appendEsc appends html.EscapeString(s).
func appendEsc(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b = append(b, "&amp;"...)
		case '\'':
			b = append(b, "&#39;"...)
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '"':
			b = append(b, "&#34;"...)
		default:
			b = append(b, c)
		}
	}
	return b
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

// appendTick appends a tick label.
func appendTick(b []byte, v float64) []byte {
	a := math.Abs(v)
	if v == 0 {
		return append(b, '0')
	}
	if a >= 1e5 || a < 1e-3 {
		return strconv.AppendFloat(b, v, 'e', 0, 64)
	}
	return strconv.AppendFloat(b, v, 'g', 4, 64)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// appendFixed1 appends v with one decimal, as strconv.AppendFloat(dst, v,
// 'f', 1, 64) does, without strconv's general path in the common case (a
// pixel coordinate below 10000 well away from a rounding tie): the digits are
// written directly (strconv.AppendInt costs about 70 ns in wasm).
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
	if n < 100000 {
		u := uint32(n)
		q, f := u/10, byte('0'+u%10)
		switch {
		case q < 10:
			return append(dst, byte('0'+q), '.', f)
		case q < 100:
			return append(dst, byte('0'+q/10), byte('0'+q%10), '.', f)
		case q < 1000:
			return append(dst, byte('0'+q/100), byte('0'+q/10%10), byte('0'+q%10), '.', f)
		}
		return append(dst, byte('0'+q/1000), byte('0'+q/100%10), byte('0'+q/10%10), byte('0'+q%10), '.', f)
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
	scale, lastCol := 1/w, float64(buckets-1)
	xs, ys := make([]float64, 0, n), make([]float64, 0, n)
	y = y[:m]
	var d column
	for k, xk := range x[:m] {
		yk := y[k]
		if !finite(xk) || !finite(yk) {
			continue
		}
		// The bucket: min(floor((x−x0)/w), last); pixel columns (floor(x))
		// when 1/w underflows to 0.
		c := math.Floor(xk)
		if scale != 0 {
			c = min(math.Floor((xk-x0)*scale), lastCol)
		}
		if d.n > 0 && c != d.col {
			pts, np := d.points()
			for _, p := range pts[:np] {
				xs, ys = append(xs, p.x), append(ys, p.y)
			}
		}
		d.add(c, xk, yk)
	}
	pts, np := d.points()
	for _, p := range pts[:np] {
		xs, ys = append(xs, p.x), append(ys, p.y)
	}
	return xs, ys
}
