// Package plot draws line and scatter plots as SVG documents, for the plots
// the models return under the key "plot_svg" (see README.md): a title,
// axes with ticks and labels with units, linear or log10 scales that cover
// every drawn value, lines (solid or dashed) and markers, and a legend
// beside the data area, never over it. Text is real SVG text in UTF-8 (µ,
// ², −) with subscripts and superscripts ("C_{max}", "10^{−4}"; see
// appendText). Pure Go, no I/O, no fonts: widths of text are estimated.
//
//	p := plot.New("Doxorubicin, 60 mg/m²", "time (h)", "concentration (ng/mL)")
//	p.LogY = true
//	p.Add("plasma", t, cp)
//	p.Add("heart", t, ch).Dashed = true
//	svg := p.SVG()
//
// Several panels share one document with Stack. The drawn document carries
// what a reader (or a test) needs to check it: the data area is the <rect
// class="plot-area"> with data-x-scale, data-x-range, data-y-scale and
// data-y-range (the axis ends in data units), the legend is the <g
// class="legend"> with its frame <rect class="legend-box">, the axis labels
// are <text class="x-label"> and <text class="y-label">.
package plot

import (
	"math"
	"strconv"
	"unsafe"
)

// Series is one named line or set of markers.
type Series struct {
	// Name is the legend entry (with marks, see the package doc); a series
	// without a name has none.
	Name string
	X, Y []float64
	// Color is an SVG colour; empty: Palette[i] for the i-th series.
	Color string
	// Dashed draws the line dashed; Markers draws a dot at each point
	// instead of a line.
	Dashed, Markers bool
}

// points are X and Y cut to the same length.
func (s *Series) points() ([]float64, []float64) {
	n := min(len(s.X), len(s.Y))
	return s.X[:n], s.Y[:n]
}

// Plot is one panel. Set fields before calling SVG.
type Plot struct {
	// Title, XLabel and YLabel are text with marks; labels name the
	// quantity and its unit, e.g. "concentration (µM)".
	Title, XLabel, YLabel string
	// Width and Height in pixels (default 720×440).
	Width, Height int
	// LogX and LogY draw the axis on a log10 scale; values ≤ 0 are not
	// drawn on it (a log axis has no place for them), every other value is.
	LogX, LogY bool
	// Series holds the lines in drawing order.
	Series []Series
}

// Palette is a colour-blind-safe palette (Okabe & Ito 2008), in the order
// the series take it.
var Palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// New returns a plot with a title and axis labels (include units).
func New(title, xlabel, ylabel string) *Plot {
	return &Plot{Title: title, XLabel: xlabel, YLabel: ylabel, Width: 720, Height: 440}
}

// Add appends a line and returns it (to set Dashed, Markers or Color); x
// and y are cut to the same length.
func (p *Plot) Add(name string, x, y []float64) *Series {
	n := min(len(x), len(y))
	p.Series = append(p.Series, Series{Name: name, X: x[:n], Y: y[:n]})
	return &p.Series[len(p.Series)-1]
}

// Font sizes and the fixed parts of the layout, in pixels.
const (
	fontSize   = 12.0
	titleSize  = 14.0
	legendRow  = 18.0
	legendLine = 24.0 // the sample line of a legend entry
	legendGap  = 14.0 // between the data area and the legend
	minArea    = 160.0
)

// layout is a panel's size and the margins around its data area.
type layout struct {
	w, h                     float64
	left, right, top, bottom float64
	legendW, legendH         float64
	x, y                     axis
	entries                  int
}

func (p *Plot) layout() layout {
	l := layout{w: float64(p.Width), h: float64(p.Height)}
	if p.Width <= 0 {
		l.w = 720
	}
	if p.Height <= 0 {
		l.h = 440
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		xs, ys := s.points()
		for i, x := range xs {
			y := ys[i]
			if !p.drawable(x, y) {
				continue
			}
			xmin, xmax = minNotNaN(xmin, x), maxNotNaN(xmax, x)
			ymin, ymax = minNotNaN(ymin, y), maxNotNaN(ymax, y)
		}
	}
	l.x = newAxis(p.LogX, xmin, xmax, false)
	l.y = newAxis(p.LogY, ymin, ymax, true)
	tw := 0.0
	for _, t := range l.y.ticks {
		tw = math.Max(tw, textWidth(t.label, fontSize))
	}
	// Whole pixels for the margins, so that the data area's edges written
	// with one decimal are those the points are placed against.
	l.left = math.Ceil(10 + fontSize + 10 + tw + 8)
	l.top = 16
	if p.Title != "" {
		l.top = 40
	}
	l.bottom = 52
	nw := 0.0
	for _, s := range p.Series {
		if s.Name != "" {
			l.entries++
			nw = math.Max(nw, textWidth(s.Name, fontSize))
		}
	}
	l.right = 16
	if l.entries > 0 {
		l.legendW = math.Ceil(8 + legendLine + 6 + nw + 8)
		l.legendH = 6 + legendRow*float64(l.entries)
		l.right = legendGap + l.legendW + 8
	}
	l.w = math.Ceil(math.Max(l.w, l.left+minArea+l.right))
	l.h = math.Max(l.h, l.top+math.Max(minArea, l.legendH)+l.bottom)
	return l
}

