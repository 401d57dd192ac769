package plot

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
)

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
