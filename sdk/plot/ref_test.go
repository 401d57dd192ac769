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

// This file keeps the straightforward implementation of SVG and Thin as of
// commit 8155b52 (fmt for the fixed parts, strconv for the points, closures
// for the axis transforms and the decimator's output) as the reference the
// optimized code must reproduce byte for byte: see equal_test.go.

func refSVG(p *Plot) string {
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
			if !refFinite(x) || !refFinite(y) || (p.LogY && y <= 0) {
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
		yticks = refNiceTicks(ymin, ymax)
		lo, hi := yticks[0], yticks[len(yticks)-1]
		fy = func(y float64) float64 { return top + ph*(1-(y-lo)/(hi-lo)) }
	}
	xticks := refNiceTicks(xmin, xmax)
	xlo, xhi := xticks[0], xticks[len(xticks)-1]
	fx := func(x float64) float64 { return left + pw*(x-xlo)/(xhi-xlo) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/>`, w, h)
	if p.Title != "" {
		fmt.Fprintf(&b, `<text x="%.1f" y="22" text-anchor="middle" font-size="14" font-weight="bold">%s</text>`, left+pw/2, refEsc(p.Title))
	}
	for _, t := range yticks {
		y := fy(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`, left, y, left+pw, y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, left-6, y, refFmtTick(t))
	}
	for _, t := range xticks {
		x := fx(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`, x, top, x, top+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, top+ph+16, refFmtTick(t))
	}
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#333"/>`, left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, left+pw/2, float64(h)-12, refEsc(p.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(16,%.1f) rotate(-90)" text-anchor="middle">%s</text>`, top+ph/2, refEsc(p.YLabel))
	fmt.Fprintf(&b, `<clipPath id="area"><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"/></clipPath>`, left, top, pw, ph)
	var pts []byte
	for i, s := range p.Series {
		col := refPalette[i%len(refPalette)]
		pts = slices.Grow(pts[:0], 16*min(len(s.X), 4*int(pw)))
		d := refDecimator{emit: func(px, py float64) {
			pts = strconv.AppendFloat(pts, px, 'f', 1, 64)
			pts = append(pts, ',')
			pts = strconv.AppendFloat(pts, py, 'f', 1, 64)
			pts = append(pts, ' ')
		}}
		for k := range s.X {
			x, y := s.X[k], s.Y[k]
			if !refFinite(x) || !refFinite(y) || (p.LogY && y <= 0) {
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
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`, left+pw+40, ly, refEsc(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func refNiceTicks(lo, hi float64) []float64 {
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

func refFmtTick(v float64) string {
	a := math.Abs(v)
	if v == 0 {
		return "0"
	}
	if a >= 1e5 || a < 1e-3 {
		return strconv.FormatFloat(v, 'e', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func refEsc(s string) string { return html.EscapeString(s) }

func refFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

var refPalette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

type refDecimator struct {
	emit                   func(x, y float64)
	scale, origin, lastCol float64
	col                    float64
	n                      int
	first, lo, hi, last    [2]float64
}

func (d *refDecimator) add(x, y float64) {
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

func (d *refDecimator) flush() {
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

func refThin(x, y []float64, n int) ([]float64, []float64) {
	m := min(len(x), len(y))
	if m <= n || n < 8 {
		return x[:m], y[:m]
	}
	buckets := n / 4
	x0, x1 := x[0], x[m-1]
	if !refFinite(x0) || !refFinite(x1) || x1 <= x0 {
		return x[:m], y[:m]
	}
	w := (x1 - x0) / float64(buckets)
	xs, ys := make([]float64, 0, n), make([]float64, 0, n)
	d := refDecimator{emit: func(px, py float64) { xs, ys = append(xs, px), append(ys, py) }, scale: 1 / w, origin: x0, lastCol: float64(buckets - 1)}
	for k := 0; k < m; k++ {
		if refFinite(x[k]) && refFinite(y[k]) {
			d.add(x[k], y[k])
		}
	}
	d.flush()
	return xs, ys
}
