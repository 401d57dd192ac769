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
	"encoding/binary"
	"math"
	"slices"
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
// The text is written into one buffer without fmt: what the first version
// wrote with %d and %.1f is strconv's AppendInt and AppendFloat 'f' 1, which
// appendFixed1 writes without strconv's general path, and the lines' points
// are decimated per pixel column in the loop over them (no closure per
// point). The arithmetic of the axis transforms is the same expressions, so
// every coordinate, hence every byte, is the same: ref_test.go keeps the
// first version, equal_test.go compares with it (random and fuzzed plots)
// and golden_test.go checks the digests of representative plots
// (testdata/golden.sha256), natively and, with internal/wasmbench, in wasm.
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
			xmin, xmax = minNotNaN(xmin, x), maxNotNaN(xmax, x)
			ymin, ymax = minNotNaN(ymin, y), maxNotNaN(ymax, y)
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
// decimated per pixel column (columns of width 1 from 0, the floor of the
// pixel x) to first, lowest, highest and last, each as "x,y" with one
// decimal, separated by spaces.
//
// Written for the wasm compiler, for which a call (arguments and results
// go through memory) and a mispredicted branch (every taken branch goes
// through the function's jump table) cost much more than arithmetic: one
// call per column, and the formatting without a branch per digit.
func appendPolyline(b []byte, xs, ys []float64, logY bool, ymin, left, pw, xlo, xden, top, ph, ylo, yden float64) []byte {
	ys = ys[:len(xs)]
	var (
		started              bool // the column has points
		sep                  bool // a point was written: the next one needs a separator
		col                  float64
		fx, fy, lastx, lasty float64
		lox, loy, hix, hiy   float64
	)
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
			py = top + ph*(1-(log10(y)-ylo)/yden)
		} else {
			py = top + ph*(1-(y-ylo)/yden)
		}
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

// appendXY appends " x,y" (without the space unless sep) with one decimal
// each, as appendFixed1. For coordinates in [0, 9999.9] away from a
// rounding tie the text of each number is made as one word and stored at
// once (no branch on the number of digits).
func appendXY(b []byte, sep bool, x, y float64) []byte {
	wx, nx := fixed1Word(x)
	wy, ny := fixed1Word(y)
	if nx == 0 || ny == 0 {
		if sep {
			b = append(b, ' ')
		}
		b = appendFixed1(b, x)
		b = append(b, ',')
		return appendFixed1(b, y)
	}
	if cap(b)-len(b) < 24 {
		b = slices.Grow(b, 24)
	}
	l := len(b)
	s := b[l : l+24]
	s[0] = ' '
	i := 0
	if sep {
		i = 1
	}
	binary.LittleEndian.PutUint64(s[i:], wx)
	i += nx
	s[i] = ','
	i++
	binary.LittleEndian.PutUint64(s[i:], wy)
	return b[:l+i+ny]
}

// fixed1Word returns the text of v with one decimal (as appendFixed1) in
// the low n bytes of w, first character lowest, for v in [0, 9999.9] not
// within 1e-7 of a rounding tie; n = 0 otherwise.
func fixed1Word(v float64) (w uint64, n int) {
	x := v * 10
	frac := x - math.Floor(x)
	if !(x < 99990) || math.Abs(frac-0.5) < 1e-6 || math.Signbit(v) {
		return 0, 0
	}
	// Away from a tie, x+0.5 rounds to floor(x) or floor(x)+1 as
	// appendFixed1's rounding (frac > 0.5) does.
	t := uint32(x + 0.5)
	q := t / 10
	w = uint64('0'+q/1000) | uint64('0'+q/100%10)<<8 | uint64('0'+q/10%10)<<16 | uint64('0'+q%10)<<24 |
		uint64('.')<<32 | uint64('0'+t%10)<<40
	drop := uint(3) // leading zero digits to drop
	if q >= 10 {
		drop = 2
	}
	if q >= 100 {
		drop = 1
	}
	if q >= 1000 {
		drop = 0
	}
	return w >> (8 * drop), 6 - int(drop)
}

// appendF1 appends v as fmt's %.1f does, which is strconv.AppendFloat(b, v,
// 'f', 1, 64), which is appendFixed1.
func appendF1(b []byte, v float64) []byte { return appendFixed1(b, v) }

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
// maxTicks bounds the ticks of one axis (a nice step gives at most 9).
const maxTicks = 64

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
		if v+step == v || len(t) == maxTicks {
			break // a range within a few ulps: the step no longer moves v
		}
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
	// The decimation of appendPolyline, with buckets for columns.
	var (
		started                   bool
		col, fx, fy, lastx, lasty float64
		lox, loy, hix, hiy        float64
	)
	for k, xk := range x[:m] {
		yk := y[k]
		if !finite(xk) || !finite(yk) {
			continue
		}
		// The bucket: min(floor((x−x0)/w), last); pixel columns (floor(x))
		// when 1/w underflows to 0. (lastCol ≥ 1: no signed zero to mind;
		// a NaN stays NaN as in min.)
		c := math.Floor(xk)
		if scale != 0 {
			c = math.Floor((xk - x0) * scale)
			if c > lastCol {
				c = lastCol
			}
		}
		if c != col || !started {
			if started {
				xs, ys = appendBucket(xs, ys, fx, fy, lox, loy, hix, hiy, lastx, lasty)
			}
			started, col, fx, fy = true, c, xk, yk
			lox, loy, hix, hiy = xk, yk, xk, yk
		} else {
			if yk < loy {
				lox, loy = xk, yk
			}
			if yk > hiy {
				hix, hiy = xk, yk
			}
		}
		lastx, lasty = xk, yk
	}
	if started {
		xs, ys = appendBucket(xs, ys, fx, fy, lox, loy, hix, hiy, lastx, lasty)
	}
	return xs, ys
}

// appendBucket appends a bucket's points to xs and ys as appendColumn
// writes a column's.
func appendBucket(xs, ys []float64, fx, fy, lox, loy, hix, hiy, lastx, lasty float64) ([]float64, []float64) {
	p1x, p1y, p2x, p2y := lox, loy, hix, hiy
	if hix < lox {
		p1x, p1y, p2x, p2y = hix, hiy, lox, loy
	}
	xs, ys = append(xs, fx), append(ys, fy)
	wx, wy := fx, fy
	if p1x != wx || p1y != wy {
		xs, ys = append(xs, p1x), append(ys, p1y)
		wx, wy = p1x, p1y
	}
	if p2x != wx || p2y != wy {
		xs, ys = append(xs, p2x), append(ys, p2y)
		wx, wy = p2x, p2y
	}
	if lastx != wx || lasty != wy {
		xs, ys = append(xs, lastx), append(ys, lasty)
	}
	return xs, ys
}

// minNotNaN is min(a, b) (math.Min) for a and b not NaN, maxNotNaN
// max(a, b): the wasm compiler calls the runtime for min and max of floats.
// Equal arguments differ only in the sign of a zero, which the OR (AND) of
// their bits resolves as min (max) does.
func minNotNaN(a, b float64) float64 {
	ab, bb := math.Float64bits(a), math.Float64bits(b)
	r := ab
	if a == b {
		r = ab | bb
	}
	if b < a {
		r = bb
	}
	return math.Float64frombits(r)
}

func maxNotNaN(a, b float64) float64 {
	ab, bb := math.Float64bits(a), math.Float64bits(b)
	r := ab
	if a == b {
		r = ab & bb
	}
	if b > a {
		r = bb
	}
	return math.Float64frombits(r)
}
