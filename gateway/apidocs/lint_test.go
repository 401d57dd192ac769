package apidocs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// lintDocument checks an OpenAPI document the way validators and code
// generators read it, and fails t with every problem found:
//   - it is an OpenAPI 3.1 document that libopenapi builds into a model
//     and libopenapi-validator finds valid against the specification's
//     schema;
//   - info has a licence;
//   - every operation has an operationId, and no two the same;
//   - every example (of a media type, a parameter, or a schema's own
//     "example"/"examples") is valid against the schema it illustrates,
//     by a JSON Schema 2020-12 validator.
func lintDocument(t *testing.T, doc []byte) {
	t.Helper()
	for _, p := range documentProblems(doc) {
		t.Error(p)
	}
}

// documentProblems is what lintDocument reports.
func documentProblems(doc []byte) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	var root map[string]any
	if err := json.Unmarshal(doc, &root); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	if v, _ := root["openapi"].(string); v != OpenAPIVersion {
		add("openapi = %q, want %q", v, OpenAPIVersion)
	}
	if info, _ := root["info"].(map[string]any); info == nil || info["license"] == nil {
		add("info has no license")
	}

	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return append(problems, "libopenapi: "+err.Error())
	}
	if _, err := d.BuildV3Model(); err != nil {
		add("libopenapi: building the model: %v", err)
	}
	v, errs := validator.NewValidator(d)
	for _, err := range errs {
		add("libopenapi-validator: %v", err)
	}
	if v != nil {
		if ok, verrs := v.ValidateDocument(); !ok {
			for _, e := range verrs {
				add("libopenapi-validator: %s: %s", e.Message, e.Reason)
				for _, se := range e.SchemaValidationErrors {
					add("  at %s: %s", se.FieldPath, se.Reason)
				}
			}
		}
	}

	problems = append(problems, operationIDProblems(root)...)
	problems = append(problems, exampleProblems(doc, root)...)
	return problems
}

// operationIDProblems reports operations without an operationId and
// operationIds used twice.
func operationIDProblems(root map[string]any) []string {
	var problems []string
	paths, _ := root["paths"].(map[string]any)
	seen := map[string]string{}
	for _, p := range sortedKeys(paths) {
		item, _ := paths[p].(map[string]any)
		for _, m := range methods {
			op, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			id, _ := op["operationId"].(string)
			where := strings.ToUpper(m) + " " + p
			switch {
			case id == "":
				problems = append(problems, where+": no operationId")
			case seen[id] != "":
				problems = append(problems, fmt.Sprintf("%s: operationId %q already used by %s", where, id, seen[id]))
			default:
				seen[id] = where
			}
		}
	}
	return problems
}

// example is one example of the document and where its schema is.
type example struct {
	at     string // JSON pointer of the example
	schema string // JSON pointer of its schema
	value  any
}

// exampleProblems validates every example of the document against its
// schema.
func exampleProblems(doc []byte, root map[string]any) []string {
	var problems []string
	const url = "mem://openapi.json"
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return []string{"jsonschema: " + err.Error()}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, parsed); err != nil {
		return []string{"jsonschema: " + err.Error()}
	}
	examples := collectExamples(root)
	if len(examples) == 0 {
		return []string{"the document has no example"}
	}
	for _, ex := range examples {
		sch, err := c.Compile(url + "#" + ex.schema)
		if err != nil {
			problems = append(problems, fmt.Sprintf("schema %s of the example at %s: %v", ex.schema, ex.at, err))
			continue
		}
		// Validate what a client would send: the example as JSON.
		b, _ := json.Marshal(ex.value)
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := sch.Validate(inst); err != nil {
			problems = append(problems, fmt.Sprintf("example at %s fails its schema %s: %v", ex.at, ex.schema, err))
		}
	}
	return problems
}

// collectExamples finds the examples of media types and parameters
// (beside their "schema") and of schemas (their own "example" and
// "examples"), anywhere in the document.
func collectExamples(root map[string]any) []example {
	var out []example
	var walk func(v any, ptr string, inSchema bool)
	walk = func(v any, ptr string, inSchema bool) {
		switch x := v.(type) {
		case map[string]any:
			if inSchema {
				if ex, ok := x["example"]; ok {
					out = append(out, example{ptr + "/example", ptr, ex})
				}
				if exs, ok := x["examples"].([]any); ok {
					for i, ex := range exs {
						out = append(out, example{fmt.Sprintf("%s/examples/%d", ptr, i), ptr, ex})
					}
				}
			} else if _, ok := x["schema"].(map[string]any); ok {
				// A media type or a parameter.
				if ex, ok := x["example"]; ok {
					out = append(out, example{ptr + "/example", ptr + "/schema", ex})
				}
				if exs, ok := x["examples"].(map[string]any); ok {
					for _, k := range sortedKeys(exs) {
						if e, ok := exs[k].(map[string]any); ok && e["value"] != nil {
							out = append(out, example{ptr + "/examples/" + escape(k) + "/value", ptr + "/schema", e["value"]})
						}
					}
				}
			}
			for _, k := range sortedKeys(x) {
				child := ptr + "/" + escape(k)
				switch {
				case inSchema && (k == "example" || k == "examples" || k == "const" || k == "enum" || k == "default"):
					// values, not schemas
				case inSchema && (k == "properties" || k == "patternProperties" || k == "$defs" || k == "dependentSchemas"):
					// a map of names to schemas
					if m, ok := x[k].(map[string]any); ok {
						for _, name := range sortedKeys(m) {
							walk(m[name], child+"/"+escape(name), true)
						}
					}
				case inSchema:
					walk(x[k], child, true)
				case k == "schema" || (k == "schemas" && ptr == "/components"):
					if k == "schemas" {
						m, _ := x[k].(map[string]any)
						for _, name := range sortedKeys(m) {
							walk(m[name], child+"/"+escape(name), true)
						}
					} else {
						walk(x[k], child, true)
					}
				case k == "example" || k == "examples":
					// handled above
				default:
					walk(x[k], child, false)
				}
			}
		case []any:
			for i := range x {
				walk(x[i], fmt.Sprintf("%s/%d", ptr, i), inSchema)
			}
		}
	}
	walk(root, "", false)
	return out
}

// escape escapes a JSON pointer token.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
