package e2e

import (
	"encoding/json"
	"math"
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

// modelRoute is one route of /models with its input schema and example.
type modelRoute struct {
	Model   string
	Path    string
	Schema  struct{ Properties map[string]map[string]any }
	Example map[string]any
}

// modelRoutes lists every route of every model the gateway serves.
func modelRoutes(t *testing.T, g *harness.Gateway) []modelRoute {
	t.Helper()
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
	var out []modelRoute
	for _, m := range index.Models {
		for _, r := range m.Routes {
			mr := modelRoute{Model: m.Name, Path: r.Path}
			if json.Unmarshal(r.InputSchema, &mr.Schema) != nil || json.Unmarshal(r.Example, &mr.Example) != nil {
				continue
			}
			out = append(out, mr)
		}
	}
	return out
}

// with is the route's example with one member replaced.
func (r modelRoute) with(prop string, v any) string {
	in := map[string]any{}
	for k, x := range r.Example {
		in[k] = x
	}
	in[prop] = v
	b, _ := json.Marshal(in)
	return string(b)
}

// inputError is the error member of a model's 4xx answer.
func inputError(body []byte) (field, message string) {
	var eb struct {
		Error struct{ Message, Field string } `json:"error"`
	}
	_ = json.Unmarshal(body, &eb)
	return eb.Error.Field, eb.Error.Message
}

// Every model holds its inputs at the limits its schema declares and
// refuses them just beyond with a 422 that names the field and the limit:
// string lengths (SMILES of 2,000 characters and more), list sizes,
// numeric bounds; a number without a declared maximum (1e300) never
// answers 5xx.
func TestEveryModelHoldsItsInputLimits(t *testing.T) {
	g := harness.Start(t, harness.WithAllModules(), harness.WithEnv("TOXGATE_MODULES_REQUIRE_TOKEN=false"))
	routes := modelRoutes(t, g)
	t.Run("strings", func(t *testing.T) { stringLimits(t, g, routes) })
	t.Run("lists", func(t *testing.T) { listLimits(t, g, routes) })
	t.Run("numbers", func(t *testing.T) { numericLimits(t, g, routes) })
}

// stringLimits: every string up to its maxLength is held (no 5xx, no
// out_of_memory), and one character more answers 422.
func stringLimits(t *testing.T, g *harness.Gateway, routes []modelRoute) {
	checked := 0
	for _, r := range routes {
		for prop, ps := range r.Schema.Properties {
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
					code, _, out := postJSON(t, g, r.Path, r.with(prop, v), http.Header{})
					checked++
					field, msg := inputError(out)
					switch {
					case !over && code >= 500:
						t.Errorf("%s %s: %s of %d characters (the limit): %d %.300s", r.Model, r.Path, shape, n, code, out)
					case over && (code != 422 || field != prop || !strings.Contains(msg, strconv.Itoa(limit))):
						t.Errorf("%s %s: %s of %d characters (over the limit %d): %d %.300s; want 422 naming %s and the limit", r.Model, r.Path, shape, n, limit, code, out, prop)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no route declares a string limit")
	}
	t.Logf("%d calls at and over the declared string limits", checked)
}

// schemaAlternatives is a property's schema and its oneOf/anyOf branches.
func schemaAlternatives(ps map[string]any) []map[string]any {
	out := []map[string]any{ps}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, _ := ps[key].([]any)
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// listLimits: a list of valid SMILES at maxItems is scored, one more is
// refused with a message about the list.
func listLimits(t *testing.T, g *harness.Gateway, routes []modelRoute) {
	checked := 0
	for _, r := range routes {
		for prop, ps := range r.Schema.Properties {
			for _, alt := range schemaAlternatives(ps) {
				max, ok := alt["maxItems"].(float64)
				if alt["type"] != "array" || !ok || prop != "smiles" {
					continue
				}
				n := int(max)
				list := make([]string, n+1)
				for i := range list {
					list[i] = "CCO"
				}
				code, _, out := postJSON(t, g, r.Path, r.with(prop, list[:n]), http.Header{})
				if code != 200 {
					t.Errorf("%s %s: %d SMILES (the limit): %d %.300s", r.Model, r.Path, n, code, out)
				}
				code, _, out = postJSON(t, g, r.Path, r.with(prop, list), http.Header{})
				field, msg := inputError(out)
				if code != 422 || field != prop || !strings.Contains(msg, "list") || !strings.Contains(msg, strconv.Itoa(n)) {
					t.Errorf("%s %s: %d SMILES (over the limit): %d %.300s; want 422 about the list's size", r.Model, r.Path, n+1, code, out)
				}
				checked += 2
			}
		}
	}
	if checked == 0 {
		t.Fatal("no route declares a list limit")
	}
	t.Logf("%d calls at and over the declared list sizes", checked)
}

// numericLimits: a number at its declared bound is accepted (or refused by
// a rule that names another field), beyond it is refused with 422 naming
// the field and the bound; without a maximum, a huge number is refused or
// answered, never a 5xx.
func numericLimits(t *testing.T, g *harness.Gateway, routes []modelRoute) {
	checked := 0
	for _, r := range routes {
		for prop, ps := range r.Schema.Properties {
			for _, alt := range schemaAlternatives(ps) {
				typ, _ := alt["type"].(string)
				if typ != "number" && typ != "integer" {
					continue
				}
				step := 1.0
				if typ == "number" {
					step = 1e-6
				}
				type probe struct {
					what  string
					v     float64
					valid bool
					bound float64
				}
				var probes []probe
				if v, ok := alt["minimum"].(float64); ok {
					probes = append(probes, probe{"the minimum", v, true, v}, probe{"below the minimum", v - step, false, v})
				}
				if v, ok := alt["exclusiveMinimum"].(float64); ok {
					probes = append(probes, probe{"just above the exclusive minimum", v + step, true, v}, probe{"at the exclusive minimum", v, false, v})
				}
				if v, ok := alt["maximum"].(float64); ok {
					probes = append(probes, probe{"the maximum", v, true, v}, probe{"above the maximum", v + step, false, v})
				} else {
					probes = append(probes, probe{"1e300 (no declared maximum)", 1e300, false, math.NaN()})
				}
				for _, p := range probes {
					code, _, out := postJSON(t, g, r.Path, r.with(prop, p.v), http.Header{})
					checked++
					field, msg := inputError(out)
					bound := strconv.FormatFloat(p.bound, 'g', -1, 64)
					switch {
					case code >= 500:
						t.Errorf("%s %s: %s at %s: %d %.300s", r.Model, r.Path, prop, p.what, code, out)
					case p.valid && code == 422 && field != "" && field != prop:
						// A rule between fields (an infusion longer than a
						// tiny simulation) names the other field: fine.
						t.Logf("%s %s: %s at %s: refused by a rule on %s: %s", r.Model, r.Path, prop, p.what, field, msg)
					case p.valid && code != 200:
						t.Errorf("%s %s: %s at %s (%g) is valid by the schema: %d %.300s", r.Model, r.Path, prop, p.what, p.v, code, out)
					case !p.valid && !math.IsNaN(p.bound) && (code != 422 || field != prop || !strings.Contains(msg, bound)):
						t.Errorf("%s %s: %s %s (%g): %d %.300s; want 422 naming %s and %s", r.Model, r.Path, prop, p.what, p.v, code, out, prop, bound)
					case !p.valid && code == 422 && field != prop:
						t.Errorf("%s %s: %s %s: 422 names %q, want %q: %.300s", r.Model, r.Path, prop, p.what, field, prop, out)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no route declares a numeric bound")
	}
	t.Logf("%d calls at and beyond the declared numeric bounds", checked)
}
