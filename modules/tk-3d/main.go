// Command tk-3d is the /TK/3D/evaluate module: layered diffusion kinetics and
// viability in a spherical cardiac microtissue, built as a WebAssembly reactor
// with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/modules/tk-3d.wasm ./modules/tk-3d
package main

import (
	"toxgate/modules/tk-3d/model"
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
			"description": "the plot: an SVG document with the layer concentrations (µM, log axis) over time at EC5 and at EC10 (two panels), or at nominal_uM without viability data (one panel)"
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
		"plot_meaning": {
			"type": "string",
			"description": "what plot_svg shows"
		},
		"layer_outer_radius_um": {
			"type": "array",
			"description": "outer radius of each layer (µm), outermost first"
		},
		"time_h": {
			"type": "array",
			"description": "times (h)"
		},
		"nominal_uM": {
			"type": "number",
			"description": "nominal medium concentration (µM)"
		},
		"medium_free_uM": {
			"type": "array",
			"description": "free medium concentration (µM) at each time"
		},
		"layer_uM": {
			"type": "array",
			"description": "[layer][time] concentration (µM) at nominal_uM, outermost layer first"
		},
		"layer_viability": {
			"type": "array",
			"description": "[layer][time] viability (fraction of control), with viability data"
		},
		"tissue_viability": {
			"type": "array",
			"description": "volume-averaged viability at each time, with viability data"
		},
		"ec5_nominal_uM": {
			"description": "nominal concentration (µM) giving 5 % less tissue viability at the end; null without viability data"
		},
		"ec10_nominal_uM": {
			"description": "nominal concentration (µM) giving 10 % less tissue viability at the end; null without viability data"
		},
		"K_cw": {
			"type": "number",
			"description": "cell:water partition coefficient"
		},
		"note": {
			"type": "string",
			"description": "what is not available and why"
		},
		"units": {
			"type": "object",
			"description": "unit of each member"
		}
	},
	"required": ["plot_svg", "model", "version", "compound", "plot_meaning", "layer_outer_radius_um", "time_h", "nominal_uM", "medium_free_uM", "layer_uM", "K_cw", "units"]
}`

func init() {
	module.Register(module.Info{
		Name:        "tk-3d",
		Version:     model.Version,
		Title:       "In-vitro kinetics in a 3D cardiac microtissue",
		Description: "Chemical concentration in 10 concentric cell layers of a 300-µm cardiac microtissue (diffusion between layers, httk 2.7 Armitage partitioning) and, where public data exist, layer and tissue viability, EC5/EC10.",
		Limits:      abi.Limits{MemoryPages: 2048, TimeoutMS: 5000},
		Card: abi.ModelCard{
			Summary:     "Per-layer concentration time courses in a spherical cardiac microtissue dosed through the medium; plot_svg (an SVG document) draws them at the nominal concentrations giving 5 % and 10 % loss of tissue viability at the end of exposure.",
			IntendedUse: "Exploring concentration gradients and effect onset in 3D cardiac microtissues (e.g. HeCaToS-type) versus 2D cultures; research use.",
			Data:        "As tk-2d: httk 2.7.4 physico-chemical table; Matthews et al. 2023 48-h hiPSC-CM viability (DOX, DNR, EPI, MTX).",
			Method:      "Sphere R = 150 µm in 10 shells; medium (70 µL in a 96-well, serum-free, Armitage medium/plastic/headspace capacity) exchanges with the outer shell, shells with neighbours: J = D_eff·A·(C_free,i − C_free,i+1)/Δr, C_free = C/K_cw (httk 2.7 K_cw), D_eff = 1e-10 m²/s; linear ODEs solved with RODAS4 (sdk/ode). Layer viability = 2D Hill on AUC/48 h (Haber) with the 2D cell EC50; tissue viability = volume-weighted mean; EC5/EC10 by bisection (the model is linear in the nominal concentration).",
			Validation:  "Mass conservation and the approach of every layer to K_cw·C_w at long times are tested; EC10 > EC5; layers fill from outside in.",
			Limitations: "D_eff, radius and medium volume are assumptions (documented constants), not fitted to 3D data; no vasculature, no cell heterogeneity or necrotic core; the 2D viability relation is applied per layer; compounds without viability data get layer concentrations only (the plot at nominal_uM, with note).",
			Units:       map[string]string{"time_h": "h", "*_uM": "µM", "radius": "µm"},
			References:  []string{"Armitage JM et al. (2014) Environ Sci Technol 48:9770", "Zaldívar Comenges JM et al. (2017) Toxicol In Vitro 45:209 (VCBA)", "VCBA 3D spheroid extension, ATLA 2022, doi:10.1177/02611929221082200", "Matthews ER et al. (2023) bioRxiv 10.1101/2023.10.03.560405"},
			License:     "MIT (data), model code Apache-2.0",
		},
	},
		module.Handle("/TK/3D/evaluate", evaluate).
			Summary("Layered kinetics and viability in a 3D cardiac microtissue").
			Output("plot_svg: an SVG document (image/svg+xml) of the layer concentrations on a log axis at EC5 and EC10 (two panels), or at nominal_uM without viability data (one panel); plot_meaning; time_h, layer_outer_radius_um, medium_free_uM, layer_uM [layer][time], layer_viability, tissue_viability, ec5_nominal_uM, ec10_nominal_uM, K_cw, note, units.").
			OutputSchema(outputSchema).
			Example(`{"compound":"DOX"}`),
	)
}

func evaluate(in model.Input) (model.Output, error) {
	out, err := model.Evaluate(in)
	if ie, ok := model.IsInputError(err); ok {
		return out, module.InvalidInput(ie.Field, "%s", ie.Message)
	}
	if err != nil {
		return out, module.Internal("%v", err)
	}
	return out, nil
}

func main() {}
