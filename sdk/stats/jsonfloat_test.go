package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestAppendFloatMatchesStrconvDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{1, 1.25, 0.125, 2.5e-7, 1e21, 9.999995, 999999.5, 0.1, 1e-6, 123456789, 5e-324, 1e300, 1e22, 3e-45, 0.30000000000000004}
	for range 200000 {
		vals = append(vals, math.Exp(rng.NormFloat64()*15)*float64(1-2*rng.IntN(2)))
	}
	for _, v := range vals {
		for _, sig := range []int{1, 4, 6, 7, 10, 15} {
			got := string(AppendFloat(nil, v, sig))
			want, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'e', sig-1, 64), 64)
			g, err := strconv.ParseFloat(got, 64)
			if err != nil || g != want || !json.Valid([]byte(got)) {
				t.Fatalf("AppendFloat(%v, %d) = %q, want the value %v", v, sig, got, want)
			}
		}
	}
	for v, want := range map[float64]string{0: "0", 1.5: "1.5", -2: "-2", 1e-7: "1e-7", 1234567: "1234570", 1e21: "1e+21", 0.000125: "0.000125", math.NaN(): "null", math.Inf(-1): "null"} {
		if got := string(AppendFloat(nil, v, 6)); got != want {
			t.Errorf("AppendFloat(%v, 6) = %q, want %q", v, got, want)
		}
	}
	if got := string(AppendFloats(nil, []float64{1, 0.5, math.NaN()}, 6)); got != "[1,0.5,null]" {
		t.Errorf("AppendFloats = %s", got)
	}
}

func BenchmarkAppendFloat6(b *testing.B) {
	var dst []byte
	for i := 0; b.Loop(); i++ {
		dst = AppendFloat(dst[:0], 1.2345678e-3*float64(i%1000+1), 6)
	}
}
