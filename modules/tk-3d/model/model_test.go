package model

import (
	"math"
	"strings"
	"testing"
)

func TestDOXLayersAndEC(t *testing.T) {
	out, err := Evaluate(Input{Compound: "DOX"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.PlotSVG, "EC<tspan") || strings.Count(out.PlotSVG, `class="plot-area"`) != 2 {
		t.Fatal("want a plot with the EC5 and EC10 panels")
	}
	if !(*out.EC5NominalUM < *out.EC10NominalUM) {
		t.Errorf("EC5 %g ≥ EC10 %g", *out.EC5NominalUM, *out.EC10NominalUM)
	}
	k := len(out.TimeH) / 8
	if !(out.LayerUM[0][k] > out.LayerUM[Layers-1][k]) {
		t.Errorf("outer layer %g not above core %g early on", out.LayerUM[0][k], out.LayerUM[Layers-1][k])
	}
	for i := 1; i < len(out.TissueViab); i++ {
		if out.TissueViab[i] > out.TissueViab[i-1]+1e-12 {
			t.Fatalf("tissue viability rises at %g h", out.TimeH[i])
		}
	}
}

func TestLongExposureEquilibrates(t *testing.T) {
	out, err := Evaluate(Input{Compound: "ROT", DurationH: 720})
	if err != nil {
		t.Fatal(err)
	}
	n := len(out.TimeH) - 1
	want := out.Kcw * out.MediumFreeUM[n]
	for i := range out.LayerUM {
		if rel := math.Abs(out.LayerUM[i][n]-want) / want; rel > 0.02 {
			t.Errorf("layer %d at 720 h %g, K_cw·C_w %g", i, out.LayerUM[i][n], want)
		}
	}
	if out.EC5NominalUM != nil || out.Note == "" || strings.Count(out.PlotSVG, `class="plot-area"`) != 1 {
		t.Error("ROT must have no EC5, a note and one panel at the nominal concentration")
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Evaluate(Input{Compound: "nonexistent-xyz"}); err == nil {
		t.Error("unknown compound accepted")
	} else if ie, ok := IsInputError(err); !ok || ie.Field != "compound" {
		t.Errorf("err %v", err)
	}
	if _, err := Evaluate(Input{Compound: "DOX", DurationH: 1000}); err == nil {
		t.Error("1000 h accepted")
	}
}

func BenchmarkEvaluateDOX(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Evaluate(Input{Compound: "DOX"}); err != nil {
			b.Fatal(err)
		}
	}
}
