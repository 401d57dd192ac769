package e2e

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// svgRect is a rectangle in a panel's coordinates.
type svgRect struct{ x, y, w, h float64 }

func (r svgRect) overlaps(o svgRect) bool {
	return r.x < o.x+o.w && o.x < r.x+r.w && r.y < o.y+o.h && o.y < r.y+r.h
}

// svgAxis is an axis as the plot-area rectangle states it.
type svgAxis struct {
	log    bool
	lo, hi float64
}

// covers reports whether v lies on the axis (to 1e-6 relative: the
// response's series carry 6 significant digits).
func (a svgAxis) covers(v float64) bool {
	return v >= a.lo*(1-1e-6)-1e-12 && v <= a.hi*(1+1e-6)+1e-12
}

// svgPanel is what a reader checks in one panel of a model's plot.
type svgPanel struct {
	area, legend   *svgRect
	x, y           svgAxis
	xLabel, yLabel string
	title          string
	points         [][2]float64 // pixel coordinates of line points and markers
}

// parsePlot parses an SVG document (a panel, or panels in nested <svg>
// elements) as XML.
func parsePlot(t *testing.T, svg string) []*svgPanel {
	t.Helper()
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("number %q in the SVG: %v", s, err)
		}
		return v
	}
	axis := func(scale, rng string) svgAxis {
		lo, hi, ok := strings.Cut(rng, " ")
		if !ok || (scale != "log" && scale != "linear") {
			t.Fatalf("axis %q %q", scale, rng)
		}
		return svgAxis{log: scale == "log", lo: num(lo), hi: num(hi)}
	}
	var stack, panels []*svgPanel
	var text *string // the label being read
	depth := 0       // of elements inside it
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("plot_svg is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			at := map[string]string{}
			for _, a := range e.Attr {
				at[a.Name.Local] = a.Value
			}
			if text != nil {
				depth++
				continue
			}
			if e.Name.Local == "svg" {
				stack = append(stack, &svgPanel{})
				continue
			}
			if len(stack) == 0 {
				t.Fatalf("<%s> outside <svg>", e.Name.Local)
			}
			p := stack[len(stack)-1]
			switch e.Name.Local {
			case "rect":
				if at["class"] == "plot-area" || at["class"] == "legend-box" {
					r := &svgRect{num(at["x"]), num(at["y"]), num(at["width"]), num(at["height"])}
					if at["class"] == "legend-box" {
						p.legend = r
						continue
					}
					p.area = r
					p.x = axis(at["data-x-scale"], at["data-x-range"])
					p.y = axis(at["data-y-scale"], at["data-y-range"])
				}
			case "text":
				switch at["class"] {
				case "x-label":
					text = &p.xLabel
				case "y-label":
					text = &p.yLabel
				case "title":
					text = &p.title
				}
			case "polyline":
				for _, pt := range strings.Fields(at["points"]) {
					x, y, _ := strings.Cut(pt, ",")
					p.points = append(p.points, [2]float64{num(x), num(y)})
				}
			case "circle":
				if at["r"] == "2.5" { // a data marker (the legend's are r="3")
					p.points = append(p.points, [2]float64{num(at["cx"]), num(at["cy"])})
				}
			}
		case xml.CharData:
			if text != nil {
				*text += string(e)
			}
		case xml.EndElement:
			switch {
			case text != nil && depth > 0:
				depth--
			case text != nil:
				text = nil
			case e.Name.Local == "svg":
				p := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if p.area != nil {
					panels = append(panels, p)
				}
			}
		}
	}
	return panels
}

