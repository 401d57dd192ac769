package apidocs

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"toxgate/sdk/abi"
)

// allActions documents every action ckanfields.go describes, reads with GET.
func allActions() []Action {
	var out []Action
	for name := range actionFields {
		out = append(out, Action{Name: name, GET: true, Description: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Manifests as modules may write them: schemas with JSON Schema 2020-12
// forms (exclusiveMinimum as a number, const, contentMediaType, $defs with
// internal references, a true schema), and names and paths that make the
// same identifier.
var oddManifests = []abi.Manifest{
	{Name: "a-b", Version: "1.0.0", Routes: []abi.Route{{
		Path:        "/c/d",
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","type":"object","required":["dose"],"properties":{"dose":{"type":"number","exclusiveMinimum":0,"x-unit":"mg/kg","examples":[60]},"kind":{"const":"oral"},"x":{"$ref":"#/$defs/point"}},"$defs":{"point":{"type":"array","items":{"type":"number"},"minItems":2,"maxItems":2,"examples":[[1,2]]}}}`),
		Example:     json.RawMessage(`{"dose":60,"kind":"oral","x":[0.5,1]}`),
		Output: abi.Output{Description: "a plot", Schema: json.RawMessage(
			`{"type":"object","properties":{"svg":{"type":"string","contentMediaType":"image/svg+xml"}}}`)},
	}}},
	{Name: "a", Version: "1.0.0", Routes: []abi.Route{
		{Path: "/b-c/d", InputSchema: json.RawMessage(`true`), Output: abi.Output{Description: "anything"}},
		{Path: "/2x", InputSchema: json.RawMessage(`{"type":"object"}`), Output: abi.Output{Description: "", Schema: json.RawMessage(`not json`)}},
	}},
}

// The document built from every documented catalog action and from
// manifests with 3.1 forms and colliding names lints clean: valid 3.1,
// unique operationIds, every example valid (catalog request examples
// name every required field).
func TestDocumentWithEveryActionAndOddModulesLintsClean(t *testing.T) {
	b, err := json.Marshal(build(Info{Title: "t", Version: "1"}, allActions(), oddManifests))
	if err != nil {
		t.Fatal(err)
	}
	lintDocument(t, b)
	s := string(b)
	// The internal reference points into the module's component.
	if !strings.Contains(s, `"$ref":"#/components/schemas/a_b_c_d_input/$defs/point"`) {
		t.Errorf("internal $ref not rewritten: %.2000s", s)
	}
	for _, want := range []string{`"operationId":"a_b_c_d"`, `"operationId":"a_b_c_d_2"`, `"operationId":"a_2x"`, `"exclusiveMinimum":0`,
		`"license":{"identifier":"LicenseRef-toxgate-operator-terms"`} {
		if !strings.Contains(s, want) {
			t.Errorf("document lacks %s", want)
		}
	}
	if strings.Contains(s, `"$schema"`) || strings.Contains(s, `"urn:x"`) {
		t.Error("a module schema's $schema or $id is left in the document")
	}
}

// The linter finds what validators and generators refuse: a 3.0 version
// string, an operation without operationId, two alike, an example that
// fails its schema.
func TestLintFindsTheProblemsOfA30StyleDocument(t *testing.T) {
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "t", "version": "1"},
		"paths": map[string]any{
			"/a": map[string]any{"post": map[string]any{
				"operationId": "same",
				"requestBody": map[string]any{"content": map[string]any{"application/json": map[string]any{
					"schema":  map[string]any{"type": "object", "required": []string{"id"}},
					"example": map[string]any{}}}},
				"responses": map[string]any{"200": map[string]any{"description": "ok"}}}},
			"/b": map[string]any{"get": map[string]any{"operationId": "same", "responses": map[string]any{"200": map[string]any{"description": "ok"}}}},
			"/c": map[string]any{"get": map[string]any{"responses": map[string]any{"200": map[string]any{"description": "ok"}}}},
		},
	}
	b, _ := json.Marshal(doc)
	got := strings.Join(documentProblems(b), "\n")
	for _, want := range []string{`openapi = "3.0.3"`, "no license", "GET /c: no operationId", `operationId "same" already used`,
		"example at /paths/~1a/post/requestBody/content/application~1json/example fails its schema"} {
		if !strings.Contains(got, want) {
			t.Errorf("lint did not report %q; it reported:\n%s", want, got)
		}
	}
}

func TestIdentifier(t *testing.T) {
	for in, want := range map[string]string{
		"herg/hERG/evaluate": "herg_hERG_evaluate",
		"a-b//c.d":           "a_b_c_d",
		"/2x":                "op_2x",
		"":                   "op_",
		"é/ü":                "op_",
	} {
		if got := identifier(in); got != want {
			t.Errorf("identifier(%q) = %q, want %q", in, got, want)
		}
	}
}
