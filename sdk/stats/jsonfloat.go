package stats

import (
	"math"
	"strconv"
)

// AppendFloat appends v to dst as a JSON number rounded to sig significant
// digits (1 ≤ sig ≤ 15; trailing zeros dropped), in plain notation for
// 1e-6 ≤ |v| < 1e21 and exponent notation otherwise, as encoding/json does;
// NaN and ±Inf are written as null. The digits are those of
// strconv.FormatFloat(v, 'e', sig-1, 64) (correctly rounded); the common case
// is computed with a few floating-point operations instead of strconv's
// general algorithm, which matters in WebAssembly modules that write
// thousands of numbers per call.
func AppendFloat(dst []byte, v float64, sig int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, "null"...)
	}
	if v == 0 {
		return append(dst, '0')
	}
	sig = min(max(sig, 1), 15)
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var buf [32]byte
	m, e, ok := roundSig(v, sig)
	var digits []byte
	if ok {
		digits = strconv.AppendUint(buf[:0], m, 10)
	} else {
		digits, e = exactDigits(buf[:0], v, sig)
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	return appendDecimal(dst, digits, e)
}

// AppendFloats appends xs as a JSON array of numbers written by AppendFloat.
func AppendFloats(dst []byte, xs []float64, sig int) []byte {
	dst = append(dst, '[')
	for i, v := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendFloat(dst, v, sig)
	}
	return append(dst, ']')
}

var pow10tab = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// scale returns v·10^k with at most two roundings, or false out of range.
func scale(v float64, k int) (float64, bool) {
	switch {
	case k >= 0 && k <= 22:
		return v * pow10tab[k], true
	case k < 0 && k >= -22:
		return v / pow10tab[-k], true
	case k > 22 && k <= 44:
		return v * 1e22 * pow10tab[k-22], true
	case k < -22 && k >= -44:
		return v / 1e22 / pow10tab[-k-22], true
	}
	return 0, false
}

// roundSig returns the sig-digit integer m and the decimal exponent e of the
// leading digit with v ≈ m·10^(e−sig+1), or false when v·10^k is too close to
// a rounding tie for the inexact scaling to decide (or out of range).
func roundSig(v float64, sig int) (m uint64, e int, ok bool) {
	_, be := math.Frexp(v) // v = f·2^be, f in [0.5, 1)
	e = int(math.Floor(float64(be-1) * 0.30102999566398120))
	lo, hi := pow10tab[sig-1], pow10tab[sig]
	var s float64
	for range 3 {
		if s, ok = scale(v, sig-1-e); !ok {
			return 0, 0, false
		}
		switch {
		case s >= hi:
			e++
		case s < lo:
			e--
		default:
			r := math.Floor(s)
			frac := s - r
			if math.Abs(frac-0.5) < s*1e-15+1e-9 { // the scaling's error reaches the tie
				return 0, 0, false
			}
			m = uint64(r)
			if frac > 0.5 {
				m++
			}
			if float64(m) >= hi { // 999…9.7 rounds up to 10^sig
				m /= 10
				e++
			}
			return m, e, true
		}
	}
	return 0, 0, false
}

// exactDigits returns the sig digits and the exponent of v from strconv.
func exactDigits(dst []byte, v float64, sig int) ([]byte, int) {
	b := strconv.AppendFloat(dst, v, 'e', sig-1, 64) // d.ddde±xx
	digits := b[:0:0]
	i := 0
	for ; i < len(b) && b[i] != 'e'; i++ {
		if b[i] != '.' {
			digits = append(digits, b[i])
		}
	}
	e, _ := strconv.Atoi(string(b[i+1:]))
	return digits, e
}

// appendDecimal writes the digits d (leading digit at 10^e) as encoding/json
// writes a float64.
func appendDecimal(dst, d []byte, e int) []byte {
	nd := len(d)
	switch {
	case e >= -6 && e < 21 && e >= 0:
		if nd <= e+1 {
			dst = append(dst, d...)
			for range e + 1 - nd {
				dst = append(dst, '0')
			}
			return dst
		}
		dst = append(dst, d[:e+1]...)
		dst = append(dst, '.')
		return append(dst, d[e+1:]...)
	case e >= -6 && e < 0:
		dst = append(dst, '0', '.')
		for range -e - 1 {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	}
	dst = append(dst, d[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, d[1:]...)
	}
	dst = append(dst, 'e')
	if e < 0 {
		dst = append(dst, '-')
		e = -e
	} else {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(e), 10)
}
