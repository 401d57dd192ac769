package modulehost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/modulehost/modelapi"
	"toxgate/sdk/abi"
)

// The Open Inference Protocol (KServe v2) inference REST API over the
// model routes: a request's input tensors become the members of the
// route's JSON input, the answer's members become output tensors.

// OIPTensor is an input or output tensor of an inference request or response.
type OIPTensor struct {
	Name       string         `json:"name"`
	Shape      []int64        `json:"shape"`
	Datatype   string         `json:"datatype"`
	Parameters map[string]any `json:"parameters,omitempty"`
	Data       any            `json:"data"`
	// list is set on a tensor made from a JSON list (its dimensions vary
	// with the input; the metadata gives them as -1).
	list bool
}

// OIPInferRequest is the body of POST /v2/models/{name}[/versions/{v}]/infer.
type OIPInferRequest struct {
	ID         string         `json:"id,omitempty"`
	Parameters map[string]any `json:"parameters,omitempty"`
	Inputs     []OIPTensor    `json:"inputs"`
	Outputs    []struct {
		Name string `json:"name"`
	} `json:"outputs,omitempty"`
}

// OIPInferResponse is the answer of an inference request.
type OIPInferResponse struct {
	ModelName    string         `json:"model_name"`
	ModelVersion string         `json:"model_version"`
	ID           string         `json:"id,omitempty"`
	Parameters   map[string]any `json:"parameters"`
	Outputs      []OIPTensor    `json:"outputs"`
}

func oipError(ctx *fasthttp.RequestCtx, status int, msg string) {
	httpcore.WriteJSON(ctx, status, map[string]string{"error": msg})
}

// HandleServerMetadata serves GET /v2.
func (h *Host) HandleServerMetadata(ctx *fasthttp.RequestCtx) {
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"name": "toxgate", "version": h.cfg.ServerVersion, "extensions": []string{}})
}

// ServeInfer serves POST /v2/models/{name}[/versions/{version}]/infer for
// caller, with the same fair share as ServeModelAs.
func (h *Host) ServeInfer(ctx *fasthttp.RequestCtx, caller Caller) {
	name, _ := ctx.UserValue("name").(string)
	e, ok := h.reg.Load().modules[name]
	if !ok {
		if pending, ready, retry := h.loading(); pending > 0 {
			ctx.Response.Header.Set("Retry-After", itoa(int(retry/time.Second)))
			oipError(ctx, fasthttp.StatusServiceUnavailable, fmt.Sprintf("the models are still loading (%d of %d ready) and %s may be one of them",
				ready, ready+pending, strconvQuote(name)))
			return
		}
		oipError(ctx, fasthttp.StatusNotFound, "no model named "+strconvQuote(name))
		return
	}
	man := e.mod.Manifest()
	if v, _ := ctx.UserValue("version").(string); v != "" && v != man.Version {
		oipError(ctx, fasthttp.StatusNotFound, "model "+name+" version "+strconvQuote(v)+" is not served (serving "+man.Version+")")
		return
	}
	var req OIPInferRequest
	dec := json.NewDecoder(strings.NewReader(string(ctx.PostBody())))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		oipError(ctx, fasthttp.StatusBadRequest, "the body is not an inference request: "+err.Error())
		return
	}
	idx := 0
	if p, _ := req.Parameters["route"].(string); p != "" {
		idx = -1
		for i, r := range man.Routes {
			if r.Path == p {
				idx = i
			}
		}
		if idx < 0 {
			oipError(ctx, fasthttp.StatusBadRequest, "model "+name+" has no route "+strconvQuote(p))
			return
		}
	}
	rt := man.Routes[idx]
	body, err := inferInput(rt.InputSchema, rt.Batch, req.Inputs)
	if err != nil {
		oipError(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	out, ref, err := h.invoke(context.WithoutCancel(ctx), rt.Path, caller, body)
	ctx.Response.Header.Set(HeaderModel, man.Name+"/"+man.Version)
	ctx.Response.Header.Set(HeaderModelSHA256, e.mod.SHA256())
	var ce *modelapi.CallError
	if errors.As(err, &ce) {
		msg := ce.Message
		if ce.Field != "" {
			msg = ce.Field + ": " + msg
		}
		if ce.RetryAfter > 0 {
			ctx.Response.Header.Set("Retry-After", itoa(int(ce.RetryAfter/time.Second)))
		}
		oipError(ctx, ce.Status, msg)
		return
	}
	if err != nil {
		oipError(ctx, fasthttp.StatusInternalServerError, err.Error())
		return
	}
	outputs, err := outputTensors(out, rt.Batch)
	if err != nil {
		oipError(ctx, fasthttp.StatusInternalServerError, "the model's answer cannot be given as tensors: "+err.Error())
		return
	}
	conform(outputs, h.routeOutputs(ctx, e, idx))
	if len(req.Outputs) > 0 {
		want := map[string]bool{}
		for _, o := range req.Outputs {
			want[o.Name] = true
		}
		kept := outputs[:0]
		for _, t := range outputs {
			if want[t.Name] {
				kept = append(kept, t)
				delete(want, t.Name)
			}
		}
		for n := range want {
			oipError(ctx, fasthttp.StatusBadRequest, "model "+name+" has no output "+strconvQuote(n))
			return
		}
		outputs = kept
	}
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, OIPInferResponse{ModelName: ref.Model, ModelVersion: ref.Version, ID: req.ID,
		Parameters: map[string]any{"module_sha256": ref.ModuleSHA256, "route": ref.Route}, Outputs: outputs})
}

