package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// maxLengthOf returns the maxLength a property schema declares for a string,
// directly or in one of its oneOf alternatives.
func maxLengthOf(prop map[string]any) (int, bool) {
	if n, ok := prop["maxLength"].(float64); ok {
		return int(n), true
	}
	alts, _ := prop["oneOf"].([]any)
	for _, a := range alts {
		if m, ok := a.(map[string]any); ok {
			if n, ok := m["maxLength"].(float64); ok && m["type"] == "string" {
				return int(n), true
			}
		}
	}
	return 0, false
}

// valuesAt returns inputs of exactly n characters for a property: for
// SMILES, the shapes that take a structure model the most memory per
// character (a carbon chain, fused-free benzene rings, ring closures);
// otherwise a name that exists nowhere.
func valuesAt(prop string, n int) map[string]string {
	if prop != "smiles" {
		return map[string]string{"letters": strings.Repeat("A", n)}
	}
	fill := func(unit string) string {
		s := strings.Repeat(unit, n/len(unit))
		return s + strings.Repeat("C", n-len(s))
	}
	return map[string]string{"chain": fill("C"), "benzene rings": fill("c1ccccc1"), "cyclopropanes": fill("C1CC1")}
}

// Every model holds every input up to the string lengths its schema
// declares (no 5xx, no out_of_memory), and one character more answers 422
// naming the field and the limit.
func TestEveryModelHoldsItsInputLimit(t *testing.T) {
	g := harness.Start(t, harness.WithAllModules(), harness.WithEnv("TOXGATE_MODULES_REQUIRE_TOKEN=false"))
	_, body := get(t, g, "/models", nil)
	var index struct {
		Models []struct {
			Name   string `json:"name"`
			Routes []struct {
				Path        string          `json:"path"`
				InputSchema json.RawMessage `json:"input_schema"`
				Example     json.RawMessage `json:"example"`
			} `json:"routes"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &index); err != nil || len(index.Models) < 10 {
		t.Fatalf("/models: %v, %d models", err, len(index.Models))
	}
	checked := 0
	for _, m := range index.Models {
		for _, r := range m.Routes {
			var schema struct {
				Properties map[string]map[string]any `json:"properties"`
			}
			var example map[string]any
			if json.Unmarshal(r.InputSchema, &schema) != nil || json.Unmarshal(r.Example, &example) != nil {
				continue
			}
			for prop, ps := range schema.Properties {
				limit, ok := maxLengthOf(ps)
				if !ok {
					continue
				}
				for _, over := range []bool{false, true} {
					n := limit
					if over {
						n++
					}
					for shape, v := range valuesAt(prop, n) {
						in := map[string]any{}
						for k, x := range example {
							in[k] = x
						}
						in[prop] = v
						b, _ := json.Marshal(in)
						code, _, out := postJSON(t, g, r.Path, string(b), http.Header{})
						checked++
						var eb struct {
							Error struct{ Code, Message, Field string } `json:"error"`
						}
						json.Unmarshal(out, &eb)
						switch {
						case !over && code >= 500:
							t.Errorf("%s %s: %s of %d characters (the limit): %d %.300s", m.Name, r.Path, shape, n, code, out)
						case over && (code != 422 || eb.Error.Field != prop || !strings.Contains(eb.Error.Message, strconv.Itoa(limit))):
							t.Errorf("%s %s: %s of %d characters (over the limit %d): %d %.300s; want 422 naming %s and the limit", m.Name, r.Path, shape, n, limit, code, out, prop)
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no route declares a string limit")
	}
	t.Logf("%d calls at and over the declared limits", checked)
}
