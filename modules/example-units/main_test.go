package main

import (
	"errors"
	"testing"

	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func TestManifestIsValid(t *testing.T) {
	if _, err := module.Manifest(); err != nil {
		t.Fatal(err)
	}
}

func TestCallNatively(t *testing.T) {
	out, err := module.Call("/example/units/convert", []byte(`{"value":543.52,"from":"mg/L","to":"mM","molar_mass":543.52}`))
	if err != nil || string(out) != `{"value":1,"unit":"mM","factor":0.0018398586988519281,"input":"543.52 mg/L"}` {
		t.Fatalf("convert = %s, %v", out, err)
	}
	_, err = module.Call("/example/units/convert", []byte(`{"value":1,"from":"mg/L","to":"mM"}`))
	var e *abi.Error
	if !errors.As(err, &e) || e.Field != "molar_mass" {
		t.Fatalf("missing molar mass: %v", err)
	}
}
