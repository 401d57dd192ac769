package modulehost

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/modulehost/modelapi"
	"toxgate/gateway/modulehost/wasmrt"
	"toxgate/sdk/abi"
)

// Route is one fixed HTTP route of the host.
type Route struct {
	Method, Path string
	Handler      fasthttp.RequestHandler
	// Admin routes must be wrapped with the sysadmin check.
	Admin bool
}

// Routes lists the host's fixed routes (model paths are served by ServeModel).
func (h *Host) Routes() []Route {
	return []Route{
		{Method: fasthttp.MethodGet, Path: "/models", Handler: h.handleIndex},
		{Method: fasthttp.MethodGet, Path: "/models/{name}", Handler: h.handleModel},
		{Method: fasthttp.MethodGet, Path: "/v2", Handler: h.HandleServerMetadata},
		{Method: fasthttp.MethodGet, Path: "/v2/health/live", Handler: h.handleLive},
		{Method: fasthttp.MethodGet, Path: "/v2/health/ready", Handler: h.handleReady},
		{Method: fasthttp.MethodGet, Path: "/v2/models/{name}", Handler: h.handleOIPModel},
		{Method: fasthttp.MethodGet, Path: "/v2/models/{name}/ready", Handler: h.handleOIPModelReady},
		{Method: fasthttp.MethodPost, Path: "/admin/modules", Handler: h.handleUpload, Admin: true},
		{Method: fasthttp.MethodDelete, Path: "/admin/modules/{name}", Handler: h.handleDelete, Admin: true},
	}
}

// RegisterRoutes registers Routes on r, wrapping the admin ones with admin.
func (h *Host) RegisterRoutes(r *router.Router, admin func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	for _, rt := range h.Routes() {
		hd := rt.Handler
		if rt.Admin {
			hd = admin(hd)
		}
		r.Handle(rt.Method, rt.Path, hd)
	}
}

// ModelInfo is an entry of the model index (GET /models, GET /models/{name}).
type ModelInfo struct {
	Name        string         `json:"name"`
	Version     string         `json:"version,omitempty"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Status      string         `json:"status"` // "ready", "loading" or "failed"
	Error       string         `json:"error,omitempty"`
	SHA256      string         `json:"sha256,omitempty"`
	SizeBytes   int            `json:"size_bytes,omitempty"`
	LoadedAt    *time.Time     `json:"loaded_at,omitempty"`
	Routes      []RouteInfo    `json:"routes,omitempty"`
	Limits      *abi.Limits    `json:"limits,omitempty"`
	Card        *abi.ModelCard `json:"model_card,omitempty"`
	Stats       *wasmrt.Stats  `json:"stats,omitempty"`
}

// RouteInfo describes one model endpoint in the index.
type RouteInfo struct {
	Method      string          `json:"method"`
	Path        string          `json:"path"`
	Summary     string          `json:"summary,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Example     json.RawMessage `json:"example,omitempty"`
	Output      abi.Output      `json:"output"`
}

func infoOf(e *entry) ModelInfo {
	m := e.mod.Manifest()
	l, st, at := e.mod.Limits(), e.mod.Stats(), e.loadedAt
	card := m.Card
	mi := ModelInfo{
		Name: m.Name, Version: m.Version, Title: m.Title, Description: m.Description, Status: "ready",
		Error: e.lastError, SHA256: e.mod.SHA256(), SizeBytes: e.mod.Size(), LoadedAt: &at,
		Limits: &l, Card: &card, Stats: &st,
	}
	for _, r := range m.Routes {
		mi.Routes = append(mi.Routes, RouteInfo{Method: "POST", Path: r.Path, Summary: r.Summary, InputSchema: r.InputSchema, Example: r.Example, Output: r.Output})
	}
	return mi
}

// Models returns the model index: loaded modules, then module files that are
// loading or failed to load and have no serving version.
func (h *Host) Models() []ModelInfo {
	reg := h.reg.Load()
	out := make([]ModelInfo, 0, len(reg.modules))
	serving := map[string]bool{}
	for _, e := range reg.modules {
		out = append(out, infoOf(e))
		serving[e.source] = true
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	h.mu.Lock()
	var failed []ModelInfo
	for f := range h.pending {
		if !serving[f] {
			failed = append(failed, ModelInfo{Name: fileStem(f), Status: StateLoading})
		}
	}
	for f, why := range h.failures {
		if _, loading := h.pending[f]; !serving[f] && !loading {
			failed = append(failed, ModelInfo{Name: fileStem(f), Status: StateFailed, Error: why})
		}
	}
	h.mu.Unlock()
	sort.Slice(failed, func(i, j int) bool { return failed[i].Name < failed[j].Name })
	return append(out, failed...)
}

func (h *Host) handleIndex(ctx *fasthttp.RequestCtx) {
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"models": h.Models()})
}

func (h *Host) lookup(ctx *fasthttp.RequestCtx) (*entry, bool) {
	name, _ := ctx.UserValue("name").(string)
	e, ok := h.reg.Load().modules[name]
	if !ok {
		httpcore.WriteError(ctx, fasthttp.StatusNotFound, modelapi.CodeNotFound, "no model named "+strconvQuote(name), "")
	}
	return e, ok
}

func (h *Host) handleModel(ctx *fasthttp.RequestCtx) {
	if e, ok := h.lookup(ctx); ok {
		httpcore.WriteJSON(ctx, fasthttp.StatusOK, infoOf(e))
	}
}

