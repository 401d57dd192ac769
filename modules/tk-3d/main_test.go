package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func TestOriginalExampleAndBadInput(t *testing.T) {
	if _, err := module.Manifest(); err != nil {
		t.Fatal(err)
	}
	b, err := module.Call("/TK/3D/evaluate", []byte(`{"compound":"DOX"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if svg, _ := out["plot_svg"].(string); !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "concentration (µM)") {
		t.Error("plot_svg missing")
	}
	for _, old := range []string{"diag_5p", "diag_10p", "diag_meaning"} {
		if _, ok := out[old]; ok {
			t.Errorf("the old key %s is still answered", old)
		}
	}
	_, err = module.Call("/TK/3D/evaluate", []byte(`{"compound":"DOX","nominal_uM":-2}`))
	var e *abi.Error
	if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != "nominal_uM" {
		t.Errorf("bad input: %v", err)
	}
}
