// Package omics answers the TD omics routes (proteomics, metabolomics,
// lipidomics) of the td-omics module.
package omics

import (
	"fmt"
	"math"
	"strings"

	"toxgate/modules/td-omics/metabolomics"
	"toxgate/modules/td-omics/proteomics"
	"toxgate/sdk/module"
	"toxgate/sdk/plot"
	"toxgate/sdk/stats"
)

// Version is the module version.
const Version = "1.0.0"

// CompoundInput is the body of the metabolomics and lipidomics routes.
type CompoundInput struct {
	Compound string `json:"compound" desc:"DOX (doxorubicin); AMI, ROT and TBBPA answer that no public data exist" example:"\"DOX\"" minlen:"1" maxlen:"100"`
}

// ProteomicsInput is the body of the proteomics route.
type ProteomicsInput struct {
	Compound string `json:"compound" desc:"DOX, EPI, IDA or DAU (anthracyclines of HeCaToS); AMI and ROT answer that no public proteomics exist" example:"\"DOX\"" minlen:"1" maxlen:"100"`
	Protein  string `json:"protein" desc:"UniProt accession (matched inside protein groups) or entry name, e.g. P16403 or H12_HUMAN" example:"\"P16403\"" minlen:"1" maxlen:"40"`
}

var noData = map[string]string{"AMI": "amiodarone", "ROT": "rotenone", "TBBPA": "tetrabromobisphenol A", "SAC": "SAC"}

// drugCode maps a compound field to a code of the data set.
func drugCode(q string, known map[string]string) (string, bool) {
	u := strings.ToUpper(strings.TrimSpace(q))
	if _, ok := known[u]; ok {
		return u, true
	}
	for k, name := range known {
		if strings.EqualFold(strings.TrimSpace(q), name) {
			return k, true
		}
	}
	return "", false
}

// ProteomicsOutput is the proteomics response.
type ProteomicsOutput struct {
	Model    string              `json:"model"`
	Version  string              `json:"version"`
	Compound string              `json:"compound"`
	Drug     string              `json:"drug"`
	Protein  string              `json:"protein"`
	Group    proteomics.Group    `json:"protein_group"`
	System   string              `json:"system"`
	Doses    string              `json:"doses"`
	Results  []proteomics.Result `json:"results"`
	Fit      []SmoothFit         `json:"fit"`
	// PlotSVG is an SVG document: log2FC over time, the fits as lines and
	// the observations as dots.
	PlotSVG string            `json:"plot_svg"`
	Method  string            `json:"method"`
	Units   map[string]string `json:"units"`
}

// SmoothFit is the smoothed log2FC time course of one dose.
type SmoothFit struct {
	Dose   string      `json:"dose"`
	TimeH  []float64   `json:"time_h"`
	Log2FC []stats.Num `json:"log2fc"`
}

// Proteomics answers /TD/proteomics/evaluate.
func Proteomics(in ProteomicsInput) (ProteomicsOutput, error) {
	if strings.TrimSpace(in.Compound) == "" {
		return ProteomicsOutput{}, module.InvalidInput("compound", "is required: DOX, EPI, IDA or DAU")
	}
	if strings.TrimSpace(in.Protein) == "" {
		return ProteomicsOutput{}, module.InvalidInput("protein", "is required: a UniProt accession such as P16403")
	}
	code, ok := drugCode(in.Compound, proteomics.Drugs)
	if !ok {
		if n, nd := noData[strings.ToUpper(strings.TrimSpace(in.Compound))]; nd {
			return ProteomicsOutput{}, module.InvalidInput("compound", "no public proteomics data exist for %s in cardiac cells; supported: DOX, EPI, IDA, DAU (HeCaToS iPSC cardiac microtissues)", n)
		}
		return ProteomicsOutput{}, module.InvalidInput("compound", "%q not supported; supported: DOX, EPI, IDA, DAU (HeCaToS iPSC cardiac microtissues)", in.Compound)
	}
	g, err := proteomics.Find(in.Protein)
	if nf, isNF := err.(*proteomics.NotFoundError); isNF {
		return ProteomicsOutput{}, module.InvalidInput("protein", "%s", nf.Error())
	}
	if err != nil {
		return ProteomicsOutput{}, module.Internal("%v", err)
	}
	rs, err := proteomics.Series(code, g)
	if err != nil {
		return ProteomicsOutput{}, module.Internal("%v", err)
	}
	out := ProteomicsOutput{Model: "td-omics/proteomics", Version: Version, Compound: in.Compound, Drug: proteomics.Drugs[code],
		Protein: in.Protein, Group: g, Results: rs,
		System: "human iPSC-derived 3D cardiac microtissues (HeCaToS; Selevsek et al. 2020, Nguyen et al. 2021)",
		Doses:  "HeCaToS 'Therapeutic' and 'Toxic' levels: repeated in-vivo-like exposure profiles derived by PBPK (Verheijen et al. 2018); the nM values are not in the public table",
		Method: "log2FC = mean log2 intensity (treated) − mean (time-matched Fluct DMSO vehicle), non-detects excluded, duplicated columns dropped; Welch two-sample t-test, two-sided; BH q-value over all protein groups tested at the same drug, dose and time. fit: Gaussian-kernel local-linear smoother of log2FC over log2(1 + t) (bandwidth 1.0), evaluated on 50 points from 2 to 336 h.",
		Units:  map[string]string{"log2fc": "log2 ratio treated/vehicle", "time_h": "h", "p": "two-sided", "q": "BH-adjusted"}}
	p := plot.New(fmt.Sprintf("%s (%s): %s, HeCaToS cardiac microtissues", proteomics.Drugs[code], code, in.Protein),
		"time (h)", "log_{2} fold change (treated/vehicle)")
	p.LogX = true
	for _, dose := range proteomics.Doses {
		var x, y []float64
		for _, r := range rs {
			if r.Dose == dose && !math.IsNaN(float64(r.Log2FC)) {
				x = append(x, math.Log2(1+float64(r.TimeH)))
				y = append(y, float64(r.Log2FC))
			}
		}
		if len(x) == 0 {
			continue
		}
		grid := make([]float64, 50)
		lg := make([]float64, 50)
		for i := range grid {
			grid[i] = 2 * math.Pow(168, float64(i)/49)
			lg[i] = math.Log2(1 + grid[i])
		}
		sm := stats.LocalLinear(x, y, lg, 1.0)
		out.Fit = append(out.Fit, SmoothFit{dose, grid, stats.Nums(sm)})
		obsT := make([]float64, len(x))
		for i := range x {
			obsT[i] = math.Exp2(x[i]) - 1
		}
		col := plot.Palette[len(p.Series)/2]
		p.Add(dose+", fit", grid, sm).Color = col
		obs := p.Add(dose+", observed", obsT, y)
		obs.Color, obs.Markers = col, true
	}
	out.PlotSVG = p.SVG()
	return out, nil
}

