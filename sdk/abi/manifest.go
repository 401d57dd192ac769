package abi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Manifest describes a module: identity, routes, limits and model card. A module
// returns it as JSON from ExportManifest; the host refuses the module if Validate fails.
type Manifest struct {
	// ABI repeats the ABI version the manifest was written for.
	ABI int `json:"abi"`
	// Name is the module's unique name: lower case letters, digits, '.', '_' and '-'.
	Name string `json:"name"`
	// Version is the module's semantic version (MAJOR.MINOR.PATCH[-pre][+build]).
	Version string `json:"version"`
	// Title is a short human-readable title.
	Title string `json:"title,omitempty"`
	// Description says what the module computes.
	Description string `json:"description"`
	// Routes are the HTTP paths the module serves, evaluated with POST.
	Routes []Route `json:"routes"`
	// Limits are the resources the module asks for; zero values take host defaults.
	Limits Limits `json:"limits"`
	// Card is the model card.
	Card ModelCard `json:"model_card"`
}

// Route is one model endpoint of a module.
type Route struct {
	// Path is the absolute URL path, e.g. "/hERG/evaluate".
	Path string `json:"path"`
	// Summary is one line for the API documentation.
	Summary string `json:"summary,omitempty"`
	// InputSchema is the JSON Schema (draft 2020-12) of the request body; it must
	// describe an object. External $ref are not resolved.
	InputSchema json.RawMessage `json:"input_schema"`
	// Example is a sample request body, shown in the documentation.
	Example json.RawMessage `json:"example,omitempty"`
	// Output describes the response body.
	Output Output `json:"output"`
	// Batch, if set, declares that the route evaluates the items of a list
	// independently, so the host may cut a large request into slices and
	// join the answers (see Batch).
	Batch *Batch `json:"batch,omitempty"`
}

// Batch names the list members of a batch route. Input is a top-level
// member of the input object that may hold a JSON array of items; Output is a
// top-level member of the output object holding one result per item, in the
// items' order. For a request whose Input is an array, the host may call the
// route on slices of the array (the rest of the input unchanged) and answer
// the first slice's output with the Output arrays of all slices joined in
// order; an error naming the field Input[i] in a slice is reported for the
// item's index in the whole request. Other members of the output must not
// depend on how the request was cut.
type Batch struct {
	Input  string `json:"input"`
	Output string `json:"output"`
}

// Output describes a route's response body.
type Output struct {
	// Description says what the output holds, with units.
	Description string `json:"description"`
	// Schema is an optional JSON Schema of the output.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Table, if set, declares that the output holds a table, which the host renders
	// as CSV when the client sends Accept: text/csv.
	Table *Table `json:"table,omitempty"`
	// Filename, if set, is the base name (without extension) under which
	// clients should save the answer: the host adds Content-Disposition:
	// attachment; filename="<Filename>.csv" (or .json).
	Filename string `json:"filename,omitempty"`
}

// Table names the tabular part of an output: Field is a top-level member of the
// output object holding an array of flat objects (one per row). Columns fixes the
// column order; when empty, the keys of the first row are used in their order.
type Table struct {
	Field   string   `json:"field"`
	Columns []string `json:"columns,omitempty"`
}

// Limits are the resources a module asks for. The host refuses a module asking for
// more than it allows and fills zero values with its defaults.
type Limits struct {
	// MemoryPages caps linear memory, in 64 KiB pages.
	MemoryPages uint32 `json:"memory_pages,omitempty"`
	// TimeoutMS is the per-call deadline in milliseconds.
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// MaxInputBytes caps the request body size.
	MaxInputBytes int `json:"max_input_bytes,omitempty"`
	// PoolSize is the number of instances kept for concurrent calls.
	PoolSize int `json:"pool_size,omitempty"`
}

