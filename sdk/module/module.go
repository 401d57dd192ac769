// Package module is the guest side of the toxgate module ABI: a model author
// registers a manifest and typed handlers in an init function, and builds the
// package main with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o model.wasm .
//
// Example:
//
//	func init() {
//		module.Register(module.Info{Name: "units", Version: "1.0.0", ...},
//			module.Handle("/units/convert", convert).Summary("Convert units"))
//	}
//	func main() {}
//
// Handlers receive the decoded request body and return a value encoded as the
// JSON response, or an error made with InvalidInput, NotFound or Internal. A
// handler that encodes its output itself returns a RawJSON, written as is. A
// panic crashes the instance; the host discards it and answers HTTP 500.
// See sdk/ABI.md for the wire contract and sdk/README.md for a walk-through.
package module

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"toxgate/sdk/abi"
)

// Info is the part of the manifest that is not per route.
type Info struct {
	// Name is the module's unique name (lower case, digits, '.', '_', '-').
	Name string
	// Version is a semantic version, e.g. "1.2.0".
	Version string
	// Title is a short human-readable title.
	Title string
	// Description says what the module computes.
	Description string
	// Limits asks the host for resources; zero values take host defaults.
	Limits abi.Limits
	// Card is the model card.
	Card abi.ModelCard
}

// Endpoint is one route of a module, made by Handle and refined by its methods.
type Endpoint struct {
	route abi.Route
	eval  func(input []byte) (any, error)
}

// Handle makes an endpoint at path that decodes the request body into In, calls
// fn and encodes its result. The input JSON Schema is derived from In (see
// SchemaOf) unless Schema overrides it.
func Handle[In, Out any](path string, fn func(In) (Out, error)) *Endpoint {
	var zero In
	schema, err := json.Marshal(SchemaOf(reflect.TypeOf(zero)))
	if err != nil {
		panic(fmt.Sprintf("module: schema of %T: %v", zero, err))
	}
	plan := planFor(reflect.TypeFor[In]())
	return &Endpoint{
		route: abi.Route{Path: path, InputSchema: schema, Output: abi.Output{Description: "see the model card"}},
		eval: func(input []byte) (any, error) {
			var in In
			if plan == nil || !fastDecode(plan, input, &in) {
				in = zero // encoding/json decides: its value or its error
				if err := decode(input, &in); err != nil {
					return nil, err
				}
			}
			return fn(in)
		},
	}
}

// Summary sets the one-line description shown in the API documentation.
func (e *Endpoint) Summary(s string) *Endpoint { e.route.Summary = s; return e }

// Output sets the description of the response body (fields and units).
func (e *Endpoint) Output(description string) *Endpoint {
	e.route.Output.Description = description
	return e
}

// OutputSchema sets a JSON Schema of the response body.
func (e *Endpoint) OutputSchema(schema string) *Endpoint {
	e.route.Output.Schema = json.RawMessage(schema)
	return e
}

// Table declares that the output member field is an array of flat objects that
// the host renders as CSV on Accept: text/csv, with the given column order.
func (e *Endpoint) Table(field string, columns ...string) *Endpoint {
	e.route.Output.Table = &abi.Table{Field: field, Columns: columns}
	return e
}

// Batch declares that the input member input may hold a list whose items are
// evaluated independently, with one result per item, in order, in the output
// member output: the host may then cut a large list into slices (abi.Batch).
func (e *Endpoint) Batch(input, output string) *Endpoint {
	e.route.Batch = &abi.Batch{Input: input, Output: output}
	return e
}

// Example sets a sample request body shown in the documentation.
func (e *Endpoint) Example(body string) *Endpoint { e.route.Example = json.RawMessage(body); return e }

// Schema replaces the derived input JSON Schema.
func (e *Endpoint) Schema(schema string) *Endpoint {
	e.route.InputSchema = json.RawMessage(schema)
	return e
}

var (
	registered   *abi.Manifest
	endpoints    []*Endpoint
	manifestJSON []byte
)

// Register declares the module. Call it once, from an init function of package main.
func Register(info Info, eps ...*Endpoint) {
	if registered != nil {
		panic("module: Register called twice")
	}
	m := &abi.Manifest{
		ABI: abi.Version, Name: info.Name, Version: info.Version, Title: info.Title,
		Description: info.Description, Limits: info.Limits, Card: info.Card,
	}
	for _, ep := range eps {
		m.Routes = append(m.Routes, ep.route)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("module: encoding manifest: %v", err))
	}
	registered, endpoints, manifestJSON = m, eps, b
	configureRuntime(info.Limits)
}

// Manifest returns the registered manifest, validated as the host will.
func Manifest() (abi.Manifest, error) {
	if registered == nil {
		return abi.Manifest{}, errors.New("module: Register was not called")
	}
	return *registered, registered.Validate()
}

