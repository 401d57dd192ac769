package plot

import (
	"math"
	"strconv"
)

// axis is one axis of a panel: its range in axis units (log10 of the value
// on a log axis) and its ticks.
type axis struct {
	log    bool
	lo, hi float64 // axis units: every drawn value v has lo ≤ u(v) ≤ hi
	ticks  []tick
}

type tick struct {
	u     float64 // position in axis units
	label string  // text with marks (see appendText)
}

// u is v in axis units.
func (a *axis) u(v float64) float64 {
	if a.log {
		return log10(v)
	}
	return v
}

// value is the data value at axis unit u.
func (a *axis) value(u float64) float64 {
	if a.log {
		return math.Pow(10, u)
	}
	return u
}

// newAxis makes the axis over the data range [min, max] (finite; positive
// on a log axis; min > max when there are no data). A log axis runs from
// the decade at or below min to the decade at or above max; a linear one
// over round ticks that include both ends (and zero when zero is true and
// the data are all positive).
func newAxis(log bool, min, max float64, zero bool) axis {
	a := axis{log: log}
	if min > max { // no data
		min, max = 0, 1
		if log {
			min, max = 1, 10
		}
	}
	if log {
		lo, hi := math.Floor(log10(min)), math.Ceil(log10(max))
		if hi == lo {
			hi = lo + 1
		}
		// At most about 9 labelled decades: every k-th, from a multiple
		// of k at or below lo to one at or above hi.
		k := math.Max(1, math.Ceil((hi-lo)/8))
		lo, hi = math.Floor(lo/k)*k, math.Ceil(hi/k)*k
		for e := lo; e <= hi; e += k {
			a.ticks = append(a.ticks, tick{e, decadeLabel(e)})
			if hi-lo <= 2 && e < hi { // a short axis: also 2 and 5 in each decade
				for _, m := range []float64{2, 5} {
					v := m * math.Pow(10, e)
					a.ticks = append(a.ticks, tick{log10(v), string(appendTick(nil, v))})
				}
			}
		}
		a.lo, a.hi = lo, hi
		return a
	}
	if zero && min > 0 {
		min = 0
	}
	if max == min {
		d := math.Abs(min) * 0.1
		if d == 0 || min+d == min {
			d = 1
		}
		min, max = min-d, max+d
	}
	ts := niceTicks(min, max)
	for _, t := range ts {
		a.ticks = append(a.ticks, tick{t, string(appendTick(nil, t))})
	}
	// The ends: the outer ticks, or the data where rounding left a tick
	// an ulp inside them.
	a.lo, a.hi = math.Min(ts[0], min), math.Max(ts[len(ts)-1], max)
	return a
}

// decadeLabel is the label of 10^e: plain decimals from 0.001 to 10000,
// else "10^{e}" (a superscript).
func decadeLabel(e float64) string {
	if e >= -3 && e <= 4 {
		return strconv.FormatFloat(math.Pow(10, e), 'f', -1, 64)
	}
	s := strconv.FormatFloat(e, 'f', 0, 64)
	if e < 0 {
		s = "−" + s[1:]
	}
	return "10^{" + s + "}"
}

// maxTicks bounds the ticks of one axis (a nice step gives at most 9).
const maxTicks = 64

// niceTicks returns about 5–9 round tick values from the first at or below
// lo to the first at or above hi.
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
	prev := math.Inf(-1)
	for i := 0; i < maxTicks; i++ {
		v := start + float64(i)*step
		if v == prev {
			break // a range within a few ulps: the step no longer moves v
		}
		prev = v
		t = append(t, math.Round(v/step)*step)
		if v >= hi {
			break
		}
	}
	if len(t) < 2 {
		t = append(t, start+step)
	}
	return t
}

// appendTick appends a linear tick label: "0", 4 significant digits, or
// m×10^{e} beyond 1e5 and below 1e-3.
func appendTick(b []byte, v float64) []byte {
	a := math.Abs(v)
	if v == 0 {
		return append(b, '0')
	}
	if a >= 1e5 || a < 1e-3 {
		e := math.Floor(log10(a))
		m := v / math.Pow(10, e)
		if math.Abs(m-math.Round(m)) < 1e-9 {
			m = math.Round(m)
		}
		if math.Abs(m) >= 10 { // log10 an ulp below a power of ten
			m, e = m/10, e+1
		}
		if m < 0 {
			b = append(b, "−"...)
			m = -m
		}
		if m != 1 {
			b = strconv.AppendFloat(b, m, 'g', 3, 64)
			b = append(b, "×"...)
		}
		b = append(b, "10^{"...)
		if e < 0 {
			b = append(b, "−"...)
			e = -e
		}
		b = strconv.AppendFloat(b, e, 'f', 0, 64)
		return append(b, '}')
	}
	if v < 0 {
		b = append(b, "−"...)
		v = -v
	}
	// Four significant digits, written without an exponent.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return strconv.AppendFloat(b, r, 'f', -1, 64)
}
