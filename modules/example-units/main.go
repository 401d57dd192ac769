// Command example-units is the toxgate example module: a concentration unit
// converter and serial dilution calculator, built as a WebAssembly reactor with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o example-units.wasm .
package main

import (
	"errors"

	"toxgate/modules/example-units/units"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func init() {
	module.Register(module.Info{
		Name:        "example-units",
		Version:     "1.0.0",
		Title:       "Concentration units",
		Description: "Converts concentrations between mass (g/L) and molar (mol/L) units and computes serial dilution series.",
		Limits:      abi.Limits{MemoryPages: 256, TimeoutMS: 2000},
		Card: abi.ModelCard{
			Summary:     "Exact unit arithmetic: c[mol/L] = c[g/L] / M[g/mol]; dilution step k has start / d^(k-1).",
			IntendedUse: "Preparing dosing solutions and reading assay concentrations; the SDK walk-through example.",
			Method:      "Closed-form conversion factors; no fitted parameters.",
			Validation:  "Checked against hand calculations in units_test.go (e.g. 543.52 mg/L doxorubicin = 1 mM).",
			Limitations: "Ideal dilute solutions; no activity coefficients, no density corrections.",
			Units:       map[string]string{"molar_mass": "g/mol"},
			License:     "Apache-2.0",
		},
	},
		module.Handle("/example/units/convert", convert).
			Summary("Convert a concentration between mass and molar units").
			Output("value: the converted concentration in unit; factor: multiplier applied; input: what was converted").
			Example(`{"value":10,"from":"mg/L","to":"uM","molar_mass":543.52}`),
		module.Handle("/example/units/series", series).
			Summary("Serial dilution series, also as CSV").
			Output("rows: one per step with value (in unit) and converted (in converted_unit)").
			Table("rows", "step", "value", "converted").
			Example(`{"start":100,"unit":"uM","dilution":3,"steps":8,"to":"mg/L","molar_mass":543.52}`),
	)
}

func convert(in units.ConvertInput) (units.ConvertOutput, error) {
	out, err := units.Convert(in)
	return out, inputError(err)
}

func series(in units.SeriesInput) (units.SeriesOutput, error) {
	module.Logger().Debug("dilution series", "steps", in.Steps)
	out, err := units.Series(in)
	return out, inputError(err)
}

// inputError turns the units package's field errors into SDK input errors.
func inputError(err error) error {
	var ue *units.Error
	if errors.As(err, &ue) {
		return module.InvalidInput(ue.Field, "%s", ue.Message)
	}
	return err
}

func main() {}