// drawable reports whether (x, y) has a place on the axes.
func (p *Plot) drawable(x, y float64) bool {
	return finite(x) && finite(y) && (!p.LogX || x > 0) && (!p.LogY || y > 0)
}

// SVG renders the plot as an SVG document.
func (p *Plot) SVG() string {
	l := p.layout()
	b := make([]byte, 0, p.sizeHint())
	b = appendHeader(b, l.w, l.h)
	b = p.appendPanel(b, &l)
	b = append(b, `</svg>`...)
	return unsafe.String(unsafe.SliceData(b), len(b)) // b is not used again
}

// Stack renders panels one above another in one SVG document, their data
// areas aligned (the widest margins of any panel) and each panel a nested
// <svg> of its own height.
func Stack(panels ...*Plot) string {
	ls := make([]layout, len(panels))
	var w, h, left, right float64
	hint := 256
	for i, p := range panels {
		ls[i] = p.layout()
		w, left, right = math.Max(w, ls[i].w), math.Max(left, ls[i].left), math.Max(right, ls[i].right)
		h += ls[i].h
		hint += p.sizeHint()
	}
	b := make([]byte, 0, hint)
	b = appendHeader(b, w, h)
	y := 0.0
	for i, p := range panels {
		l := &ls[i]
		l.w, l.left, l.right = w, left, right
		b = append(b, `<svg x="0" y="`...)
		b = appendFixed1(b, y)
		b = append(b, `" width="`...)
		b = appendFixed1(b, l.w)
		b = append(b, `" height="`...)
		b = appendFixed1(b, l.h)
		b = append(b, `">`...)
		b = p.appendPanel(b, l)
		b = append(b, `</svg>`...)
		y += l.h
	}
	b = append(b, `</svg>`...)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// sizeHint estimates the bytes of the panel's SVG.
func (p *Plot) sizeHint() int {
	n := 4096 + 2*(len(p.Title)+len(p.XLabel)+len(p.YLabel))
	for _, s := range p.Series {
		n += 300 + 2*len(s.Name)
		if s.Markers {
			n += 48 * len(s.X)
		} else {
			n += 12 * min(len(s.X), 4*max(p.Width, 720))
		}
	}
	return n
}

func appendHeader(b []byte, w, h float64) []byte {
	b = append(b, `<svg xmlns="http://www.w3.org/2000/svg" width="`...)
	b = appendFixed1(b, w)
	b = append(b, `" height="`...)
	b = appendFixed1(b, h)
	b = append(b, `" viewBox="0 0 `...)
	b = appendFixed1(b, w)
	b = append(b, ' ')
	b = appendFixed1(b, h)
	b = append(b, `" font-family="Helvetica, Arial, 'DejaVu Sans', sans-serif" font-size="12"><rect width="100%" height="100%" fill="#fff"/>`...)
	return b
}

// appendPanel appends the panel's elements, in the panel's coordinates.
func (p *Plot) appendPanel(b []byte, l *layout) []byte {
	left, top := l.left, l.top
	pw, ph := l.w-l.left-l.right, l.h-l.top-l.bottom
	xa, ya := &l.x, &l.y
	xden, yden := xa.hi-xa.lo, ya.hi-ya.lo
	if p.Title != "" {
		b = append(b, `<text class="title" x="`...)
		b = appendFixed1(b, left+pw/2)
		b = append(b, `" y="24" text-anchor="middle" font-size="14" font-weight="bold">`...)
		b = appendText(b, p.Title, titleSize)
		b = append(b, `</text>`...)
	}
	// Grid and ticks.
	for _, t := range ya.ticks {
		y := top + ph*(1-(t.u-ya.lo)/yden)
		b = appendLine(b, left, y, left+pw, y)
		b = append(b, ` stroke="#e5e5e5"/><text x="`...)
		b = appendFixed1(b, left-8)
		b = append(b, `" y="`...)
		b = appendFixed1(b, y+4)
		b = append(b, `" text-anchor="end">`...)
		b = appendText(b, t.label, fontSize)
		b = append(b, `</text>`...)
	}
	for _, t := range xa.ticks {
		x := left + pw*(t.u-xa.lo)/xden
		b = appendLine(b, x, top, x, top+ph)
		b = append(b, ` stroke="#e5e5e5"/><text x="`...)
		b = appendFixed1(b, x)
		b = append(b, `" y="`...)
		b = appendFixed1(b, top+ph+18)
		b = append(b, `" text-anchor="middle">`...)
		b = appendText(b, t.label, fontSize)
		b = append(b, `</text>`...)
	}
	b = append(b, `<rect class="plot-area"`...)
	b = appendRect(b, left, top, pw, ph)
	b = append(b, ` fill="none" stroke="#333"`...)
	b = appendAxisData(b, "x", xa)
	b = appendAxisData(b, "y", ya)
	b = append(b, `/><text class="x-label" x="`...)
	b = appendFixed1(b, left+pw/2)
	b = append(b, `" y="`...)
	b = appendFixed1(b, top+ph+44)
	b = append(b, `" text-anchor="middle">`...)
	b = appendText(b, p.XLabel, fontSize)
	b = append(b, `</text><text class="y-label" transform="translate(20,`...)
	b = appendFixed1(b, top+ph/2)
	b = append(b, `) rotate(-90)" text-anchor="middle">`...)
	b = appendText(b, p.YLabel, fontSize)
	b = append(b, `</text>`...)
	// The data.
	tr := transform{xa: xa, ya: ya, left: left, top: top, pw: pw, ph: ph, xden: xden, yden: yden}
	for i := range p.Series {
		s := &p.Series[i]
		col := p.color(i)
		xs, ys := s.points()
		b = append(b, `<g class="series" data-name="`...)
		b = appendEsc(b, s.Name)
		b = append(b, `">`...)
		if s.Markers {
			b = append(b, `<g fill="`...)
			b = append(b, col...)
			b = append(b, `">`...)
			b = tr.appendMarkers(b, p, xs, ys)
			b = append(b, `</g>`...)
		} else {
			b = append(b, `<polyline fill="none" stroke="`...)
			b = append(b, col...)
			b = append(b, `" stroke-width="1.8"`...)
			if s.Dashed {
				b = append(b, ` stroke-dasharray="6 4"`...)
			}
			b = append(b, ` points="`...)
			b = tr.appendPolyline(b, xs, ys)
			b = append(b, `"/>`...)
		}
		b = append(b, `</g>`...)
	}
	if l.entries == 0 {
		return b
	}
	// The legend, right of the data area.
	lx := left + pw + legendGap
	b = append(b, `<g class="legend"><rect class="legend-box"`...)
	b = appendRect(b, lx, top, l.legendW, l.legendH)
	b = append(b, ` fill="#fff" stroke="#bbb"/>`...)
	ly := top + 3 + legendRow/2
	for i, s := range p.Series {
		if s.Name == "" {
			continue
		}
		col := p.color(i)
		if s.Markers {
			b = append(b, `<circle cx="`...)
			b = appendFixed1(b, lx+8+legendLine/2)
			b = append(b, `" cy="`...)
			b = appendFixed1(b, ly)
			b = append(b, `" r="3" fill="`...)
			b = append(b, col...)
			b = append(b, `"/>`...)
		} else {
			b = appendLine(b, lx+8, ly, lx+8+legendLine, ly)
			b = append(b, ` stroke="`...)
			b = append(b, col...)
			b = append(b, `" stroke-width="2.5"`...)
			if s.Dashed {
				b = append(b, ` stroke-dasharray="6 4"`...)
			}
			b = append(b, `/>`...)
		}
		b = append(b, `<text x="`...)
		b = appendFixed1(b, lx+8+legendLine+6)
		b = append(b, `" y="`...)
		b = appendFixed1(b, ly+4)
		b = append(b, `">`...)
		b = appendText(b, s.Name, fontSize)
		b = append(b, `</text>`...)
		ly += legendRow
	}
	return append(b, `</g>`...)
}

// color is the colour of series i.
func (p *Plot) color(i int) string {
	if c := p.Series[i].Color; c != "" {
		return c
	}
	return Palette[i%len(Palette)]
}

// appendAxisData appends ` data-x-scale="log" data-x-range="lo hi"` (the
// axis ends in data units, shortest round-trip decimals).
func appendAxisData(b []byte, name string, a *axis) []byte {
	b = append(b, ` data-`...)
	b = append(b, name...)
	b = append(b, `-scale="`...)
	if a.log {
		b = append(b, `log`...)
	} else {
		b = append(b, `linear`...)
	}
	b = append(b, `" data-`...)
	b = append(b, name...)
	b = append(b, `-range="`...)
	b = strconv.AppendFloat(b, a.value(a.lo), 'g', -1, 64)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, a.value(a.hi), 'g', -1, 64)
	return append(b, '"')
}

