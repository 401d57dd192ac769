package module

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"toxgate/sdk/abi"
)

type doseIn struct {
	DoseMg float64  `json:"dose_mg" desc:"dose per m²" gt:"0" max:"500"`
	Route  string   `json:"route,omitempty" enum:"iv|oral"`
	Tags   []string `json:"tags,omitempty" maxlen:"3"`
}

type doseOut struct {
	Total float64 `json:"total"`
}

func TestSchemaOfStruct(t *testing.T) {
	got := SchemaOf(reflect.TypeOf(doseIn{}))
	b, _ := json.Marshal(got)
	want := `{"additionalProperties":false,"properties":{"dose_mg":{"description":"dose per m²","exclusiveMinimum":0,"maximum":500,"type":"number"},"route":{"enum":["iv","oral"],"type":"string"},"tags":{"items":{"type":"string"},"maxItems":3,"type":"array"}},"required":["dose_mg"],"type":"object"}`
	if string(b) != want {
		t.Fatalf("schema\n got %s\nwant %s", b, want)
	}
}

// One test registers (Register may be called once per process).
func TestRegisterAndCall(t *testing.T) {
	Register(Info{Name: "dose", Version: "0.1.0", Description: "doubles a dose", Card: abi.ModelCard{Summary: "x2"}},
		Handle("/dose/double", func(in doseIn) (doseOut, error) {
			if in.Route == "oral" {
				return doseOut{}, InvalidInput("route", "oral is not modelled")
			}
			return doseOut{Total: 2 * in.DoseMg}, nil
		}).Output("total in mg/m²"),
		Handle("/dose/raw", func(in doseIn) (RawJSON, error) {
			switch in.Route {
			case "oral":
				return RawJSON(`{"total":`), nil // broken on purpose
			case "iv":
				return nil, nil
			}
			return RawJSON(`{"total": 60, "html":"<b>"}`), nil
		}).Output("the bytes as written"))
	m, err := Manifest()
	if err != nil {
		t.Fatalf("manifest invalid: %v", err)
	}
	if m.Routes[0].Path != "/dose/double" || m.ABI != abi.Version {
		t.Fatalf("manifest = %+v", m)
	}

	out, err := Call("/dose/double", []byte(`{"dose_mg":30}`))
	if err != nil || string(out) != `{"total":60}` {
		t.Fatalf("Call = %s, %v", out, err)
	}
	// A RawJSON is written as is (no re-encoding, no HTML escaping); a broken
	// or empty one is an internal error.
	out, err = Call("/dose/raw", []byte(`{"dose_mg":30}`))
	if err != nil || string(out) != `{"total": 60, "html":"<b>"}` {
		t.Fatalf("Call raw = %s, %v", out, err)
	}
	for _, route := range []string{"oral", "iv"} {
		_, err = Call("/dose/raw", []byte(`{"dose_mg":30,"route":"`+route+`"}`))
		var e *abi.Error
		if !errors.As(err, &e) || e.Kind != abi.KindInternal {
			t.Errorf("Call raw %s: error = %v, want internal", route, err)
		}
	}
	if b, err := json.Marshal(struct{ R RawJSON }{RawJSON(`[1, 2]`)}); err != nil || string(b) != `{"R":[1,2]}` {
		t.Errorf("nested RawJSON = %s, %v", b, err)
	}
	for body, field := range map[string]string{
		`{"dose_mg":30,"route":"oral"}`: "route",
		`{"dose_mg":"thirty"}`:          "dose_mg",
		`{"dose_mg":1,"colour":"red"}`:  "colour",
	} {
		_, err := Call("/dose/double", []byte(body))
		var e *abi.Error
		if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != field {
			t.Errorf("Call(%s) error = %v, want invalid_input on %q", body, err, field)
		}
	}
}
