//go:build wasm

package plot

import "math"

// log10 is math.Log10, which on wasm is math.Log(x) * (1/Ln10) with the
// pure Go log (FreeBSD's e_log.c): the same operations, in the same order,
// written out here without the calls (Log10, Log, log, Frexp, normalize)
// and with the reduction of the fraction to [√2/2, √2) done on its bits.
// Wasm has no fused multiply-add, so the result is the same float64
// (TestLog10MatchesMath, run inside wasm by internal/wasmbench).
func log10(x float64) float64 {
	const (
		Ln2Hi = 6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
		Ln2Lo = 1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
		L1    = 6.666666666666735130e-01   /* 3FE55555 55555593 */
		L2    = 3.999999999940941908e-01   /* 3FD99999 9997FA04 */
		L3    = 2.857142874366239149e-01   /* 3FD24924 94229359 */
		L4    = 2.222219843214978396e-01   /* 3FCC71C5 1D8E78AF */
		L5    = 1.818357216161805012e-01   /* 3FC74664 96CB03DE */
		L6    = 1.531383769920937332e-01   /* 3FC39A09 D078C69F */
		L7    = 1.479819860511658591e-01   /* 3FC2F112 DF3E5244 */

		smallestNormal = 2.2250738585072014e-308 // 2**-1022
	)
	if !(x > 0 && x <= math.MaxFloat64) { // NaN, ±Inf, ≤ 0
		return math.Log10(x)
	}
	// f1, ki := Frexp(x)
	ki := 0
	if x < smallestNormal {
		x, ki = x*(1<<52), -52
	}
	bits := math.Float64bits(x)
	ki += int((bits>>52)&0x7ff) - 1023 + 1
	bits = bits&^(0x7ff<<52) | (1022 << 52)
	// if f1 < Sqrt2/2 { f1 *= 2; ki-- }: doubling f1 in [1/2, 1) adds one
	// to its exponent.
	var dbl uint64
	if math.Float64frombits(bits) < math.Sqrt2/2 {
		dbl = 1
	}
	bits += dbl << 52
	ki -= int(dbl)
	f := math.Float64frombits(bits) - 1
	k := float64(ki)

	s := f / (2 + f)
	s2 := s * s
	s4 := s2 * s2
	t1 := s2 * (L1 + s4*(L3+s4*(L5+s4*L7)))
	t2 := s4 * (L2 + s4*(L4+s4*L6))
	R := t1 + t2
	hfsq := 0.5 * f * f
	return (k*Ln2Hi - ((hfsq - (s*(hfsq+R) + k*Ln2Lo)) - f)) * (1 / math.Ln10)
}