// transform maps data to pixels: px = left + pw·(u(x) − xlo)/xden, py =
// top + ph·(1 − (u(y) − ylo)/yden), u the axis units.
type transform struct {
	xa, ya                        *axis
	left, top, pw, ph, xden, yden float64
}

func (t *transform) px(x float64) float64 {
	if t.xa.log {
		x = log10(x)
	}
	return t.left + t.pw*(x-t.xa.lo)/t.xden
}

func (t *transform) py(y float64) float64 {
	if t.ya.log {
		y = log10(y)
	}
	return t.top + t.ph*(1-(y-t.ya.lo)/t.yden)
}

// appendMarkers appends a <circle> at each drawable point.
func (t *transform) appendMarkers(b []byte, p *Plot, xs, ys []float64) []byte {
	for k, x := range xs {
		if !p.drawable(x, ys[k]) {
			continue
		}
		b = append(b, `<circle cx="`...)
		b = appendFixed1(b, t.px(x))
		b = append(b, `" cy="`...)
		b = appendFixed1(b, t.py(ys[k]))
		b = append(b, `" r="2.5"/>`...)
	}
	return b
}

// appendPolyline appends the points of a series: the pixel coordinates of
// its drawable points decimated per pixel column (columns of width 1 from
// 0, the floor of the pixel x) to first, lowest, highest and last, each as
// "x,y" with one decimal, separated by spaces.
//
// Written for the wasm compiler, for which a call (arguments and results
// go through memory) and a mispredicted branch (every taken branch goes
// through the function's jump table) cost much more than arithmetic: one
// call per column, and the formatting without a branch per digit.
func (t *transform) appendPolyline(b []byte, xs, ys []float64) []byte {
	ys = ys[:len(xs)]
	logX, logY := t.xa.log, t.ya.log
	xlo, ylo := t.xa.lo, t.ya.lo
	left, top, pw, ph, xden, yden := t.left, t.top, t.pw, t.ph, t.xden, t.yden
	var (
		started              bool // the column has points
		sep                  bool // a point was written: the next one needs a separator
		col                  float64
		fx, fy, lastx, lasty float64
		lox, loy, hix, hiy   float64
	)
	for k, x := range xs {
		y := ys[k]
		if !finite(x) || !finite(y) || (logY && y <= 0) || (logX && x <= 0) {
			continue
		}
		if logY {
			y = log10(y)
		}
		if logX {
			x = log10(x)
		}
		py := top + ph*(1-(y-ylo)/yden)
		px := left + pw*(x-xlo)/xden
		if c := math.Floor(px); c != col || !started {
			if started {
				b, sep = appendColumn(b, sep, fx, fy, lox, loy, hix, hiy, lastx, lasty)
			}
			started, col, fx, fy = true, c, px, py
			lox, loy, hix, hiy = px, py, px, py
		} else {
			if py < loy {
				lox, loy = px, py
			}
			if py > hiy {
				hix, hiy = px, py
			}
		}
		lastx, lasty = px, py
	}
	if started {
		b, _ = appendColumn(b, sep, fx, fy, lox, loy, hix, hiy, lastx, lasty)
	}
	return b
}

