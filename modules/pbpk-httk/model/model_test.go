package model

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

func bpa(days float64) Input {
	return Input{ChemName: "Bisphenol A", Species: "human", DailyDose: f(1), DosesPerDay: f(1), Days: f(days)}
}

func within(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s = %.5g, want %.5g ± %.0f%%", what, got, want, rel*100)
	} else {
		t.Logf("%s = %.5g (httk 2.7.4: %.5g)", what, got, want)
	}
}

// The ALTERNATIVE platform's default request, checked against httk 2.7.4's
// solve_pbtk (models-reference §4.5).
func TestBisphenolAMatchesHttk(t *testing.T) {
	out, err := Simulate(bpa(15))
	if err != nil {
		t.Fatal(err)
	}
	within(t, "Cplasma max (µM)", out.Summary.CmaxUM, 1.11, 0.05)
	within(t, "time of Cmax (day)", out.Summary.TmaxDays, 14.10, 0.01)
	within(t, "Cplasma(day 15) (µM)", out.Summary.CplasmaEndUM, 0.768, 0.02)
	within(t, "AUC(0-15 d) (µM·day)", out.Summary.AUCUMDays, 12.33, 0.02)
	within(t, "analytic Css (µM)", out.Summary.CssAnalyticUM, 0.943, 0.01)
	p := out.Parameters
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"Clmetabolismc", p.Clmetabolismc, 0.1217}, {"Fhep.assay.correction", p.FuHep, 0.674},
		{"Rblood2plasma", p.Rblood2plasma, 0.770}, {"MA", p.MA, 2.88e4}, {"Funbound.plasma", p.Fup, 0.0243},
		{"Kliver2pu", p.Kliver2pu, 754.6}, {"Kkidney2pu", p.Kkidney2pu, 801.7}, {"Kgut2pu", p.Kgut2pu, 521.9},
		{"Klung2pu", p.Klung2pu, 293.1}, {"Krest2pu", p.Krest2pu, 279.4}, {"Fabsgut", p.Fabsgut, 0.644},
		{"Qcardiacc", p.Qcardiacc, 13.88}, {"Vrestc", p.Vrestc, 0.7765}, {"Qliverf", p.Qliverf, 0.0535}} {
		within(t, c.name, c.got, c.want, 0.005)
	}
	// solve_pbtk's grid: 0, 1e-4 d, then every 15 minutes.
	tt := out.TimeSeries.Time
	if tt[0] != 0 || tt[1] != 1e-4 || math.Abs(tt[2]-1.0/96) > 1e-12 || tt[len(tt)-1] != 15 {
		t.Errorf("time grid starts %v ... ends %v", tt[:3], tt[len(tt)-1])
	}
	if !strings.HasPrefix(out.PlotSVG, "<svg") || !strings.Contains(out.PlotSVG, "plasma") {
		t.Error("no SVG plot")
	}
	if dir := os.Getenv("PLOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "httk_bpa.svg"), []byte(out.PlotSVG), 0o644)
	}
}

// calc_analytic_css (human, 1 mg/kg/day oral, µM) from httk 2.7.4.
func TestAnalyticCssSevenChemicals(t *testing.T) {
	want := map[string]float64{"Bisphenol A": 0.943, "Caffeine": 1.334, "Ibuprofen": 9.147,
		"Warfarin": 92.68, "Acetaminophen": 1.695, "Propranolol": 0.142, "Midazolam": 1.059}
	tab, err := loadTables()
	if err != nil {
		t.Fatal(err)
	}
	for name, css := range want {
		c, ok := tab.lookup(name)
		if !ok {
			t.Fatalf("%s not found", name)
		}
		p, err := tab.parameterize(c, "Human", false)
		if err != nil {
			t.Fatal(err)
		}
		within(t, name+" Css", CssAnalytic(p, 1), css, 0.10)
	}
}

// The simulation approaches the analytic steady state for long dosing.
func TestSteadyStateApproachesAnalyticCss(t *testing.T) {
	in := Input{ChemName: "Caffeine", Species: "human", DailyDose: f(1), DosesPerDay: f(24), Days: f(10)}
	out, err := Simulate(in)
	if err != nil {
		t.Fatal(err)
	}
	// Mean plasma concentration over the last day = ΔAUC / 1 day.
	auc := out.TimeSeries.AUC
	tt := out.TimeSeries.Time
	var day9 float64
	for k := range tt {
		if math.Abs(tt[k]-9) < 1e-9 {
			day9 = auc[k]
		}
	}
	within(t, "mean Cplasma on day 10 (hourly dosing) vs analytic Css", auc[len(auc)-1]-day9, out.Summary.CssAnalyticUM, 0.02)
}

func TestMassBalanceAllSpecies(t *testing.T) {
	for _, sp := range []string{"human", "rat", "mouse", "dog", "rabbit"} {
		in := Input{ChemName: "80-05-7", Species: sp, DailyDose: f(3), DosesPerDay: f(2), Days: f(5), DefaultToHuman: true}
		out, err := Simulate(in)
		if err != nil {
			t.Fatalf("%s: %v", sp, err)
		}
		if e := out.Summary.MassBalanceError; e > 1e-6 {
			t.Errorf("%s: mass balance relative error %.2g", sp, e)
		}
		if out.Summary.CmaxUM <= 0 {
			t.Errorf("%s: no exposure", sp)
		}
		if len(out.Dosing.DoseTimesDays) != 10 {
			t.Errorf("%s: %d doses, want 10", sp, len(out.Dosing.DoseTimesDays))
		}
	}
}

