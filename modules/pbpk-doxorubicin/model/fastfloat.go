package model

import (
	"encoding/binary"
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
	const room = 32 // bytes a number may take in the fast path, with its comma
	dst = slices.Grow(dst, 2+14*len(xs))
	dst = append(dst, '[')
	for i, v := range xs {
		if cap(dst)-len(dst) < room {
			dst = slices.Grow(dst, room+14*(len(xs)-i))
		}
		n := len(dst)
		b := dst[n : n+room]
		k := 0
		if i > 0 {
			b[0] = ','
			k = 1
		}
		m, e, ok := roundSig6(v)
		if !ok {
			dst = stats.AppendFloat(dst[:n+k], v, SeriesDigits)
			continue
		}
		if v < 0 {
			b[k] = '-'
			k++
		}
		k += putDigits6(b[k:], m, e)
		dst = dst[:n+k]
	}
	return append(dst, ']')
}

// putDigits6 writes the 6-digit integer m (leading digit at 10^e, −5 ≤ e ≤
// 14) in plain notation without trailing zeros, as encoding/json does, into
// b (at least 24 bytes) and returns its length. The digits are packed into
// 64-bit words (first character in the lowest byte) and stored whole: one
// store each in WebAssembly instead of a bounds-checked store per byte.
func putDigits6(b []byte, m uint32, e int) int {
	hi, lo := m/10000, m%10000
	mid, lo := lo/100, lo%100
	w := uint64(pairs[hi]) | uint64(pairs[mid])<<16 | uint64(pairs[lo])<<32 // the 6 digits
	var nd int                                                              // digits without the trailing zeros
	switch {
	case lo != 0:
		nd = 6 - b2i(lo%10 == 0)
	case mid != 0:
		nd = 4 - b2i(mid%10 == 0)
	default:
		nd = 2 - b2i(hi%10 == 0)
	}
	const zeros = 0x3030303030303030 // "00000000"
	switch {
	case e < 0: // 0.000ddd
		binary.LittleEndian.PutUint64(b, 0x3030303030302e30) // "0.000000"
		z := -e - 1
		binary.LittleEndian.PutUint64(b[2+z:], w)
		return 2 + z + nd
	case nd <= e+1: // ddd000 (the digits past nd are zeros)
		binary.LittleEndian.PutUint64(b, w|0x3030<<48)
		binary.LittleEndian.PutUint64(b[8:], zeros)
		return e + 1
	default: // dd.ddd
		sh := 8 * uint(e+1)
		binary.LittleEndian.PutUint64(b, w&(1<<sh-1)|'.'<<sh|(w>>sh)<<(sh+8))
		return nd + 1
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pairs holds the two digits of 0–99 as little-endian 16-bit words.
var pairs = func() (p [100]uint16) {
	for i := range p {
		p[i] = uint16('0'+i/10) | uint16('0'+i%10)<<8
	}
	return p
}()

// pow10 holds 10^k for k in [0, 22], exact in float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// roundSig6 returns the 6-digit integer m and the decimal exponent e of
// the leading digit of |v| (|v| ≈ m·10^(e−5)) as stats.AppendFloat rounds
// it: the same scaling |v|·10^(5−e) (one exact-power multiplication or
// division), the same leading-digit correction and the same tie margin, so
// the same digits. It returns false outside 1e-5 ≤ |v| < 1e15 and near a
// rounding tie, where stats.AppendFloat decides.
func roundSig6(v float64) (m uint32, e int, ok bool) {
	const sig = 6
	a := math.Abs(v)
	if !(a >= 1e-5 && a < 1e15) {
		return 0, 0, false
	}
	be := int(math.Float64bits(a)>>52&0x7ff) - 1022 // a = f·2^be, f in [0.5, 1) (a is normal)
	e = int(math.Floor(float64(be-1) * 0.30102999566398120))
	for range 3 {
		var s float64
		if k := sig - 1 - e; k >= 0 { // k in [-9, 10] (±1 while correcting)
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
			return 0, 0, false
		}
		m = uint32(r)
		if frac > 0.5 {
			m++
		}
		if m >= 1e6 { // 999999.7 rounds up to 10^6
			m /= 10
			e++
		}
		return m, e, true
	}
	return 0, 0, false
}