// appendColumn appends a column's points: first, lowest and highest in x
// order (the lowest first on a tie), last, each unless equal to the point
// written before it (a NaN coordinate is never equal; ±0 are equal).
func appendColumn(b []byte, sep bool, fx, fy, lox, loy, hix, hiy, lastx, lasty float64) ([]byte, bool) {
	p1x, p1y, p2x, p2y := lox, loy, hix, hiy
	if hix < lox {
		p1x, p1y, p2x, p2y = hix, hiy, lox, loy
	}
	b = appendXY(b, sep, fx, fy)
	wx, wy := fx, fy
	if p1x != wx || p1y != wy {
		b = appendXY(b, true, p1x, p1y)
		wx, wy = p1x, p1y
	}
	if p2x != wx || p2y != wy {
		b = appendXY(b, true, p2x, p2y)
		wx, wy = p2x, p2y
	}
	if lastx != wx || lasty != wy {
		b = appendXY(b, true, lastx, lasty)
	}
	return b, true
}

// appendLine appends `<line x1=".." y1=".." x2=".." y2=".."`.
func appendLine(b []byte, x1, y1, x2, y2 float64) []byte {
	b = append(b, `<line x1="`...)
	b = appendFixed1(b, x1)
	b = append(b, `" y1="`...)
	b = appendFixed1(b, y1)
	b = append(b, `" x2="`...)
	b = appendFixed1(b, x2)
	b = append(b, `" y2="`...)
	b = appendFixed1(b, y2)
	return append(b, '"')
}

// appendRect appends ` x=".." y=".." width=".." height=".."`.
func appendRect(b []byte, x, y, w, h float64) []byte {
	b = append(b, ` x="`...)
	b = appendFixed1(b, x)
	b = append(b, `" y="`...)
	b = appendFixed1(b, y)
	b = append(b, `" width="`...)
	b = appendFixed1(b, w)
	b = append(b, `" height="`...)
	b = appendFixed1(b, h)
	return append(b, '"')
}
