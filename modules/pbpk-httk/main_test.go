package main

import (
	"errors"
	"testing"

	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func TestManifestAndCall(t *testing.T) {
	m, err := module.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Routes) != 1 || m.Routes[0].Path != "/pbpk/httk" {
		t.Fatalf("routes %+v", m.Routes)
	}
	if _, err := module.Call("/pbpk/httk", []byte(`{"chem_name":"Bisphenol A","species":"human","daily_dose":1,"doses_per_day":1,"days":15}`)); err != nil {
		t.Fatal(err)
	}
	_, err = module.Call("/pbpk/httk", []byte(`{"chem_name":"Bisphenol A","species":"cat","daily_dose":1,"doses_per_day":1,"days":15}`))
	var e *abi.Error
	if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != "species" {
		t.Fatalf("bad input: %v", err)
	}
}