// Every model that draws a plot answers it under "plot_svg" as an SVG
// document that a scientist can put in a report: axis labels with units (µ
// as µ), a log axis that holds every value of the answer it plots (the
// doxorubicin plasma curve down to 0.41 ng/mL), every drawn point inside the
// data area, the legend beside the data area and not over it; the old
// base64 PNG keys are gone.
func TestModelPlotsAreSVGReports(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+modulesDir(t, "pbpk-doxorubicin", "pbpk-httk", "tk-2d", "tk-3d", "td-omics")))
	token := adminToken(t, g)
	type answer = map[string]any
	floats := func(v any) []float64 {
		var out []float64
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case []any:
				for _, e := range x {
					walk(e)
				}
			case float64:
				out = append(out, x)
			}
		}
		walk(v)
		return out
	}
	scaled := func(vs []float64, f float64) []float64 {
		out := make([]float64, len(vs))
		for i, v := range vs {
			out[i] = v * f
		}
		return out
	}
	cases := []struct {
		path, body string
		labels     [][2]string // x and y label of each panel
		oldKeys    []string
		// yValues and xValues are the answer's numbers that panel i plots
		// on its y and x axes.
		yValues, xValues func(a answer, panel int) []float64
	}{
		{path: "/pbpk/doxorubicin", body: `{"dose_mg":60,"age":50,"weight":70,"height":190}`,
			labels: [][2]string{{"time (h)", "concentration (ng/mL)"}},
			yValues: func(a answer, _ int) []float64 {
				ts := a["time_series"].(answer)["ng_per_mL"].(answer)
				var v []float64
				for _, k := range []string{"plasma", "heart", "heart_DNA_bound", "heart_intracellular_free", "liver", "kidney", "muscle"} {
					v = append(v, floats(ts[k])...)
				}
				return v
			}},
		{path: "/pbpk/httk", body: `{"chem_name":"Bisphenol A","species":"human","daily_dose":1,"doses_per_day":1,"days":15}`,
			labels: [][2]string{{"time (day)", "concentration (µM)"}},
			yValues: func(a answer, _ int) []float64 {
				ts := a["time_series"].(answer)
				var v []float64
				for _, k := range []string{"Cplasma", "Cliver", "Ckidney", "Cgut", "Clung", "Crest"} {
					v = append(v, floats(ts[k])...)
				}
				return v
			}},
		{path: "/TK/2D/evaluate", body: `{"compound":"DOX"}`,
			labels:  [][2]string{{"time (h)", "concentration (µM)"}, {"time (h)", "viability (% of vehicle)"}},
			oldKeys: []string{"cells_diagram", "medium_diagram", "viability_diagram"},
			yValues: func(a answer, panel int) []float64 {
				if panel == 1 {
					return scaled(floats(a["viability"]), 100)
				}
				return append(append(floats(a["cell_uM"]), floats(a["medium_total_uM"])...), floats(a["medium_free_uM"])...)
			}},
		{path: "/TK/3D/evaluate", body: `{"compound":"DOX"}`,
			labels:  [][2]string{{"time (h)", "concentration (µM)"}, {"time (h)", "concentration (µM)"}},
			oldKeys: []string{"diag_5p", "diag_10p", "diag_meaning"},
			yValues: func(a answer, panel int) []float64 {
				// The panels draw the layers at EC5 and EC10; the answer's
				// layer_uM and medium_free_uM are at nominal_uM (linear).
				ec := a[[]string{"ec5_nominal_uM", "ec10_nominal_uM"}[panel]].(float64)
				f := ec / a["nominal_uM"].(float64)
				layers := a["layer_uM"].([]any)
				var v []float64
				for _, i := range []int{0, 3, 6, 9} {
					v = append(v, scaled(floats(layers[i]), f)...)
				}
				return append(v, scaled(floats(a["medium_free_uM"]), f)...)
			}},
		{path: "/TD/proteomics/evaluate", body: `{"compound":"DOX","protein":"P16403"}`,
			labels:  [][2]string{{"time (h)", "log2 fold change (treated/vehicle)"}},
			oldKeys: []string{"diagram"},
			xValues: func(a answer, _ int) []float64 {
				var v []float64
				for _, f := range a["fit"].([]any) {
					v = append(v, floats(f.(answer)["time_h"])...)
				}
				for _, r := range a["results"].([]any) {
					if r.(answer)["log2fc"] != nil {
						v = append(v, r.(answer)["time_h"].(float64))
					}
				}
				return v
			}},
		{path: "/TD/metabolomics/evaluate", body: `{"compound":"DOX"}`,
			labels:  [][2]string{{"log2 fold change (DOX/vehicle)", "−log10 p (Welch t-test)"}},
			oldKeys: []string{"diagram"}},
		{path: "/TD/lipidomics/evaluate", body: `{"compound":"DOX"}`,
			labels:  [][2]string{{"log2 fold change (DOX/vehicle)", "−log10 p (Welch t-test)"}},
			oldKeys: []string{"diagram"}},
	}
	// The API docs name the key in each route's response schema, and not
	// the old ones.
	_, spec := get(t, g, "/openapi.json", nil)
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema apiSchema `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]apiSchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatalf("/openapi.json: %v", err)
	}
	for _, c := range cases {
		schema := doc.Paths[c.path]["post"].Responses["200"].Content["application/json"].Schema
		if name, ok := strings.CutPrefix(schema.Ref, "#/components/schemas/"); ok {
			schema = doc.Components.Schemas[name]
		}
		props := schema.Properties
		if props["plot_svg"]["type"] != "string" || props["plot_svg"]["contentMediaType"] != "image/svg+xml" {
			t.Errorf("%s: the API docs' response schema lacks plot_svg: %v", c.path, props["plot_svg"])
		}
		for _, k := range c.oldKeys {
			if _, ok := props[k]; ok {
				t.Errorf("%s: the API docs still name %s", c.path, k)
			}
		}
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(strings.Trim(c.path, "/"), "/", "_"), func(t *testing.T) {
			code, _, body := postJSON(t, g, c.path, c.body, http.Header{"Authorization": {"Bearer " + token}})
			if code != 200 {
				t.Fatalf("%d %.300s", code, body)
			}
			var a answer
			if err := json.Unmarshal(body, &a); err != nil {
				t.Fatal(err)
			}
			for _, k := range c.oldKeys {
				if _, ok := a[k]; ok {
					t.Errorf("the old key %q is still answered", k)
				}
			}
			svg, _ := a["plot_svg"].(string)
			if !strings.HasPrefix(svg, "<svg") {
				t.Fatalf("plot_svg is not an SVG document: %.100q", svg)
			}
			panels := parsePlot(t, svg)
			if len(panels) != len(c.labels) {
				t.Fatalf("%d panels, want %d", len(panels), len(c.labels))
			}
			for i, p := range panels {
				if p.xLabel != c.labels[i][0] || p.yLabel != c.labels[i][1] {
					t.Errorf("panel %d: axis labels %q, %q; want %q, %q", i, p.xLabel, p.yLabel, c.labels[i][0], c.labels[i][1])
				}
				if strings.Contains(c.labels[i][1], "µM") && strings.Contains(svg, "uM") {
					t.Error(`the plot writes µM as "uM"`)
				}
				if p.legend == nil || p.legend.overlaps(*p.area) {
					t.Errorf("panel %d: legend %v over the data area %v", i, p.legend, *p.area)
				}
				if len(p.points) == 0 {
					t.Errorf("panel %d draws no data", i)
				}
				r := *p.area
				for _, pt := range p.points {
					if pt[0] < r.x-0.05 || pt[0] > r.x+r.w+0.05 || pt[1] < r.y-0.05 || pt[1] > r.y+r.h+0.05 {
						t.Fatalf("panel %d: point %v outside the data area %v", i, pt, r)
					}
				}
				check := func(name string, ax svgAxis, vs []float64) {
					n := 0
					for _, v := range vs {
						if ax.log && v <= 0 {
							continue // no place on a log axis
						}
						n++
						if !ax.covers(v) {
							t.Fatalf("panel %d: the %s axis [%g, %g] does not hold the value %g of the answer", i, name, ax.lo, ax.hi, v)
						}
					}
					if n == 0 {
						t.Errorf("panel %d: no %s values to check", i, name)
					}
				}
				if c.yValues != nil {
					check("y", p.y, c.yValues(a, i))
				}
				if c.xValues != nil {
					check("x", p.x, c.xValues(a, i))
				}
			}
		})
	}
	// Doxorubicin: plasma falls to about 0.41 ng/mL at 7 days, and the log
	// y axis must reach down to that last value, not stop at a tick above it.
	// The title names Cmax.
	code, _, body := postJSON(t, g, "/pbpk/doxorubicin", `{"dose_mg":60,"age":50,"weight":70,"height":190}`, http.Header{"Authorization": {"Bearer " + token}})
	var a struct {
		TimeSeries struct {
			NgPerML map[string][]float64 `json:"ng_per_mL"`
		} `json:"time_series"`
		PlotSVG string `json:"plot_svg"`
	}
	if err := json.Unmarshal(body, &a); code != 200 || err != nil {
		t.Fatalf("%d %v", code, err)
	}
	plasma := a.TimeSeries.NgPerML["plasma"]
	last := plasma[len(plasma)-1]
	p := parsePlot(t, a.PlotSVG)[0]
	if math.Abs(last-0.41) > 0.01 || !p.y.log || !p.y.covers(last) || !strings.Contains(p.title, "Cmax") {
		t.Errorf("plasma at 7 days %g ng/mL, y axis %+v, title %q (want Cmax as C with a subscript)", last, p.y, p.title)
	}
}

// apiSchema is the part of an OpenAPI schema the plot test reads: its
// properties, or a reference to a component that has them.
type apiSchema struct {
	Ref        string                    `json:"$ref"`
	Properties map[string]map[string]any `json:"properties"`
}
