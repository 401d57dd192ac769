package stats

import (
	"math"

	"toxgate/sdk/jsonw"
)

// AppendJSONFloat writes v exactly as encoding/json writes a float64
// (shortest round-trip digits, exponent form below 1e-6 and from 1e21, e-7
// rather than e-07), and NaN or ±Inf as null.
func AppendJSONFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return jsonw.AppendFloat(b, v, 64)
}
