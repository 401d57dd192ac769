// Command pbpk-httk is the /pbpk/httk module: httk 2.7.4's pbtk model in Go,
// built as a WebAssembly reactor with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o modules/pbpk-httk/pbpk-httk.wasm ./modules/pbpk-httk
package main

import (
	"errors"

	"toxgate/modules/pbpk-httk/model"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

// outputSchema is the JSON Schema of the response (its members; plot_svg is
// the plot, see sdk/plot/README.md).
const outputSchema = `{
	"type": "object",
	"properties": {
		"plot_svg": {
			"type": "string",
			"contentMediaType": "image/svg+xml",
			"description": "the plot: an SVG document of plasma and tissue concentrations (µM, log axis) over days"
		},
		"model": {
			"type": "string",
			"description": "model name"
		},
		"version": {
			"type": "string",
			"description": "model version"
		},
		"chemical": {
			"type": "object",
			"description": "the chemical used"
		},
		"species": {
			"type": "string",
			"description": "the species"
		},
		"dosing": {
			"type": "object",
			"description": "the dosing"
		},
		"parameters": {
			"type": "object",
			"description": "the httk parameters used (httk names)"
		},
		"summary": {
			"type": "object",
			"description": "Cmax_uM, Tmax_days, AUC_uM_days, Css_analytic_uM"
		},
		"units": {
			"type": "object",
			"description": "unit of each member"
		},
		"time_series": {
			"type": "object",
			"description": "time in days and the states (6 significant digits)"
		},
		"notes": {
			"type": "array",
			"description": "notes on the run"
		}
	},
	"required": ["plot_svg", "model", "version", "chemical", "species", "dosing", "parameters", "summary", "units", "time_series"]
}`

func init() {
	module.Register(module.Info{
		Name:        "pbpk-httk",
		Version:     model.Version,
		Title:       "httk PBTK simulation",
		Description: "Generic physiologically based toxicokinetic model of the EPA httk package (pbtk), repeated oral dosing, for 5 species and the httk chemical library.",
		Limits:      abi.Limits{MemoryPages: 2048, TimeoutMS: 10000},
		Card: abi.ModelCard{
			Summary:     "Time courses (days) of amounts and concentrations in gut lumen, gut, liver, venous/arterial blood, lung, kidney, rest of body and plasma after repeated oral doses; Cmax, AUC and the analytic steady-state plasma concentration.",
			IntendedUse: "High-throughput toxicokinetics: dose-to-concentration estimates for screening and IVIVE; not for clinical dosing.",
			Data:        "httk 2.7.4 tables (chem.physical_and_invitro.data, physiology.data, tissue.data, pearce2017regression); see modules/pbpk-httk/data/SOURCES.md and modules/internal/data/SOURCES.md.",
			Method:      "httk pbtk ODEs (modelpbtk.c) parameterised as parameterize_pbtk: Schmitt 2008 partition coefficients with Pearce 2017 calibration, Pearce 2017 fup adjustment, Kilford 2008 hepatocyte binding, restrictive hepatic clearance, GFR·fup renal clearance, Caco-2 based Fabs/Fgut (Yu & Amidon 1999, Yang 2007) or measured Foral/Fhep; solved exactly (matrix exponential between doses).",
			Validation:  "Bisphenol A, human, 1 mg/kg/day, 15 days: Cplasma max 1.110 µM at day 14.10 (httk 2.7.4: 1.11 µM, 14.10); AUC 12.33 µM·day (12.33); analytic Css of BPA, caffeine, ibuprofen, warfarin, acetaminophen, propranolol, midazolam within 0.2 % of httk's calc_analytic_css. Mass balance error < 1e-6.",
			Limitations: "Oral route only; days ≤ 730; doses_per_day 1–24; chemicals need MW, logP, Clint and fup for the species (default_to_human substitutes human values). httk's accuracy vs in vivo: RMSLE Css 2.18, AUC 1.29, Cmax 1.21 (log10).",
			Units:       map[string]string{"daily_dose": "mg/kg BW/day", "days": "day", "time": "day", "C*": "µM", "A*": "µmol", "AUC": "µM·day"},
			References:  []string{"Pearce RG et al. (2017) httk: R Package for High-Throughput Toxicokinetics. J Stat Softw 79(4)", "Schmitt W (2008) Toxicol In Vitro 22:457", "Pearce RG et al. (2017) J Pharmacokinet Pharmacodyn 44:549", "Kilford PJ et al. (2008) Drug Metab Dispos 36:1194"},
			License:     "MIT (httk data)",
		},
	},
		module.Handle("/pbpk/httk", simulate).
			Summary("Simulate httk's PBTK model for repeated oral dosing").
			Output("chemical, species, dosing, parameters (httk names), summary (Cmax_uM, Tmax_days, AUC_uM_days, Css_analytic_uM; on the full tsteps grid), time_series (time in days; Agutlumen…Cplasma, Atubules, Ametabolized, AUC; 6 significant digits; at most output_points rows, default 2000 when tsteps is not given, else every tsteps time), units, plot_svg (an SVG document, image/svg+xml: concentrations on a log axis), notes").
			OutputSchema(outputSchema).
			Example(`{"chem_name":"Bisphenol A","species":"human","daily_dose":1,"doses_per_day":1,"days":15}`),
	)
}

// simulate returns the output encoded by the model (the same JSON as
// json.Marshal, written without re-validating the time series in the module).
func simulate(in model.Input) (module.RawJSON, error) {
	out, err := model.Simulate(in)
	var ie *model.InputError
	if errors.As(err, &ie) {
		return nil, module.InvalidInput(ie.Field, "%s", ie.Error())
	}
	if err != nil {
		return nil, module.Internal("%v", err)
	}
	b, err := out.AppendJSON(nil)
	if err != nil {
		return nil, module.Internal("encoding the output: %v", err)
	}
	return b, nil
}

func main() {}
