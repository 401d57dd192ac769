package model

import (
	"math"
	"slices"

	"toxgate/sdk/stats"
)

// appendSeriesFloats appends xs as a JSON array of numbers with SeriesDigits
// significant digits, byte for byte as stats.AppendFloats(dst, xs,
// SeriesDigits) (a test checks it on the model's outputs and on random
// numbers). It computes the common case (1e-5 ≤ |v| < 1e15, away from a
// rounding tie) with a few floating-point and 32-bit integer operations and
// one append per number, and leaves every other number to stats.AppendFloat:
// in WebAssembly this is about 4 times as fast, and the ~25 000 numbers of a
// 7-day time series are most of the cost of encoding the output.
func appendSeriesFloats(dst []byte, xs []float64) []byte {
	dst = slices.Grow(dst, 2+14*len(xs)) // "-0.0000123456," is 14 bytes
	dst = append(dst, '[')
	for i, v := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSig6(dst, v)
	}
	return append(dst, ']')
}

// pow10 holds 10^k for k in [0, 22], exact in float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// appendSig6 appends v rounded to 6 significant digits as stats.AppendFloat
// writes it: the same scaling v·10^(5−e) (one exact-power multiplication or
// division), the same leading-digit correction and the same tie margin, so
// the same digits; the fallback is stats.AppendFloat itself.
func appendSig6(dst []byte, v float64) []byte {
	const sig = 6
	a := math.Abs(v)
	if !(a >= 1e-5 && a < 1e15) {
		return stats.AppendFloat(dst, v, sig)
	}
	be := int(math.Float64bits(a)>>52&0x7ff) - 1022 // a = f·2^be, f in [0.5, 1) (a is normal)
	e := int(math.Floor(float64(be-1) * 0.30102999566398120))
	var s float64
	for range 3 {
		k := sig - 1 - e // in [-9, 10] for the range above (±1 while correcting)
		if k >= 0 {
			s = a * pow10[k]
		} else {
			s = a / pow10[-k]
		}
		switch {
		case s >= 1e6:
			e++
			continue
		case s < 1e5:
			e--
			continue
		}
		r := math.Floor(s)
		frac := s - r
		if math.Abs(frac-0.5) < s*1e-15+1e-9 { // too close to a tie for the scaling
			return stats.AppendFloat(dst, v, sig)
		}
		m := uint32(r)
		if frac > 0.5 {
			m++
		}
		if m >= 1e6 { // 999999.7 rounds up to 10^6
			m /= 10
			e++
		}
		return appendDigits6(dst, v < 0, m, e)
	}
	return stats.AppendFloat(dst, v, sig)
}

// appendDigits6 writes the 6-digit integer m (leading digit at 10^e, −6 ≤ e
// < 21) in plain notation without trailing zeros, as encoding/json does. It
// stores byte by byte into dst's spare capacity: in WebAssembly a copy or an
// append of a slice is a call of memmove, dearer than the digits.
func appendDigits6(dst []byte, neg bool, m uint32, e int) []byte {
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + m%10)
		m /= 10
	}
	nd := 6
	for nd > 1 && d[nd-1] == '0' {
		nd--
	}
	n := len(dst)
	dst = slices.Grow(dst, 32)
	b := dst[n : n+32]
	i := 0
	if neg {
		b[0] = '-'
		i = 1
	}
	switch {
	case e < 0: // 0.000ddd
		b[i], b[i+1] = '0', '.'
		i += 2
		for range -e - 1 {
			b[i] = '0'
			i++
		}
		for _, c := range d[:nd] {
			b[i] = c
			i++
		}
	case nd <= e+1: // ddd000
		for _, c := range d[:nd] {
			b[i] = c
			i++
		}
		for range e + 1 - nd {
			b[i] = '0'
			i++
		}
	default: // dd.ddd
		for _, c := range d[:e+1] {
			b[i] = c
			i++
		}
		b[i] = '.'
		i++
		for _, c := range d[e+1 : nd] {
			b[i] = c
			i++
		}
	}
	return dst[:n+i]
}