// conform gives an answer's tensors the datatypes of the route's metadata
// where the values allow it: a column of numbers that all happen to be
// integers in this answer is FP64 when the metadata says so.
func conform(ts []OIPTensor, meta []TensorMetadata) {
	want := make(map[string]string, len(meta))
	for _, m := range meta {
		want[m.Name] = m.Datatype
	}
	for i, t := range ts {
		if t.Datatype != "INT64" || want[t.Name] != "FP64" {
			continue
		}
		data, _ := t.Data.([]any)
		for k, v := range data {
			if n, ok := v.(int64); ok {
				data[k] = float64(n)
			}
		}
		ts[i].Datatype = "FP64"
	}
}

// flatten lists a tensor's elements in row-major order.
func flatten(v any, out []any) []any {
	if l, ok := v.([]any); ok {
		for _, x := range l {
			out = flatten(x, out)
		}
		return out
	}
	return append(out, v)
}

// inferInput builds a route's JSON input from input tensors: each tensor
// is the input member of its name; a tensor of one element is a single
// value unless the member is an array property; an array property, or the
// route's batch member given several elements, takes every element.
func inferInput(schema json.RawMessage, batch *abi.Batch, inputs []OIPTensor) ([]byte, error) {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	in := map[string]any{}
	for _, t := range inputs {
		p, ok := s.Properties[t.Name]
		if !ok {
			names := make([]string, 0, len(s.Properties))
			for n := range s.Properties {
				names = append(names, n)
			}
			return nil, fmt.Errorf("unexpected input %q; the inputs are %s", t.Name, strings.Join(sorted(names), ", "))
		}
		elems := flatten(t.Data, nil)
		n := int64(1)
		for _, d := range t.Shape {
			n *= d
		}
		if len(t.Shape) > 0 && n != int64(len(elems)) {
			return nil, fmt.Errorf("input %q has shape %v but %d elements", t.Name, t.Shape, len(elems))
		}
		for i, v := range elems {
			switch t.Datatype {
			case "BYTES":
				if _, ok := v.(string); !ok {
					return nil, fmt.Errorf("input %q (BYTES) element %d is not a string", t.Name, i)
				}
			case "BOOL":
				if _, ok := v.(bool); !ok {
					return nil, fmt.Errorf("input %q (BOOL) element %d is not true or false", t.Name, i)
				}
			case "FP16", "FP32", "FP64", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64":
				if _, ok := v.(json.Number); !ok {
					return nil, fmt.Errorf("input %q (%s) element %d is not a number", t.Name, t.Datatype, i)
				}
			default:
				return nil, fmt.Errorf("input %q: datatype %q is not supported (BYTES, BOOL, FP*, INT*, UINT*)", t.Name, t.Datatype)
			}
		}
		// A one-element tensor on a batch member goes as a single value, as
		// a single SMILES in the JSON API: a bad one is refused (422), while
		// in a longer list it gets its row's error.
		list := p.Type == "array" || batch != nil && batch.Input == t.Name && len(elems) != 1
		switch {
		case list:
			in[t.Name] = elems
		case len(elems) == 1:
			in[t.Name] = elems[0]
		default:
			return nil, fmt.Errorf("input %q takes one element, got %d", t.Name, len(elems))
		}
	}
	return json.Marshal(in)
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// outputTensors turns a model's JSON answer into named tensors: the rows of
// a batch route's list become one tensor per row member (shape [rows]); a
// list of flat objects (a table) one tensor per column named
// "member.column"; an object one per member, "member.Key"; a number, string or boolean a tensor of shape [1]; a
// list of numbers a tensor of its length, a rectangular list of lists of
// numbers one of shape [rows, columns]; anything else its JSON text (BYTES).
func outputTensors(out []byte, batch *abi.Batch) ([]OIPTensor, error) {
	ms, err := modelapi.ObjectMembers(out)
	if err != nil {
		return nil, err
	}
	var ts []OIPTensor
	for _, m := range ms {
		if m.Key == modelapi.ProvenanceMember {
			continue
		}
		var v any
		dec := json.NewDecoder(strings.NewReader(string(m.Val)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if rows, ok := objectRows(v); ok && batch != nil && batch.Output == m.Key {
			ts = append(ts, columnTensors("", rows)...)
			continue
		}
		ts = append(ts, tensorsOf(m.Key, v)...)
	}
	return ts, nil
}

// tensorsOf is the tensors of member name: an object gives one per member
// ("name.member"), a list of objects one per column ("name.column").
func tensorsOf(name string, v any) []OIPTensor {
	if rows, ok := objectRows(v); ok {
		return columnTensors(name+".", rows)
	}
	if o, ok := v.(map[string]any); ok && len(o) > 0 {
		keys := make([]string, 0, len(o))
		for k := range o {
			keys = append(keys, k)
		}
		var ts []OIPTensor
		for _, k := range sorted(keys) {
			ts = append(ts, tensorsOf(name+"."+k, o[k])...)
		}
		return ts
	}
	return []OIPTensor{valueTensor(name, v)}
}

// objectRows reports whether v is a non-empty list of objects.
func objectRows(v any) ([]map[string]any, bool) {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return nil, false
	}
	rows := make([]map[string]any, len(l))
	for i, x := range l {
		if rows[i], ok = x.(map[string]any); !ok {
			return nil, false
		}
	}
	return rows, true
}

// columnTensors makes one tensor per member of the rows, in the order the
// members first appear in the JSON (map order is not kept: sorted names).
func columnTensors(prefix string, rows []map[string]any) []OIPTensor {
	var names []string
	seen := map[string]bool{}
	for _, r := range rows {
		for k := range r {
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
		}
	}
	var ts []OIPTensor
	for _, n := range sorted(names) {
		col := make([]any, len(rows))
		for i, r := range rows {
			col[i] = r[n]
		}
		dt, data := elements(col)
		ts = append(ts, OIPTensor{Name: prefix + n, Shape: []int64{int64(len(rows))}, Datatype: dt, Data: data, list: true})
	}
	return ts
}

// valueTensor is the tensor of one output member.
func valueTensor(name string, v any) OIPTensor {
	if l, ok := v.([]any); ok {
		if len(l) > 0 {
			if first, ok := l[0].([]any); ok {
				cols := len(first)
				var flat []any
				rect := true
				for _, r := range l {
					rr, ok := r.([]any)
					if !ok || len(rr) != cols {
						rect = false
						break
					}
					flat = append(flat, rr...)
				}
				if dt, data := elements(flat); rect && dt != "BYTES" {
					return OIPTensor{Name: name, Shape: []int64{int64(len(l)), int64(cols)}, Datatype: dt, Data: data, list: true}
				}
			}
		}
		dt, data := elements(l)
		return OIPTensor{Name: name, Shape: []int64{int64(len(l))}, Datatype: dt, Data: data, list: true}
	}
	dt, data := elements([]any{v})
	return OIPTensor{Name: name, Shape: []int64{1}, Datatype: dt, Data: data}
}

// elements types a list of JSON values: all integers INT64, all numbers
// FP64, all booleans BOOL, else BYTES (strings as they are, other values
// as JSON text, null as ""). A null among numbers stays null (FP64).
func elements(vs []any) (string, []any) {
	ints, nums, bools := true, true, true
	for _, v := range vs {
		switch x := v.(type) {
		case json.Number:
			bools = false
			if _, err := x.Int64(); err != nil {
				ints = false
			}
		case bool:
			ints, nums = false, false
		case nil:
			ints, bools = false, false
		default:
			ints, nums, bools = false, false, false
		}
	}
	out := make([]any, len(vs))
	switch {
	case len(vs) > 0 && ints:
		for i, v := range vs {
			out[i], _ = v.(json.Number).Int64()
		}
		return "INT64", out
	case len(vs) > 0 && nums:
		for i, v := range vs {
			if v == nil {
				continue
			}
			out[i], _ = v.(json.Number).Float64()
		}
		return "FP64", out
	case len(vs) > 0 && bools:
		copy(out, vs)
		return "BOOL", out
	}
	for i, v := range vs {
		switch x := v.(type) {
		case string:
			out[i] = x
		case nil:
			out[i] = ""
		default:
			b, _ := json.Marshal(x)
			out[i] = string(b)
		}
	}
	return "BYTES", out
}
