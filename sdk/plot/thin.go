package plot

import "math"

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
