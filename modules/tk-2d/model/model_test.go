package model

import (
	"math"
	"strings"
	"testing"
)

func f64(v float64) *float64 { return &v }

// httk 2.7 armitage_eval(nomconc = 1, this.well_number = 96, this.FBSf = f)
// reference values (derivation in sdk/invitro/armitage_test.go); here they are
// reached through the compound codes and the embedded httk table.
func TestCodesReproduceArmitage(t *testing.T) {
	refs := []struct {
		code              string
		fbs               float64
		cfree, xcell, xpl float64
	}{
		{"ROT", 0, 0.385668, 0.227997, 0.386335}, {"AMI", 0, 0.00027743, 0.322666, 0.677056},
		{"DOX", 0, 0.997666, 0.00059732, 0.00173623}, {"TBBPA", 0, 0.0025452, 0.184787, 0.812668},
		{"ROT", 0.1, 0.115671, 0.0683818, 0.115871}, {"AMI", 0.1, 9.25437e-05, 0.107633, 0.225849},
		{"DOX", 0.1, 0.959517, 0.000574479, 0.00166984}, {"TBBPA", 0.1, 0.000710879, 0.0516114, 0.22698},
	}
	for _, r := range refs {
		s, err := Resolve(Input{Compound: r.code, SerumFraction: f64(r.fbs)})
		if err != nil {
			t.Fatal(err)
		}
		c, err := Simulate(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct {
			n         string
			got, want float64
		}{{"cfree", c.Eq.CwatS, r.cfree}, {"xcells", c.Eq.Xcells, r.xcell}, {"xplastic", c.Eq.Xplastic, r.xpl}} {
			if rel := math.Abs(v.got-v.want) / v.want; rel > 0.02 {
				t.Errorf("%s FBS %g: %s %.5g, httk %.5g", r.code, r.fbs, v.n, v.got, v.want)
			}
		}
	}
}

func TestLookupByNameCASAndDTXSID(t *testing.T) {
	for _, q := range []string{"Doxorubicin", "23214-92-8", "DTXSID8021480", "dox"} {
		s, err := Resolve(Input{Compound: q})
		if err != nil || s.Chem.CAS != "23214-92-8" {
			t.Errorf("%q → %+v, %v", q, s.Chem, err)
		}
	}
	if _, err := Resolve(Input{Compound: "Bisphenol A"}); err != nil {
		t.Errorf("httk chemical by name: %v", err)
	}
}

func TestUnknownCompoundListsSupported(t *testing.T) {
	_, err := Resolve(Input{Compound: "Doxorubicine"})
	ie, ok := err.(*InputError)
	if !ok || ie.Field != "compound" || !strings.Contains(ie.Message, "DOX, AMI, ROT, TBBPA") || !strings.Contains(ie.Message, "Doxorubicin") {
		t.Errorf("err = %v", err)
	}
}

func TestDoxViabilityAtEC50Is50Percent(t *testing.T) {
	out, err := Evaluate(Input{Compound: "DOX", NominalUM: 2.565})
	if err != nil {
		t.Fatal(err)
	}
	if out.ViabilityModel == nil || !strings.Contains(out.PlotSVG, "viability (% of vehicle)") {
		t.Fatal("no viability for DOX")
	}
	ec50 := out.ViabilityModel.EC50NominalUM
	out, err = Evaluate(Input{Compound: "DOX", NominalUM: ec50})
	if err != nil {
		t.Fatal(err)
	}
	last := out.Viability[len(out.Viability)-1]
	if math.Abs(last-0.5) > 1e-6 || out.TimeH[len(out.TimeH)-1] != 48 {
		t.Errorf("viability at 48 h at the nominal EC50 = %g, want 0.5", last)
	}
	if out.Viability[0] != 1 {
		t.Errorf("viability at t = 0 is %g", out.Viability[0])
	}
	for i := 1; i < len(out.Viability); i++ {
		if out.Viability[i] > out.Viability[i-1]+1e-12 {
			t.Fatalf("viability rises at %g h", out.TimeH[i])
		}
	}
	// Cells take up DOX: cell concentration rises to the Armitage value.
	if c := out.CellUM[len(out.CellUM)-1]; math.Abs(c-out.Equilibrium.Ccells)/out.Equilibrium.Ccells > 0.01 {
		t.Errorf("cell conc. at 48 h %g, equilibrium %g", c, out.Equilibrium.Ccells)
	}
}

func TestAmiodaroneViabilityNotAvailable(t *testing.T) {
	out, err := Evaluate(Input{Compound: "AMI"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Viability != nil || !strings.Contains(out.ViabilityNote, "not available") {
		t.Errorf("AMI viability %v / %q", out.Viability, out.ViabilityNote)
	}
	if !strings.Contains(out.PlotSVG, "concentration (µM)") || strings.Contains(out.PlotSVG, "viability (") {
		t.Error("AMI's plot: want the concentrations alone")
	}
}

func BenchmarkEvaluateDOX(b *testing.B) {
	if _, err := Evaluate(Input{Compound: "DOX"}); err != nil { // loads tables once
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Evaluate(Input{Compound: "DOX"}); err != nil {
			b.Fatal(err)
		}
	}
}