func TestChemicalLookupByNameCASDTXSID(t *testing.T) {
	for _, q := range []string{"bisphenol a", "BISPHENOL-A", "80-05-7", "dtxsid7020182"} {
		out, err := Simulate(Input{ChemName: q, Species: "Human", DailyDose: f(1), DosesPerDay: f(1), Days: f(1)})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if out.Chemical.CAS != "80-05-7" {
			t.Errorf("%q matched %s", q, out.Chemical.CAS)
		}
	}
}

func inputError(t *testing.T, err error, field string) *InputError {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("want *InputError for %s, got %v", field, err)
	}
	if ie.Field != field {
		t.Fatalf("error names field %q, want %q (%v)", ie.Field, field, ie)
	}
	return ie
}

func TestBadInputNamesTheField(t *testing.T) {
	cases := []struct {
		field string
		in    Input
	}{
		{"daily_dose", Input{ChemName: "Caffeine", Species: "human", DailyDose: f(-1), DosesPerDay: f(1), Days: f(1)}},
		{"daily_dose", Input{ChemName: "Caffeine", Species: "human", DosesPerDay: f(1), Days: f(1)}},
		{"days", Input{ChemName: "Caffeine", Species: "human", DailyDose: f(1), DosesPerDay: f(1), Days: f(0)}},
		{"days", Input{ChemName: "Caffeine", Species: "human", DailyDose: f(1), DosesPerDay: f(1), Days: f(MaxDays + 1)}},
		{"days", Input{ChemName: "Caffeine", Species: "human", DailyDose: f(1), DosesPerDay: f(1)}},
		{"doses_per_day", Input{ChemName: "Caffeine", Species: "human", DailyDose: f(1), DosesPerDay: f(1.5), Days: f(1)}},
		{"doses_per_day", Input{ChemName: "Caffeine", Species: "human", DailyDose: f(1), DosesPerDay: f(0), Days: f(1)}},
		{"species", Input{ChemName: "Caffeine", Species: "cat", DailyDose: f(1), DosesPerDay: f(1), Days: f(1)}},
		{"species", Input{ChemName: "Caffeine", DailyDose: f(1), DosesPerDay: f(1), Days: f(1)}},
		{"chem_name", Input{Species: "human", DailyDose: f(1), DosesPerDay: f(1), Days: f(1)}},
	}
	for _, c := range cases {
		_, err := Simulate(c.in)
		inputError(t, err, c.field)
	}
}

func TestUnknownChemicalSuggestsNames(t *testing.T) {
	_, err := Simulate(Input{ChemName: "Bisfenol A", Species: "human", DailyDose: f(1), DosesPerDay: f(1), Days: f(1)})
	ie := inputError(t, err, "chem_name")
	if len(ie.Suggestions) == 0 || !strings.EqualFold(ie.Suggestions[0], "Bisphenol-A") {
		t.Errorf("suggestions %v, want Bisphenol-A first", ie.Suggestions)
	}
}

func TestUnusableChemicalSaysWhatIsMissing(t *testing.T) {
	// Bisphenol A has no mouse Clint or fup in httk: without default_to_human it cannot run.
	_, err := Simulate(Input{ChemName: "Bisphenol A", Species: "mouse", DailyDose: f(1), DosesPerDay: f(1), Days: f(1)})
	ie := inputError(t, err, "chem_name")
	if len(ie.Missing) == 0 || !strings.Contains(strings.Join(ie.Missing, " "), "Mouse.Clint") {
		t.Errorf("missing = %v, want Mouse.Clint", ie.Missing)
	}
	if !strings.Contains(ie.Message, "default_to_human") {
		t.Errorf("message %q should mention default_to_human", ie.Message)
	}
}

func TestDecodeWrongTypeAndUnknownField(t *testing.T) {
	_, err := Decode([]byte(`{"chem_name":"Caffeine","species":"human","daily_dose":"1","doses_per_day":1,"days":15}`))
	inputError(t, err, "daily_dose")
	_, err = Decode([]byte(`{"chem_name":"Caffeine","dose":1}`))
	inputError(t, err, "dose")
	in, err := Decode([]byte(`{"chem_name":"Bisphenol A","species":"human","daily_dose":1,"doses_per_day":1,"days":15}`))
	if err != nil || *in.Days != 15 {
		t.Fatalf("valid body: %v %+v", err, in)
	}
}

func BenchmarkHttkBPA365Days(b *testing.B) {
	in := bpa(365)
	if _, err := Simulate(in); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Simulate(in); err != nil {
			b.Fatal(err)
		}
	}
}

// AppendJSON (the module's output, a RawJSON) is byte for byte json.Marshal,
// with and without notes.
func TestAppendJSONIsMarshal(t *testing.T) {
	for _, in := range []Input{bpa(15), bpa(365), {ChemName: "Caffeine", Species: "rat", DailyDose: f(3), DosesPerDay: f(3), Days: f(4), TSteps: 4}} {
		out, err := Simulate(in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := out.AppendJSON([]byte("x"))
		if err != nil || string(got[1:]) != string(want) || got[0] != 'x' {
			t.Fatalf("%s %g days: AppendJSON differs from json.Marshal (%d vs %d bytes), %v", in.ChemName, *in.Days, len(got)-1, len(want), err)
		}
	}
}
