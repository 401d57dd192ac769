package main

import (
	"encoding/json"
	"errors"
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
	for _, k := range []string{"diag_5p", "diag_10p"} {
		if s, _ := out[k].(string); len(s) < 1000 {
			t.Errorf("%s missing", k)
		}
	}
	_, err = module.Call("/TK/3D/evaluate", []byte(`{"compound":"DOX","nominal_uM":-2}`))
	var e *abi.Error
	if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != "nominal_uM" {
		t.Errorf("bad input: %v", err)
	}
}
