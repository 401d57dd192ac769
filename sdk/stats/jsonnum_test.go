package stats

import (
	"encoding/json"
	"math"
	"testing"
)

func TestAppendJSONFloatMatchesEncodingJSONFloat64(t *testing.T) {
	for _, v := range []float64{0, 1, -2.5, 1e-7, 3.2e-9, 1e-6, 123456.789, 1e21, 1.5e22, -4e-12, math.SmallestNonzeroFloat64, math.MaxFloat64} {
		want, _ := json.Marshal(v)
		if got := string(AppendJSONFloat(nil, v)); got != string(want) {
			t.Errorf("%g: got %s, want %s", v, got, want)
		}
	}
	if got := string(AppendJSONFloat(nil, math.NaN())); got != "null" {
		t.Errorf("NaN: %s", got)
	}
}
