// Package pngplot renders small line plots as PNG images (and base64 strings),
// for the model endpoints that return matplotlib-style base64 PNG keys. It
// uses only the standard library and a built-in 5×7 bitmap font.
package pngplot

import (
	"encoding/base64"
	"fmt"
	"image/color"
	"math"
	"strconv"
)

// Series is one line (and optional markers) of a plot.
type Series struct {
	Name    string
	X, Y    []float64
	Color   color.RGBA
	Dashed  bool
	Markers bool // draw a square at each point instead of joining them
}

// Plot is a line plot with title, axis labels and a legend.
type Plot struct {
	Title, XLabel, YLabel string
	Series                []Series
	LogX, LogY            bool
	Width, Height         int // pixels; zero gives 800×500
	// YMin, YMax fix the y range when YMax > YMin.
	YMin, YMax float64
}

// Palette is a colour-blind-safe set of line colours (Okabe & Ito 2008).
var Palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
}

// Add appends a series with the next palette colour.
func (p *Plot) Add(name string, x, y []float64) *Series {
	p.Series = append(p.Series, Series{Name: name, X: x, Y: y, Color: Palette[len(p.Series)%len(Palette)]})
	return &p.Series[len(p.Series)-1]
}

// Base64 returns the PNG encoded in standard base64, as matplotlib's savefig
// output is usually shipped.
func (p *Plot) Base64() (string, error) {
	b, err := p.PNG()
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// PNG renders the plot.
func (p *Plot) PNG() ([]byte, error) {
	w, h := p.Width, p.Height
	if w == 0 || h == 0 {
		w, h = 800, 500
	}
	c := newCanvas(w, h)
	c.fill(color.RGBA{255, 255, 255, 255})
	left, right, top, bottom := 112, w-20, 40, h-60
	xmin, xmax, ymin, ymax, ok := p.ranges()
	if !ok {
		c.text(left, h/2, "NO DATA", 2, color.RGBA{0, 0, 0, 255})
		return c.encode()
	}
	tx := func(x float64) float64 {
		if p.LogX {
			x = math.Log10(x)
		}
		return float64(left) + (x-xmin)/(xmax-xmin)*float64(right-left)
	}
	ty := func(y float64) float64 {
		if p.LogY {
			y = math.Log10(y)
		}
		return float64(bottom) - (y-ymin)/(ymax-ymin)*float64(bottom-top)
	}
	grey := color.RGBA{220, 220, 220, 255}
	black := color.RGBA{0, 0, 0, 255}
	xt := ticks(xmin, xmax, p.LogX)
	for _, t := range xt {
		px := int(math.Round(tx(t)))
		c.line(float64(px), float64(top), float64(px), float64(bottom), grey, 1, false)
		s := tickLabel(t, xt, p.LogX)
		c.text(px-textWidth(s, 2)/2, bottom+8, s, 2, black)
	}
	yt := ticks(ymin, ymax, p.LogY)
	for _, t := range yt {
		py := int(math.Round(ty(t)))
		c.line(float64(left), float64(py), float64(right), float64(py), grey, 1, false)
		s := tickLabel(t, yt, p.LogY)
		c.text(left-8-textWidth(s, 2), py-7, s, 2, black)
	}
	c.line(float64(left), float64(bottom), float64(right), float64(bottom), black, 1, false)
	c.line(float64(left), float64(top), float64(left), float64(bottom), black, 1, false)
	c.text((left+right)/2-textWidth(p.Title, 2)/2, 10, p.Title, 2, black)
	c.text((left+right)/2-textWidth(p.XLabel, 2)/2, h-24, p.XLabel, 2, black)
	c.vtext(8, (top+bottom)/2+textWidth(p.YLabel, 2)/2, p.YLabel, 2, black)
	for _, s := range p.Series {
		var px, py float64
		have := false
		for i := range s.X {
			if i >= len(s.Y) || !p.valid(s.X[i], s.Y[i]) {
				have = false
				continue
			}
			x, y := tx(s.X[i]), ty(clamp(s.Y[i], p, ymin, ymax))
			if s.Markers {
				c.rect(int(x)-3, int(y)-3, 7, 7, s.Color)
			} else if have {
				c.line(px, py, x, y, s.Color, 2, s.Dashed)
			}
			px, py, have = x, y, true
		}
	}
	ly := top + 6
	for _, s := range p.Series {
		if s.Name == "" {
			continue
		}
		lx := right - 10 - textWidth(s.Name, 2) - 34
		if s.Markers {
			c.rect(lx+10, ly+4, 7, 7, s.Color)
		} else {
			c.line(float64(lx), float64(ly+7), float64(lx+26), float64(ly+7), s.Color, 2, s.Dashed)
		}
		c.text(lx+32, ly, s.Name, 2, black)
		ly += 20
	}
	return c.encode()
}

func clamp(y float64, p *Plot, ymin, ymax float64) float64 {
	lo, hi := ymin, ymax
	if p.LogY {
		lo, hi = math.Pow(10, ymin), math.Pow(10, ymax)
	}
	return math.Max(lo, math.Min(hi, y))
}

func (p *Plot) valid(x, y float64) bool {
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return false
	}
	return (!p.LogX || x > 0) && (!p.LogY || y > 0)
}

// ranges returns the axis ranges in plot units (log10 for log axes).
func (p *Plot) ranges() (xmin, xmax, ymin, ymax float64, ok bool) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, s := range p.Series {
		for i := range s.X {
			if i >= len(s.Y) || !p.valid(s.X[i], s.Y[i]) {
				continue
			}
			x, y := s.X[i], s.Y[i]
			if p.LogX {
				x = math.Log10(x)
			}
			if p.LogY {
				y = math.Log10(y)
			}
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
		}
	}
	if math.IsInf(xmin, 0) {
		return 0, 0, 0, 0, false
	}
	if p.YMax > p.YMin {
		ymin, ymax = p.YMin, p.YMax
		if p.LogY {
			ymin, ymax = math.Log10(p.YMin), math.Log10(p.YMax)
		}
	}
	if xmax == xmin {
		xmin, xmax = xmin-1, xmax+1
	}
	if ymax == ymin {
		d := math.Max(math.Abs(ymin)*0.1, 1e-12)
		if p.LogY {
			d = 0.5
		}
		ymin, ymax = ymin-d, ymax+d
	}
	if !p.LogY && !(p.YMax > p.YMin) {
		pad := 0.05 * (ymax - ymin)
		ymin, ymax = ymin-pad, ymax+pad
	}
	return xmin, xmax, ymin, ymax, true
}

// ticks returns tick positions in data units (not log units).
func ticks(lo, hi float64, log bool) []float64 {
	if log {
		var out []float64
		step := math.Max(1, math.Ceil((math.Floor(hi)-math.Ceil(lo))/6))
		for e := math.Ceil(lo); e <= hi+1e-9; e += step {
			out = append(out, math.Pow(10, e))
		}
		return out
	}
	span := hi - lo
	raw := span / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		out = append(out, v)
	}
	return out
}

// tickLabel formats tick v with as many decimals as the tick step needs.
func tickLabel(v float64, all []float64, log bool) string {
	a := math.Abs(v)
	if log || (a != 0 && (a < 1e-3 || a >= 1e5)) {
		if a >= 1e-3 && a < 1e5 {
			return strconv.FormatFloat(v, 'g', 4, 64)
		}
		return fmt.Sprintf("%.0e", v)
	}
	dec := 0
	if len(all) > 1 {
		step := math.Abs(all[1] - all[0])
		dec = max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}