func (h *Host) handleLive(ctx *fasthttp.RequestCtx) {
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]bool{"live": true})
}

func (h *Host) handleReady(ctx *fasthttp.RequestCtx) {
	if err := h.Ready(); err != nil {
		httpcore.WriteJSON(ctx, fasthttp.StatusServiceUnavailable, map[string]any{"ready": false, "error": err.Error()})
		return
	}
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]bool{"ready": true})
}

// TensorMetadata is an Open Inference Protocol input or output description.
type TensorMetadata struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// OIPModelMetadata is the Open Inference Protocol model metadata response.
type OIPModelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions"`
	Platform string           `json:"platform"`
	Inputs   []TensorMetadata `json:"inputs"`
	Outputs  []TensorMetadata `json:"outputs"`
	// Routes lists every route's tensors; inputs and outputs above are
	// the first route's (infer takes parameters.route for the others).
	Routes []OIPRouteMetadata `json:"routes"`
}

// OIPRouteMetadata is one route of a model in its OIP metadata.
type OIPRouteMetadata struct {
	Route   string           `json:"route"`
	Inputs  []TensorMetadata `json:"inputs"`
	Outputs []TensorMetadata `json:"outputs"`
}

func (h *Host) handleOIPModel(ctx *fasthttp.RequestCtx) {
	e, ok := h.lookup(ctx)
	if !ok {
		return
	}
	m := e.mod.Manifest()
	md := OIPModelMetadata{Name: m.Name, Versions: []string{m.Version}, Platform: "toxgate-wasm"}
	for i, r := range m.Routes {
		rm := OIPRouteMetadata{Route: r.Path, Inputs: tensors(r.InputSchema), Outputs: h.routeOutputs(ctx, e, i)}
		md.Routes = append(md.Routes, rm)
	}
	md.Inputs, md.Outputs = md.Routes[0].Inputs, md.Routes[0].Outputs
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, md)
}

// tensors maps the top-level properties of an object schema to OIP tensors.
func tensors(schema json.RawMessage) []TensorMetadata {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]TensorMetadata, 0, len(names))
	for _, n := range names {
		t := TensorMetadata{Name: n, Datatype: "BYTES", Shape: []int64{1}}
		switch s.Properties[n].Type {
		case "number":
			t.Datatype = "FP64"
		case "integer":
			t.Datatype = "INT64"
		case "boolean":
			t.Datatype = "BOOL"
		case "array":
			t.Shape = []int64{-1}
		}
		out = append(out, t)
	}
	return out
}

// handleOIPModelReady answers 200 for a loaded model; while module files
// are still loading, 503 with Retry-After for a name no loaded module has
// (it may be one of theirs); 404 otherwise.
func (h *Host) handleOIPModelReady(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("name").(string)
	if e, ok := h.reg.Load().modules[name]; ok {
		httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"name": e.mod.Manifest().Name, "ready": true})
		return
	}
	if pending, _, retry := h.loading(); pending > 0 {
		ctx.Response.Header.Set("Retry-After", itoa(int(retry/time.Second)))
		httpcore.WriteJSON(ctx, fasthttp.StatusServiceUnavailable, map[string]any{"name": name, "ready": false,
			"error": "the models are still loading"})
		return
	}
	httpcore.WriteError(ctx, fasthttp.StatusNotFound, modelapi.CodeNotFound, "no model named "+strconvQuote(name), "")
}

// handleUpload loads the module in the request body (application/wasm or
// application/octet-stream) and swaps it in.
func (h *Host) handleUpload(ctx *fasthttp.RequestCtx) {
	body := ctx.PostBody()
	if len(body) == 0 {
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, modelapi.CodeModuleRejected, "send the .wasm module as the request body", "")
		return
	}
	if len(body) > h.cfg.MaxModuleBytes {
		httpcore.WriteError(ctx, fasthttp.StatusRequestEntityTooLarge, modelapi.CodePayloadTooLarge, "the module is larger than "+itoa(h.cfg.MaxModuleBytes)+" bytes", "")
		return
	}
	lctx, cancel := httpcore.RequestContext(ctx, time.Minute)
	defer cancel()
	res, err := h.Load(lctx, append([]byte(nil), body...))
	if err != nil {
		var le *wasmrt.LoadError
		status := fasthttp.StatusUnprocessableEntity
		if !errors.As(err, &le) && !strings.Contains(err.Error(), "refused") {
			status = fasthttp.StatusInternalServerError
		}
		httpcore.WriteError(ctx, status, modelapi.CodeModuleRejected, err.Error(), "")
		return
	}
	status := fasthttp.StatusCreated
	if res.Unchanged {
		status = fasthttp.StatusOK
	}
	httpcore.WriteJSON(ctx, status, map[string]any{
		"name": res.Name, "version": res.Version, "sha256": res.SHA256,
		"unchanged": res.Unchanged, "replaced_version": res.Replaced,
	})
}

func (h *Host) handleDelete(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("name").(string)
	sha, ok, err := h.Remove(name)
	switch {
	case !ok:
		httpcore.WriteError(ctx, fasthttp.StatusNotFound, modelapi.CodeNotFound, "no model named "+strconvQuote(name), "")
	case err != nil:
		httpcore.WriteError(ctx, fasthttp.StatusInternalServerError, "internal", err.Error(), "")
	default:
		httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"removed": name, "sha256": sha})
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
