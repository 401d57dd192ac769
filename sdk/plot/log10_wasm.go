//go:build wasm

package plot

import "math"

// log10 is math.Log10.
func log10(x float64) float64 { return math.Log10(x) }
