// Command tk-2d is the /TK/2D/evaluate module: in-vitro biokinetics and
// viability of a chemical in a 2D cardiomyocyte culture, built as a
// WebAssembly reactor with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/modules/tk-2d.wasm ./modules/tk-2d
package main

import (
	"errors"

	"toxgate/modules/tk-2d/model"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func init() {
	module.Register(module.Info{
		Name:        "tk-2d",
		Version:     model.Version,
		Title:       "In-vitro kinetics in a 2D cardiomyocyte culture",
		Description: "Distribution of a test chemical between medium, serum, cells, plastic and headspace of a multiwell plate (httk 2.7 Armitage model), first-order cell uptake, and 48-h-calibrated viability of hiPSC cardiomyocytes where public data exist.",
		Limits:      abi.Limits{MemoryPages: 2048, TimeoutMS: 5000},
		Card:        card,
	},
		module.Handle("/TK/2D/evaluate", evaluate).
			Summary("In-vitro biokinetics (medium, cells) and viability of a 2D cardiomyocyte culture").
			Output("plot_svg: an SVG document (image/svg+xml) with the cell and medium concentrations (log axis) and, where modelled, the viability, in panels one above another; time_h, medium_free_uM, medium_total_uM, cell_uM, viability: the numbers behind them; equilibrium: httk armitage_eval outputs (cfree, fractions x*); uptake: rate constants; viability_model or viability_note; compound, system, units.").
			OutputSchema(outputSchema).
			Example(`{"compound":"DOX"}`),
	)
}

// outputSchema is the JSON Schema of the response (its members; plot_svg is
// the plot, see sdk/plot/README.md).
const outputSchema = `{
	"type": "object",
	"properties": {
		"plot_svg": {
			"type": "string",
			"contentMediaType": "image/svg+xml",
			"description": "the plot: an SVG document with the cell, total medium and free medium concentrations (µM, log axis) over time and, where modelled, the viability (% of vehicle) below"
		},
		"model": {
			"type": "string",
			"description": "model name"
		},
		"version": {
			"type": "string",
			"description": "model version"
		},
		"compound": {
			"type": "object",
			"description": "the chemical and its properties used (httk names)"
		},
		"system": {
			"type": "object",
			"description": "the well: format, medium volume, cells, plastic area, serum fraction"
		},
		"nominal_uM": {
			"type": "number",
			"description": "nominal medium concentration at t = 0 (µM)"
		},
		"time_h": {
			"type": "array",
			"description": "times (h)"
		},
		"medium_free_uM": {
			"type": "array",
			"description": "freely dissolved medium concentration (µM) at each time"
		},
		"medium_total_uM": {
			"type": "array",
			"description": "dissolved + serum-bound medium concentration (µM) at each time"
		},
		"cell_uM": {
			"type": "array",
			"description": "amount per cell volume (µM) at each time"
		},
		"viability": {
			"description": "fraction of vehicle control at each time; null without viability data"
		},
		"viability_note": {
			"type": "string",
			"description": "why viability is not modelled, when it is not"
		},
		"viability_model": {
			"type": "object",
			"description": "the viability relation used, when modelled"
		},
		"equilibrium": {
			"type": "object",
			"description": "httk armitage_eval outputs"
		},
		"uptake": {
			"type": "object",
			"description": "uptake rate constants"
		},
		"units": {
			"type": "object",
			"description": "unit of each member"
		}
	},
	"required": ["plot_svg", "model", "version", "compound", "system", "nominal_uM", "time_h", "medium_free_uM", "medium_total_uM", "cell_uM", "equilibrium", "uptake", "units"]
}`

var card = abi.ModelCard{
	Summary:     "Time courses of the free and total medium concentration and of the intracellular concentration of a chemical dosed into a 2D cardiomyocyte culture, the equilibrium distribution (free fraction, shares in cells, plastic, serum, headspace) exactly as httk 2.7 armitage_eval, and the viability of hiPSC-CMs for anthracyclines (doxorubicin, daunorubicin, epirubicin) and mitoxantrone.",
	IntendedUse: "Translating nominal in-vitro concentrations into free and cellular concentrations for cardiotoxicity assays (IVIVE), planning exposures; research use.",
	Data:        "httk 2.7.4 chem.physical_and_invitro.data (MW, logP, pKa's from modules/internal/data; logHenry, logWSol, MP from chem/httk_physchem_supplement.csv.gz) and well_param; Matthews et al. 2023 48-h viability of hiPSC-CMs from 6 donors (viability/). See SOURCES.md.",
	Method:      "Armitage et al. 2014 mass balance as httk 2.7 (spLFERs Kmw = 1.01 logKow + 0.12, Kbsa = 0.71 logKow + 0.42, Kpl = 0.97 logKow − 6.94; ionised-form factors; cell ionisation at pH 7.4 with anionic lipid sorption, ion and lysosomal trapping; salting out; van 't Hoff to 37 °C). Uptake: dA/dt = k (C_w − A/(K_cw V_cells)), k from the unstirred medium column (D = 5e-10 m²/s over the medium height) in series with the membrane (log P = logKow − 6.7 m/s, ions ×10^−3.5; Trapp 2004). Viability = 1/(1 + (D(t)/EC50_cell)^h) with D(t) = AUC_cell(0–t)/48 h (Haber's rule: effect driven by concentration × time in the cells); EC50 and h fitted (Levenberg–Marquardt) to the pooled Matthews data on nominal concentration, EC50_cell = D(48 h) at the nominal EC50 in the calibration set-up, so the model reproduces the 48-h fit there.",
	Validation:  "armitage_eval reproduced to < 0.01 % for rotenone, amiodarone, doxorubicin and TBBPA at 1 µM in a 96-well plate with 0 and 10 % FBS (free concentration, K_cw, cell and plastic shares; sdk/invitro tests). DOX 48-h fit: EC50 2.57 µM (SE log10 0.048), h 0.67 (SE 0.05), n 380, inside the donors' LD50 range 1.03–21.1 µM.",
	Limitations: "Equilibrium partition coefficients are httk's QSARs, not measured: for doxorubicin httk gives K_cw ≈ 0.9 while measured cell:medium ratios are 10²–10³ (nuclear DNA binding is not in the model). Plastic, serum and headspace are taken at equilibrium with the medium at all times; no metabolism, degradation or cell growth. The uptake rate constants are generic (Trapp 2004 permeability, assumed diffusivity). Viability only where public cardiomyocyte data exist; times other than 48 h rest on Haber's rule (no recovery, no delay); its calibration assumes the Matthews assay was serum-free 96-well at httk's default cell number.",
	Units:       map[string]string{"nominal_uM": "µM", "medium_uL": "µL", "serum_fraction": "volume fraction", "duration_h": "h", "time_h": "h", "*_uM": "µM", "viability": "fraction of vehicle"},
	References: []string{
		"Armitage JM, Wania F, Arnot JA (2014) Environ Sci Technol 48:9770–9779",
		"Honda GS et al. (2019) PLoS One 14:e0217564; httk 2.7 R/armitage.R",
		"Trapp S (2004) Environ Sci Pollut Res 11:33–39",
		"Matthews ER et al. (2023) bioRxiv 10.1101/2023.10.03.560405 (data: mward-lab/Matthews_TOP2i_cardiotox_2023, MIT)",
	},
	License: "MIT (data), model code Apache-2.0",
}

func evaluate(in model.Input) (model.Output, error) {
	out, err := model.Evaluate(in)
	var ie *model.InputError
	if errors.As(err, &ie) {
		return out, module.InvalidInput(ie.Field, "%s", ie.Message)
	}
	if err != nil {
		return out, module.Internal("%v", err)
	}
	return out, nil
}

func main() {}
