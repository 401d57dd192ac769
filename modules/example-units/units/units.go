// Package units converts concentrations between mass and molar units and computes
// serial dilution series. It is the computation behind the example-units module
// and is plain Go, so it is also called natively (tests, benchmarks).
package units

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ConvertInput is a request to convert one concentration.
type ConvertInput struct {
	Value     float64 `json:"value" desc:"concentration to convert, in the unit named by from" example:"10" min:"0"`
	From      string  `json:"from" desc:"unit of value" example:"\"mg/L\""`
	To        string  `json:"to" desc:"unit wanted" example:"\"uM\""`
	MolarMass float64 `json:"molar_mass,omitempty" desc:"molar mass, needed between mass and molar units" unit:"g/mol" example:"543.52" gt:"0"`
}

// ConvertOutput is the converted concentration.
type ConvertOutput struct {
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Factor float64 `json:"factor"`
	Input  string  `json:"input"`
}

// Error is an input error naming the offending field.
type Error struct{ Field, Message string }

func (e *Error) Error() string { return e.Field + ": " + e.Message }

type unit struct {
	molar bool // mol/L based rather than g/L based
	exp   int  // value × 10^exp = base unit (g/L or mol/L); powers of ten keep factors exact
}

var known = map[string]unit{
	"g/L": {false, 0}, "mg/mL": {false, 0}, "mg/L": {false, -3}, "ug/mL": {false, -3},
	"ug/L": {false, -6}, "ng/mL": {false, -6}, "ng/L": {false, -9}, "pg/mL": {false, -9},
	"M": {true, 0}, "mM": {true, -3}, "uM": {true, -6}, "nM": {true, -9}, "pM": {true, -12},
}

// Units lists the accepted unit names ("u" stands for micro; "µ" is accepted too).
func Units() []string {
	out := make([]string, 0, len(known))
	for k := range known {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func lookup(field, name string) (unit, error) {
	u, ok := known[strings.ReplaceAll(strings.ReplaceAll(name, "µ", "u"), "μ", "u")]
	if !ok {
		return unit{}, &Error{field, fmt.Sprintf("unknown unit %q; known: %s", name, strings.Join(Units(), ", "))}
	}
	return u, nil
}

// Factor returns f such that a value in from times f is the value in to.
func Factor(from, to string, molarMass float64) (float64, error) {
	uf, err := lookup("from", from)
	if err != nil {
		return 0, err
	}
	ut, err := lookup("to", to)
	if err != nil {
		return 0, err
	}
	f := math.Pow10(uf.exp - ut.exp)
	if uf.molar != ut.molar {
		if molarMass <= 0 {
			return 0, &Error{"molar_mass", "a positive molar mass (g/mol) is needed to convert between mass and molar units"}
		}
		if uf.molar { // mol/L → g/L
			f *= molarMass
		} else { // g/L → mol/L
			f /= molarMass
		}
	}
	return f, nil
}

// Convert converts in.Value from in.From to in.To.
func Convert(in ConvertInput) (ConvertOutput, error) {
	if in.Value < 0 {
		return ConvertOutput{}, &Error{"value", "must not be negative"}
	}
	f, err := Factor(in.From, in.To, in.MolarMass)
	if err != nil {
		return ConvertOutput{}, err
	}
	return ConvertOutput{Value: in.Value * f, Unit: in.To, Factor: f, Input: strconv.FormatFloat(in.Value, 'g', -1, 64) + " " + in.From}, nil
}

// SeriesInput asks for a serial dilution series.
type SeriesInput struct {
	Start     float64 `json:"start" desc:"top concentration, in the unit named by unit" example:"100" min:"0"`
	Unit      string  `json:"unit" desc:"unit of start" example:"\"uM\""`
	Dilution  float64 `json:"dilution" desc:"dilution factor per step (e.g. 3 for 1:3)" unit:"fold" example:"3" min:"1"`
	Steps     int     `json:"steps" desc:"number of concentrations" unit:"steps" example:"8" min:"1" max:"1000"`
	To        string  `json:"to,omitempty" desc:"second unit to report (optional)" example:"\"mg/L\""`
	MolarMass float64 `json:"molar_mass,omitempty" desc:"molar mass, needed between mass and molar units" unit:"g/mol" example:"543.52" gt:"0"`
}

// Row is one concentration of a series.
type Row struct {
	Step      int     `json:"step"`
	Value     float64 `json:"value"`
	Converted float64 `json:"converted"`
}

// SeriesOutput is a dilution series as a table.
type SeriesOutput struct {
	Unit          string `json:"unit"`
	ConvertedUnit string `json:"converted_unit"`
	Rows          []Row  `json:"rows"`
}

// Series computes a serial dilution series start, start/d, start/d², ...
func Series(in SeriesInput) (SeriesOutput, error) {
	if in.Dilution < 1 {
		return SeriesOutput{}, &Error{"dilution", "must be at least 1"}
	}
	if in.Steps < 1 || in.Steps > 1000 {
		return SeriesOutput{}, &Error{"steps", "must be between 1 and 1000"}
	}
	to := in.To
	if to == "" {
		to = in.Unit
	}
	f, err := Factor(in.Unit, to, in.MolarMass)
	if err != nil {
		return SeriesOutput{}, err
	}
	out := SeriesOutput{Unit: in.Unit, ConvertedUnit: to, Rows: make([]Row, in.Steps)}
	v := in.Start
	for i := range out.Rows {
		out.Rows[i] = Row{Step: i + 1, Value: v, Converted: v * f}
		v /= in.Dilution
	}
	return out, nil
}