// ModelCard documents the model, after Mitchell et al., "Model Cards for Model Reporting".
type ModelCard struct {
	// Summary says what the model predicts or simulates (required).
	Summary string `json:"summary"`
	// IntendedUse says who should use it for what.
	IntendedUse string `json:"intended_use,omitempty"`
	// Data names the training or parameter data.
	Data string `json:"data,omitempty"`
	// Method names the algorithm.
	Method string `json:"method,omitempty"`
	// Validation gives validation figures.
	Validation string `json:"validation,omitempty"`
	// Limitations states the applicability domain and known limits.
	Limitations string `json:"limitations,omitempty"`
	// Units lists the units of inputs and outputs.
	Units map[string]string `json:"units,omitempty"`
	// References are citations or URLs.
	References []string `json:"references,omitempty"`
	// Authors of the model.
	Authors []string `json:"authors,omitempty"`
	// License of the model.
	License string `json:"license,omitempty"`
}

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	semverRE  = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	pathSegRE = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)
)

// Validate checks the manifest and returns an error naming the first bad field.
func (m *Manifest) Validate() error {
	if m.ABI != Version {
		return fmt.Errorf("manifest.abi: is %d, want %d", m.ABI, Version)
	}
	if !nameRE.MatchString(m.Name) {
		return fmt.Errorf("manifest.name: %q must match %s", m.Name, nameRE)
	}
	if !semverRE.MatchString(m.Version) {
		return fmt.Errorf("manifest.version: %q is not a semantic version (MAJOR.MINOR.PATCH)", m.Version)
	}
	if strings.TrimSpace(m.Description) == "" {
		return fmt.Errorf("manifest.description: is empty")
	}
	if len(m.Routes) == 0 {
		return fmt.Errorf("manifest.routes: a module needs at least one route")
	}
	seen := make(map[string]bool, len(m.Routes))
	for i := range m.Routes {
		if err := m.Routes[i].validate(); err != nil {
			return fmt.Errorf("manifest.routes[%d].%w", i, err)
		}
		if seen[m.Routes[i].Path] {
			return fmt.Errorf("manifest.routes[%d].path: %q is listed twice", i, m.Routes[i].Path)
		}
		seen[m.Routes[i].Path] = true
	}
	if m.Limits.TimeoutMS < 0 || m.Limits.MaxInputBytes < 0 || m.Limits.PoolSize < 0 {
		return fmt.Errorf("manifest.limits: values must not be negative")
	}
	if strings.TrimSpace(m.Card.Summary) == "" {
		return fmt.Errorf("manifest.model_card.summary: is empty")
	}
	return nil
}

func (r *Route) validate() error {
	if err := ValidatePath(r.Path); err != nil {
		return fmt.Errorf("path: %w", err)
	}
	var schema map[string]any
	if err := json.Unmarshal(r.InputSchema, &schema); err != nil || schema == nil {
		return fmt.Errorf("input_schema: must be a JSON Schema object")
	}
	if t, ok := schema["type"]; ok && t != "object" {
		return fmt.Errorf("input_schema.type: is %v, the request body must be an object", t)
	}
	if len(r.Example) > 0 && !json.Valid(r.Example) {
		return fmt.Errorf("example: is not valid JSON")
	}
	if strings.TrimSpace(r.Output.Description) == "" {
		return fmt.Errorf("output.description: is empty")
	}
	if len(r.Output.Schema) > 0 && !json.Valid(r.Output.Schema) {
		return fmt.Errorf("output.schema: is not valid JSON")
	}
	if b := r.Batch; b != nil && (b.Input == "" || b.Output == "") {
		return fmt.Errorf("batch: input and output must name members")
	}
	if t := r.Output.Table; t != nil && t.Field == "" {
		return fmt.Errorf("output.table.field: is empty")
	}
	return nil
}

// ValidatePath checks a route path: absolute, non-empty segments of unreserved
// URL characters, no "." or ".." segments, at most 256 bytes.
func ValidatePath(p string) error {
	if len(p) < 2 || p[0] != '/' || len(p) > 256 {
		return fmt.Errorf("%q must start with '/' and have 2 to 256 bytes", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "." || seg == ".." || !pathSegRE.MatchString(seg) {
			return fmt.Errorf("%q has an empty or invalid segment %q", p, seg)
		}
	}
	return nil
}