// MetabolomicsOutput is the metabolomics and lipidomics response.
type MetabolomicsOutput struct {
	Model       string                        `json:"model"`
	Version     string                        `json:"version"`
	Compound    string                        `json:"compound"`
	Scope       string                        `json:"scope"`
	Species     string                        `json:"species"`
	Dose        string                        `json:"dose"`
	Vehicle     string                        `json:"vehicle"`
	TimesH      []int                         `json:"time_points_h"`
	MostChanged []metabolomics.Top            `json:"most_changed"`
	Pathways    []metabolomics.PathwaySummary `json:"pathway_summary"`
	Metabolites []metabolomics.Metabolite     `json:"metabolites"`
	// PlotSVG is an SVG document: the volcano plot, one colour per time.
	PlotSVG string            `json:"plot_svg"`
	Method  string            `json:"method"`
	Note    string            `json:"note,omitempty"`
	Units   map[string]string `json:"units"`
}

// Metabolomics answers /TD/metabolomics/evaluate, or /TD/lipidomics/evaluate
// with lipidsOnly.
func Metabolomics(in CompoundInput, lipidsOnly bool) (MetabolomicsOutput, error) {
	kind := "metabolomics"
	if lipidsOnly {
		kind = "lipidomics"
	}
	if strings.TrimSpace(in.Compound) == "" {
		return MetabolomicsOutput{}, module.InvalidInput("compound", "is required: DOX")
	}
	if _, ok := drugCode(in.Compound, map[string]string{"DOX": "doxorubicin"}); !ok {
		if n, nd := noData[strings.ToUpper(strings.TrimSpace(in.Compound))]; nd {
			return MetabolomicsOutput{}, module.InvalidInput("compound", "no public %s data exist for %s in cardiomyocytes; supported: DOX (Dougherty et al. 2024, rat cardiomyocytes)", kind, n)
		}
		return MetabolomicsOutput{}, module.InvalidInput("compound", "%q not supported; supported: DOX", in.Compound)
	}
	all, err := metabolomics.All()
	if err != nil {
		return MetabolomicsOutput{}, module.Internal("%v", err)
	}
	ms := all
	scope := "all 200 measured intracellular metabolites"
	note := ""
	if lipidsOnly {
		ms = nil
		for _, m := range all {
			if m.SuperPathway == "Lipid" {
				ms = append(ms, m)
			}
		}
		scope = "the Lipid super-pathway of the metabolomics panel"
		note = "No dedicated public lipidomics data exist for doxorubicin, amiodarone or rotenone in cardiomyocytes; this answer is the lipid super-pathway (17 lipids: phospholipid, glycerolipid, fatty-acid, carnitine and related metabolism) of the Dougherty et al. 2024 metabolomics, not a lipidome."
	}
	out := MetabolomicsOutput{Model: "td-omics/" + kind, Version: Version, Compound: in.Compound, Scope: scope,
		Species: "rat (Rattus norvegicus) cardiomyocytes in culture (Dougherty et al. 2024)",
		Dose:    "doxorubicin at the single concentration of Dougherty et al. 2024 (stated in the paper's methods; the public data files carry no concentration)",
		Vehicle: "DMSO (group DMSO2, time-matched)", TimesH: metabolomics.Times,
		MostChanged: metabolomics.MostChanged(ms, 15), Pathways: metabolomics.Summarise(ms), Metabolites: ms, Note: note,
		Method: "Metabolon raw intensities; values below detection imputed with the metabolite's minimum; log2FC = mean log2 (DOX) − mean log2 (DMSO2) at the same time, n = 7 vs 7; Welch two-sided t-test; BH q-value over the metabolites of the panel at that time (computed over all 200, also for lipidomics). most_changed: 15 smallest q per time; pathway_summary: per super-pathway and time, counts with q < 0.05 and mean log2FC.",
		Units:  map[string]string{"log2fc": "log2 ratio DOX/vehicle", "time_h": "h"}}
	p := plot.New(fmt.Sprintf("Doxorubicin %s, rat cardiomyocytes: volcano plot", kind),
		"log_{2} fold change (DOX/vehicle)", "−log_{10} p (Welch t-test)")
	for k, t := range metabolomics.Times {
		var x, y []float64
		for _, m := range ms {
			if r := m.Results[k]; !math.IsNaN(float64(r.P)) && r.P > 0 {
				x = append(x, float64(r.Log2FC))
				y = append(y, -math.Log10(float64(r.P)))
			}
		}
		p.Add(fmt.Sprintf("%d h", t), x, y).Markers = true
	}
	out.PlotSVG = p.SVG()
	return out, nil
}
