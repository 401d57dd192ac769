package units

import (
	"errors"
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestConvert(t *testing.T) {
	cases := []struct {
		in   ConvertInput
		want float64
	}{
		{ConvertInput{Value: 543.52, From: "mg/L", To: "mM", MolarMass: 543.52}, 1},
		{ConvertInput{Value: 1, From: "uM", To: "ng/mL", MolarMass: 543.52}, 543.52},
		{ConvertInput{Value: 2.5, From: "mg/mL", To: "g/L"}, 2.5},
		{ConvertInput{Value: 1, From: "µM", To: "nM"}, 1000},
	}
	for _, c := range cases {
		got, err := Convert(c.in)
		if err != nil || !near(got.Value, c.want) {
			t.Errorf("Convert(%+v) = %v, %v; want %v", c.in, got.Value, err, c.want)
		}
	}
}

func TestConvertErrorsNameTheField(t *testing.T) {
	for field, in := range map[string]ConvertInput{
		"from":       {Value: 1, From: "furlong", To: "M"},
		"to":         {Value: 1, From: "M", To: "stone"},
		"molar_mass": {Value: 1, From: "M", To: "mg/L"},
		"value":      {Value: -1, From: "M", To: "mM"},
	} {
		_, err := Convert(in)
		var ue *Error
		if !errors.As(err, &ue) || ue.Field != field {
			t.Errorf("Convert(%+v) error = %v, want a field error on %q", in, err, field)
		}
	}
}

func TestSeries(t *testing.T) {
	out, err := Series(SeriesInput{Start: 90, Unit: "uM", Dilution: 3, Steps: 3, To: "nM"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{{1, 90, 90000}, {2, 30, 30000}, {3, 10, 10000}}
	for i, r := range out.Rows {
		if r.Step != want[i].Step || !near(r.Value, want[i].Value) || !near(r.Converted, want[i].Converted) {
			t.Errorf("row %d = %+v, want %+v", i, r, want[i])
		}
	}
}
