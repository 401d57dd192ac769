package plot_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	doxo "toxgate/modules/pbpk-doxorubicin/model"
	"toxgate/sdk/plot"
)

// doxoCase is the input of the doxorubicin model's plot (its plotProfiles):
// the output times and the concentrations of the plotted compartments.
type doxoCase struct {
	Title   string               `json:"title"`
	TimeH   []float64            `json:"time_h"`
	Names   []string             `json:"names"`
	NgPerML map[string][]float64 `json:"ng_per_mL"`
}

// doxoPlot draws c as modules/pbpk-doxorubicin/model's plotProfiles does.
func doxoPlot(c *doxoCase) string {
	p := plot.New(c.Title, "time (h)", "concentration (ng/mL)")
	p.LogY = true
	for _, name := range c.Names {
		x, y := plot.Thin(c.TimeH, c.NgPerML[name], 500)
		p.Add(doxoLabels[name], x, y)
	}
	return p.SVG()
}

// doxoLabels are the model's legend entries.
var doxoLabels = map[string]string{"plasma": "plasma", "heart": "heart", "heart_DNA_bound": "heart, DNA-bound",
	"heart_intracellular_free": "heart, intracellular free", "liver": "liver", "kidney": "kidney", "muscle": "muscle"}

func ptr(v float64) *float64 { return &v }

// doxoInputs are the model runs recorded under testdata (doxorubicin-*.json.gz).
var doxoInputs = map[string]doxo.Input{
	"ref-7d":   {DoseMg: ptr(60), Age: ptr(50), Weight: ptr(70), Height: ptr(190), Days: ptr(7)},
	"slow-1d":  {DoseMg: ptr(20), Age: ptr(30), Weight: ptr(55), Height: ptr(160), InfusionH: ptr(0.5), Days: ptr(1)},
	"high-14d": {DoseMg: ptr(75), Age: ptr(80), Weight: ptr(120), Height: ptr(175), Days: ptr(14)},
}

func doxoFromModel(t *testing.T, in doxo.Input) (*doxoCase, string) {
	t.Helper()
	out, err := doxo.Simulate(in)
	if err != nil {
		t.Fatal(err)
	}
	c := &doxoCase{
		Title: fmt.Sprintf("Doxorubicin %.0f mg IV (%.3g m²), plasma C_{max} %.4g ng/mL", out.Summary.DoseMgTotal,
			out.Physiology.BSA, out.Summary.CmaxNgPerML),
		TimeH:   out.Series.TimeH,
		Names:   []string{"plasma", "heart", "heart_DNA_bound", "heart_intracellular_free", "liver", "kidney", "muscle"},
		NgPerML: map[string][]float64{},
	}
	for _, name := range c.Names {
		c.NgPerML[name] = out.Series.NgPerML[name]
	}
	return c, out.PlotSVG
}

// TestDoxorubicinRecipe checks that doxoPlot is the model's own plot, so that
// the recorded inputs stand for the model's plot in TestGoldenSVG; with
// PLOT_UPDATE_GOLDEN=1 it records them under testdata.
func TestDoxorubicinRecipe(t *testing.T) {
	for name, in := range doxoInputs {
		c, svg := doxoFromModel(t, in)
		if got := doxoPlot(c); got != svg {
			t.Fatalf("%s: the recipe does not draw the model's plot", name)
		}
		if os.Getenv("PLOT_UPDATE_GOLDEN") == "" {
			continue
		}
		f, err := os.Create(filepath.Join("testdata", "doxorubicin-"+name+".json.gz"))
		if err != nil {
			t.Fatal(err)
		}
		z := gzip.NewWriter(f)
		if err := json.NewEncoder(z).Encode(c); err != nil {
			t.Fatal(err)
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// readDoxoCases reads the recorded model plots.
func readDoxoCases(tb testing.TB) map[string]*doxoCase {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "doxorubicin-*.json.gz"))
	if len(files) == 0 {
		tb.Fatal("no testdata/doxorubicin-*.json.gz")
	}
	cases := map[string]*doxoCase{}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			tb.Fatal(err)
		}
		z, err := gzip.NewReader(f)
		if err != nil {
			tb.Fatal(err)
		}
		var c doxoCase
		if err := json.NewDecoder(z).Decode(&c); err != nil {
			tb.Fatal(err)
		}
		f.Close()
		cases[filepath.Base(file)] = &c
	}
	return cases
}