// Call evaluates input on the registered route path as the host would and
// returns the output JSON or an *abi.Error. It lets authors test natively. An
// output that is not valid JSON (a broken RawJSON) is an internal error, as
// the host would answer.
func Call(path string, input []byte) ([]byte, error) {
	for i, ep := range endpoints {
		if ep.route.Path == path {
			status, body := evaluate(i, input, nil)
			if status == abi.StatusOK {
				if !json.Valid(body) { // the host's check (a RawJSON is written as is)
					return nil, &abi.Error{Kind: abi.KindInternal, Message: "output is not valid JSON"}
				}
				return body, nil
			}
			var e abi.Error
			if err := json.Unmarshal(body, &e); err != nil {
				return nil, err
			}
			return nil, &e
		}
	}
	return nil, &abi.Error{Kind: abi.KindNotFound, Message: "no route " + path}
}

// evaluate runs route i and appends the body (the output JSON, or the error
// JSON) to dst; it returns the status byte and the extended dst. Encoding
// straight into dst saves the copy json.Marshal makes, which matters for
// outputs of megabytes: the guest's memory never shrinks.
func evaluate(i int, input, dst []byte) (byte, []byte) {
	if i < 0 || i >= len(endpoints) {
		return errorBody(Internal("route index %d out of range", i), dst)
	}
	out, err := endpoints[i].eval(input)
	if err != nil {
		return errorBody(err, dst)
	}
	if raw, ok := out.(RawJSON); ok {
		if len(raw) == 0 {
			return errorBody(Internal("encoding the output: empty RawJSON"), dst)
		}
		if len(raw) > yieldBeforeCopy {
			yield() // let a pending GC cycle free the model's garbage before the copy
		}
		return abi.StatusOK, append(dst, raw...)
	}
	if b, ok := fastEncode(dst, out); ok {
		return abi.StatusOK, b
	}
	yield() // encoding/json allocates about three times the output's size: free the model's garbage first
	w := appendWriter{dst}
	enc := json.NewEncoder(&w)
	if err := enc.Encode(out); err != nil { // writes nothing on error
		return errorBody(Internal("encoding the output: %v", err), dst)
	}
	return abi.StatusOK, bytes.TrimSuffix(w.b, []byte("\n")) // Encode ends with a newline
}

// yieldBeforeCopy is the RawJSON size from which evaluate lets the garbage
// collector run before copying the output. A yield costs about a third of a
// small call in a module; the yield at the end of every call is enough for
// small outputs.
const yieldBeforeCopy = 64 << 10

// RawJSON is an output that a handler has already encoded: a handler whose
// Out type is RawJSON (or that returns one as an any) has its bytes written as
// the response body as is, without encoding/json. Use it for large outputs
// that the model encodes faster itself (time series, SVG): in a module,
// encoding/json re-validates what a MarshalJSON method returns at ~28 ns per
// byte. The bytes must be one JSON value; the host validates every output
// natively and answers a broken one with HTTP 500 bad_module_output, and Call
// (native tests) checks them with json.Valid. An empty RawJSON is an internal
// error.
type RawJSON []byte

// MarshalJSON returns r, so that a RawJSON nested in another value, or
// encoded with encoding/json, is the same JSON.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// appendWriter appends what is written to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

func errorBody(err error, dst []byte) (byte, []byte) {
	var e *abi.Error
	if !errors.As(err, &e) || !e.Kind.Valid() {
		e = &abi.Error{Kind: abi.KindInternal, Message: err.Error()}
	}
	b, mErr := json.Marshal(e)
	if mErr != nil {
		b = []byte(`{"kind":"internal","message":"unencodable error"}`)
	}
	return abi.StatusError, append(dst, b...)
}

// decode unmarshals the body strictly and turns decoding errors into input errors.
func decode(input []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return InvalidInput(te.Field, "must be of type %s, not %s", jsonType(te.Type), te.Value)
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			f = strings.Trim(f, `"`)
			return InvalidInput(f, "unknown field")
		}
		return InvalidInput("", "invalid JSON body: %v", err)
	}
	return nil
}

// InvalidInput returns an error telling the client that field is not acceptable (HTTP 422).
func InvalidInput(field, format string, args ...any) error {
	return &abi.Error{Kind: abi.KindInvalidInput, Field: field, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns an error telling the client that the thing named by field is unknown (HTTP 404).
func NotFound(field, format string, args ...any) error {
	return &abi.Error{Kind: abi.KindNotFound, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Internal returns an error telling the client that the model failed (HTTP 500).
func Internal(format string, args ...any) error {
	return &abi.Error{Kind: abi.KindInternal, Message: fmt.Sprintf(format, args...)}
}
