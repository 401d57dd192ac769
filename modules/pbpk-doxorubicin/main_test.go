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
	if len(m.Routes) != 1 || m.Routes[0].Path != "/pbpk/doxorubicin" {
		t.Fatalf("routes %+v", m.Routes)
	}
	if _, err := module.Call("/pbpk/doxorubicin", []byte(`{"dose_mg":60,"age":50,"weight":70,"height":190}`)); err != nil {
		t.Fatal(err)
	}
	_, err = module.Call("/pbpk/doxorubicin", []byte(`{"dose_mg":-1,"age":50,"weight":70,"height":190}`))
	var e *abi.Error
	if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != "dose_mg" {
		t.Fatalf("bad input: %v", err)
	}
}

// The output buffer reused across calls: an answer is not changed by the
// next call.
func TestOutputBufferReuse(t *testing.T) {
	a, err := module.Call("/pbpk/doxorubicin", []byte(`{"dose_mg":60,"age":50,"weight":70,"height":190,"days":7}`))
	if err != nil {
		t.Fatal(err)
	}
	keep := string(a)
	b, err := module.Call("/pbpk/doxorubicin", []byte(`{"dose_mg":30,"age":70,"weight":60,"height":160,"days":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != keep || string(a) == string(b) {
		t.Fatal("an answer changed after the next call")
	}
}
