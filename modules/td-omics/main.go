// Command td-omics serves the TD omics routes (/TD/proteomics/evaluate,
// /TD/metabolomics/evaluate, /TD/lipidomics/evaluate) from public data, built
// as a WebAssembly reactor with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/modules/td-omics.wasm ./modules/td-omics
package main

import (
	"toxgate/modules/td-omics/omics"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

// Version is the module version.
const Version = omics.Version

type (
	// CompoundInput is the body of the metabolomics and lipidomics routes.
	CompoundInput = omics.CompoundInput
	// ProteomicsInput is the body of the proteomics route.
	ProteomicsInput = omics.ProteomicsInput
)

func proteomicsEval(in ProteomicsInput) (omics.ProteomicsOutput, error) { return omics.Proteomics(in) }

func metabolomicsEval(in CompoundInput, lipidsOnly bool) (omics.MetabolomicsOutput, error) {
	return omics.Metabolomics(in, lipidsOnly)
}

// proteomicsSchema and metabolomicsSchema are the JSON Schemas of the
// responses (their members; plot_svg is the plot, see sdk/plot/README.md).
const (
	proteomicsSchema = `{
	"type": "object",
	"properties": {
		"plot_svg": {
			"type": "string",
			"contentMediaType": "image/svg+xml",
			"description": "the plot: an SVG document of log2 fold change over time (log axis), per dose the fit as a line and the observations as dots"
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
			"type": "string",
			"description": "the compound asked for"
		},
		"drug": {
			"type": "string",
			"description": "the drug's name"
		},
		"protein": {
			"type": "string",
			"description": "the protein asked for"
		},
		"protein_group": {
			"type": "object",
			"description": "the HeCaToS protein group matched"
		},
		"system": {
			"type": "string",
			"description": "the test system"
		},
		"doses": {
			"type": "string",
			"description": "the dose levels"
		},
		"results": {
			"type": "array",
			"description": "per dose and time: log2fc, p, q, n"
		},
		"fit": {
			"type": "array",
			"description": "per dose: the smoothed log2FC time course"
		},
		"method": {
			"type": "string",
			"description": "how the numbers are computed"
		},
		"units": {
			"type": "object",
			"description": "unit of each member"
		}
	},
	"required": ["plot_svg", "model", "version", "compound", "drug", "protein", "protein_group", "system", "doses", "results", "fit", "method", "units"]
}`
	metabolomicsSchema = `{
	"type": "object",
	"properties": {
		"plot_svg": {
			"type": "string",
			"contentMediaType": "image/svg+xml",
			"description": "the plot: an SVG document, the volcano plot (−log10 p over log2 fold change), one colour per time"
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
			"type": "string",
			"description": "the compound asked for"
		},
		"scope": {
			"type": "string",
			"description": "the metabolites included"
		},
		"species": {
			"type": "string",
			"description": "the test system"
		},
		"dose": {
			"type": "string",
			"description": "the dose"
		},
		"vehicle": {
			"type": "string",
			"description": "the control"
		},
		"time_points_h": {
			"type": "array",
			"description": "the times (h)"
		},
		"most_changed": {
			"type": "array",
			"description": "the 15 smallest q per time"
		},
		"pathway_summary": {
			"type": "array",
			"description": "per super-pathway and time: counts at q < 0.05, mean log2FC"
		},
		"metabolites": {
			"type": "array",
			"description": "every metabolite: log2fc, p, q per time"
		},
		"method": {
			"type": "string",
			"description": "how the numbers are computed"
		},
		"note": {
			"type": "string",
			"description": "what the answer is, for lipidomics"
		},
		"units": {
			"type": "object",
			"description": "unit of each member"
		}
	},
	"required": ["plot_svg", "model", "version", "compound", "scope", "species", "dose", "vehicle", "time_points_h", "most_changed", "pathway_summary", "metabolites", "method", "units"]
}`
)

func init() {
	module.Register(module.Info{
		Name:        "td-omics",
		Version:     Version,
		Title:       "Omics responses of cardiac cells to cardiotoxicants",
		Description: "Protein responses of iPSC cardiac microtissues to anthracyclines over 2–336 h (HeCaToS) and metabolite/lipid responses of rat cardiomyocytes to doxorubicin (Dougherty et al. 2024): fold changes, p- and q-values computed from the raw public tables.",
		Limits:      abi.Limits{MemoryPages: 2048, TimeoutMS: 5000},
		Card:        card,
	},
		module.Handle("/TD/proteomics/evaluate", proteomicsEval).
			Summary("Time course of one protein's response to an anthracycline (HeCaToS cardiac microtissues)").
			Output("results: per dose (Therapeutic, Toxic) and time (2–336 h) log2fc, p, q, n; fit: smoothed log2FC; plot_svg: an SVG document (image/svg+xml) of log2FC over time (log axis), fits as lines, observations as dots; protein_group, system, doses, method, units.").
			OutputSchema(proteomicsSchema).
			Example(`{"compound":"DOX","protein":"P16403"}`),
		module.Handle("/TD/metabolomics/evaluate", func(in CompoundInput) (omics.MetabolomicsOutput, error) { return metabolomicsEval(in, false) }).
			Summary("Metabolite responses of rat cardiomyocytes to doxorubicin at 6 and 24 h").
			Output("most_changed, pathway_summary, metabolites (log2fc, p, q per time), plot_svg (an SVG document, image/svg+xml: the volcano plot), species, dose, vehicle, method, units.").
			OutputSchema(metabolomicsSchema).
			Example(`{"compound":"DOX"}`),
		module.Handle("/TD/lipidomics/evaluate", func(in CompoundInput) (omics.MetabolomicsOutput, error) { return metabolomicsEval(in, true) }).
			Summary("Lipid super-pathway of the doxorubicin metabolomics (no dedicated public lipidomics exists)").
			Output("as /TD/metabolomics/evaluate restricted to the Lipid super-pathway; note says so.").
			OutputSchema(metabolomicsSchema).
			Example(`{"compound":"DOX"}`),
	)
}

var card = abi.ModelCard{
	Summary:     "Statistics computed in the project from raw public omics tables: HeCaToS proteomics of human iPSC cardiac microtissues exposed to doxorubicin, epirubicin, idarubicin and daunorubicin (therapeutic and toxic, 2–336 h) and Metabolon metabolomics of rat cardiomyocytes exposed to doxorubicin (6, 24 h).",
	IntendedUse: "Looking up how a protein, metabolite or pathway responds to anthracyclines in cardiac in-vitro models; hypothesis generation, not diagnosis.",
	Data:        "HeCaToS Hecatos_Cardio_Px_ANTvsFluctDMSO_log2_median_normalized.txt (NhanNguyen000/Anthracycline_Protein_Analysis @0976b38, MIT); Dougherty et al. 2024 Supplemental File 3, raw sheet (BonnieDougherty/Cardiotoxicity @78501b0, CC0). See SOURCES.md.",
	Method:      "Per feature, drug/dose and time: log2 fold change against the time-matched vehicle, Welch two-sided t-test, Benjamini–Hochberg q-values within each comparison; proteomics time courses smoothed by a Gaussian-kernel local-linear fit over log2(1+t); metabolomics non-detects imputed with the metabolite minimum.",
	Validation:  "DOX toxic, group H1.4/H1.3/H1.2 (P10412;P16402;P16403): log2FC +2.38 at 24 h and −1.27 at 336 h, as in the team's independent analysis; Welch t and BH checked against textbook values (sdk/stats tests).",
	Limitations: "No public omics for amiodarone, rotenone or TBBPA in cardiac cells: those requests answer 422. Proteomics doses are labels only; vehicle and treated samples may not be batch-matched (effect sizes are more robust than p-values). Metabolomics is rat, one DOX concentration, two times. Lipidomics is the lipid super-pathway of that panel (17 lipids), not a lipidome. The TrEMBL examples B8ZZL8 and D6RF35 are not in HeCaToS.",
	Units:       map[string]string{"log2fc": "log2 ratio to vehicle", "time_h": "h"},
	References: []string{
		"Nguyen N et al. (2021) Front Genet 12:695625, doi:10.3389/fgene.2021.695625",
		"Selevsek N et al. (2020) Commun Biol 3:573",
		"Dougherty BV et al. (2024) PLoS Comput Biol 20:e1011919, doi:10.1371/journal.pcbi.1011919",
		"Benjamini Y, Hochberg Y (1995) J R Stat Soc B 57:289",
	},
	License: "data MIT (HeCaToS repo) and CC0 (Dougherty); code Apache-2.0",
}

func main() {}
