// Command pbpk-doxorubicin is the /pbpk/doxorubicin module, built as a
// WebAssembly reactor with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o modules/pbpk-doxorubicin/pbpk-doxorubicin.wasm ./modules/pbpk-doxorubicin
package main

import (
	"errors"

	"toxgate/modules/pbpk-doxorubicin/model"
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
			"description": "the plot: an SVG document of plasma and tissue concentrations (ng/mL, log axis) over time"
		},
		"model": {
			"type": "string",
			"description": "model name"
		},
		"version": {
			"type": "string",
			"description": "model version"
		},
		"physiology": {
			"type": "object",
			"description": "the body's volumes and flows used"
		},
		"summary": {
			"type": "object",
			"description": "plasma Cmax, Tmax, AUC, t½, clearance; heart exposure"
		},
		"time_series": {
			"type": "object",
			"description": "time_h; ng_per_mL and uM per compartment (6 significant digits)"
		},
		"units": {
			"type": "object",
			"description": "unit of each member"
		}
	},
	"required": ["plot_svg", "model", "version", "physiology", "summary", "time_series", "units"]
}`

func init() {
	module.Register(module.Info{
		Name:        "pbpk-doxorubicin",
		Version:     model.Version,
		Title:       "Doxorubicin whole-body PBPK",
		Description: "Human whole-body PBPK of doxorubicin after one intravenous infusion, with a heart model (extracellular, intracellular free, DNA-bound).",
		Limits:      abi.Limits{MemoryPages: 512, TimeoutMS: 5000},
		Card: abi.ModelCard{
			Summary:     "Plasma, tissue and heart concentration–time profiles (ng/mL and µM) and PK figures (Cmax, Tmax, AUC0-t, AUC∞, terminal half-life, heart exposure) for a dose in mg/m² given as an IV infusion.",
			IntendedUse: "Exploring doxorubicin exposure and cardiac accumulation by dose, infusion time, age and body size; research use, not clinical dosing.",
			Data:        "Published parameters: whole-body R PBPK (volumes, flows, Simcyp Kp, fup 0.26, B:P 1.15, CL hepatic 29.97 and renal 0.66 L/h), He et al. 2018 heart DNA binding and permeability; see MODEL_CARD.md.",
			Method:      "Perfusion-limited tissues, permeability-limited heart cells with equilibrium DNA binding; BSA by Du Bois; cardiac output by age and BSA; volumes by weight; RODAS4 solver.",
			Validation:  "60 mg/m², 70 kg, 190 cm, 3-min infusion: plasma AUC∞ 1.60 mg·h/L vs dose/62.4 L/h = 1.89 (Perez-Blanco 2016, −15 %); terminal half-life 31 h (20–50 h expected). Mass balance error < 1e-9.",
			Limitations: "Adults (age 18–100); single dose; no doxorubicinol; clearance convention of the source model interpreted (see MODEL_CARD.md); one heart intracellular compartment.",
			Units:       map[string]string{"dose_mg": "mg/m²", "age": "years", "weight": "kg", "height": "cm", "infusion_h": "h", "days": "day", "time_h": "h"},
			References:  []string{"He H et al. (2018) Pharm Res, PMC6533104", "Perez-Blanco JS et al. (2016) Br J Clin Pharmacol, doi 10.1111/bcp.13070", "Du Bois D, Du Bois EF (1916) Arch Intern Med 17:863"},
		},
	},
		module.Handle("/pbpk/doxorubicin", simulate).
			Summary("Simulate a doxorubicin IV infusion").
			Output("physiology, summary (plasma Cmax/Tmax/AUC/t½/CL, heart exposure), time_series (time_h; ng_per_mL and uM per compartment, 6 significant digits), units, plot_svg (an SVG document, image/svg+xml: concentrations on a log axis)").
			OutputSchema(outputSchema).
			Example(`{"dose_mg":60,"age":50,"weight":70,"height":190}`),
	)
}

// outBuf holds the encoded output of the last call, reused by the next: an
// instance runs one call at a time and the SDK copies a handler's RawJSON
// into the response before the call returns, so the ~250 KB buffer of a
// 7-day run is allocated once per instance instead of once per call (less
// garbage to collect in the module; ≤ 1.5 MB after a 28-day run).
var outBuf []byte

// simulate returns the output encoded by the model (the same JSON as
// json.Marshal, written without re-validating the time series in the module).
func simulate(in model.Input) (module.RawJSON, error) {
	out, err := model.Simulate(in)
	var ie *model.InputError
	if errors.As(err, &ie) {
		return nil, module.InvalidInput(ie.Field, "%s", ie.Message)
	}
	if err != nil {
		return nil, module.Internal("%v", err)
	}
	b, err := out.AppendJSON(outBuf[:0])
	if err != nil {
		return nil, module.Internal("encoding the output: %v", err)
	}
	outBuf = b
	return b, nil
}

func main() {}
