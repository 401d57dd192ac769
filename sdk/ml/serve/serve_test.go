package serve

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"toxgate/sdk/abi"
)

func TestListAcceptsStringOrList(t *testing.T) {
	l, f, err := Input{SMILES: json.RawMessage(`"CCO"`)}.List()
	if err != nil || len(l) != 1 || l[0] != "CCO" || f[0] != "smiles" {
		t.Fatalf("string: %v %v %v", l, f, err)
	}
	l, f, err = Input{SMILES: json.RawMessage(`["CCO","c1ccccc1"]`)}.List()
	if err != nil || len(l) != 2 || f[1] != "smiles[1]" {
		t.Fatalf("list: %v %v %v", l, f, err)
	}
	for _, bad := range []string{``, `null`, `{}`, `[]`, `[1]`, `true`} {
		_, _, err := Input{SMILES: json.RawMessage(bad)}.List()
		var e *abi.Error
		if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || !strings.HasPrefix(e.Field, "smiles") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestRowKeepsInsertionOrder(t *testing.T) {
	var r Row
	r.Set("smiles", "CCO")
	r.Set("b", 1)
	r.Set("a", []float64{0.5})
	r.Set("b", 2)
	got, err := json.Marshal(r)
	if err != nil || string(got) != `{"smiles":"CCO","b":2,"a":[0.5]}` {
		t.Fatalf("%s %v", got, err)
	}
	if v, ok := r.Get("b"); !ok || v != 2 {
		t.Fatalf("Get = %v %v", v, ok)
	}
}

func TestInputSchemaIsJSON(t *testing.T) {
	var v map[string]any
	if err := json.Unmarshal([]byte(InputSchema), &v); err != nil || v["type"] != "object" {
		t.Fatalf("schema: %v", err)
	}
}
