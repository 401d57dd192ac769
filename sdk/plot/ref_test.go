package plot

import "math"

// This file keeps the straightforward implementation of Thin (a closure for
// the decimator's output, math.Min for the last bucket) as the reference the
// optimized Thin must reproduce exactly: see equal_test.go.

func refFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

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
