package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func TestManifest(t *testing.T) {
	m, err := module.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Routes) != 1 || m.Routes[0].Path != "/TK/2D/evaluate" {
		t.Fatalf("routes %+v", m.Routes)
	}
}

func TestOriginalExample(t *testing.T) {
	b, err := module.Call("/TK/2D/evaluate", []byte(`{"compound":"DOX"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	svg, _ := out["plot_svg"].(string)
	for _, want := range []string{"<svg", "concentration (µM)", "viability (% of vehicle)", "medium, free"} {
		if !strings.Contains(svg, want) {
			t.Errorf("plot_svg lacks %q", want)
		}
	}
	for _, old := range []string{"cells_diagram", "medium_diagram", "viability_diagram"} {
		if _, ok := out[old]; ok {
			t.Errorf("the old key %s is still answered", old)
		}
	}
}

func TestBadInputNamesField(t *testing.T) {
	for body, field := range map[string]string{
		`{"compound":"XYZ123"}`:                  "compound",
		`{"compound":""}`:                        "compound",
		`{"compound":"DOX","plate_format":100}`:  "plate_format",
		`{"compound":"DOX","serum_fraction":2}`:  "serum_fraction",
		`{"compound":"DOX","nominal_uM":-1}`:     "nominal_uM",
		`{"compound":"DOX","medium_uL":1000}`:    "medium_uL",
		`{"compound":"DOX","duration_h":"long"}`: "duration_h",
		`{"compound":"DOX","unknown":1}`:         "unknown",
	} {
		_, err := module.Call("/TK/2D/evaluate", []byte(body))
		var e *abi.Error
		if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != field {
			t.Errorf("%s: got %v, want invalid_input on %s", body, err, field)
		}
	}
}
