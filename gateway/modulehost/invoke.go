package modulehost

import (
	"toxgate/gateway/modulehost/modelapi"

	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/valyala/fasthttp"
)

// Provenance headers of every model answer (errors included).
const (
	HeaderModel       = "X-Model"        // name/version
	HeaderModelSHA256 = "X-Model-SHA256" // SHA-256 of the module's bytes
)

func refOf(r route) modelapi.ModelRef {
	m := r.e.mod.Manifest()
	rt := m.Routes[r.idx]
	return modelapi.ModelRef{Provenance: modelapi.Provenance{Model: m.Name, Version: m.Version, ModuleSHA256: r.e.mod.SHA256(), Route: rt.Path},
		RouteIndex: r.idx, Batch: rt.Batch, InputSchema: rt.InputSchema, Table: rt.Output.Table}
}

// Resolve finds a route by its path ("/hERG/evaluate"), or the first route
// of a module by its name (case-insensitive: "herg", "hERG").
func (h *Host) Resolve(nameOrPath string) (modelapi.ModelRef, bool) {
	reg := h.reg.Load()
	if r, ok := reg.routes[nameOrPath]; ok {
		return refOf(r), true
	}
	for name, e := range reg.modules {
		if strings.EqualFold(name, nameOrPath) {
			return refOf(route{e: e, idx: 0}), true
		}
	}
	return modelapi.ModelRef{}, false
}

// Invoke validates body and runs it on the route at path as caller, as a
// POST to path does (batch slicing and the caller's share of the run
// slots and instances included; caller is a key as CallerKey or
// BackgroundPrefix makes, of weight 1); ctx cancels the wait and the call. It returns the answer (with
// the provenance member) and the module that computed it.
func (h *Host) Invoke(ctx context.Context, path, caller string, body []byte) ([]byte, modelapi.ModelRef, error) {
	return h.invoke(ctx, path, Caller{Key: caller}, body)
}

func (h *Host) invoke(ctx context.Context, path string, caller Caller, body []byte) ([]byte, modelapi.ModelRef, error) {
	for attempt := 0; ; attempt++ {
		r, ok := h.reg.Load().routes[path]
		if !ok {
			return nil, modelapi.ModelRef{}, &modelapi.CallError{Status: fasthttp.StatusNotFound, Code: modelapi.CodeNotFound, Message: "no model serves " + path}
		}
		out, _, cerr, retired := h.invokeOn(ctx, r, caller, body)
		if retired && attempt < 3 {
			continue
		}
		if retired {
			return nil, refOf(r), &modelapi.CallError{Status: fasthttp.StatusServiceUnavailable, Code: modelapi.CodeUnavailable, Message: "the model was removed while the request was in flight"}
		}
		if cerr != nil {
			return nil, refOf(r), cerr
		}
		return withProvenance(out, r.e), refOf(r), nil
	}
}

// HeaderCache says whether a model answer came from the response cache:
// "hit" (nothing computed), "miss" (the module computed it, or some items
// of a batch). Absent when the cache is off or the call failed.
const HeaderCache = "X-Cache"

func (h *Host) setCacheHeader(hd *fasthttp.ResponseHeader, ok, hit bool) {
	switch {
	case h.rcache == nil || !ok:
	case hit:
		hd.Set(HeaderCache, "hit")
	default:
		hd.Set(HeaderCache, "miss")
	}
}

func setProvenance(h *fasthttp.ResponseHeader, e *entry) {
	m := e.mod.Manifest()
	h.Set(HeaderModel, m.Name+"/"+m.Version)
	h.Set(HeaderModelSHA256, e.mod.SHA256())
}

// withProvenance adds the provenance member to a JSON object answer (one
// that has no member of that name already); other answers are returned as
// they are.
func withProvenance(out []byte, e *entry) []byte {
	t := bytes.TrimRight(out, " \t\r\n")
	if len(t) < 2 || t[len(t)-1] != '}' || bytes.Contains(out, []byte(`"`+modelapi.ProvenanceMember+`"`)) {
		return out
	}
	m := e.mod.Manifest()
	p, _ := json.Marshal(modelapi.Provenance{Model: m.Name, Version: m.Version, ModuleSHA256: e.mod.SHA256()})
	b := make([]byte, 0, len(t)+len(p)+20)
	b = append(b, t[:len(t)-1]...)
	if len(bytes.TrimSpace(t[1:len(t)-1])) > 0 {
		b = append(b, ',')
	}
	b = append(b, `"`+modelapi.ProvenanceMember+`":`...)
	b = append(b, p...)
	return append(b, '}')
}
