package modulehost

import (
	"toxgate/gateway/modulehost/modelapi"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/modulehost/wasmrt"
	"toxgate/sdk/abi"
)

// ServeModel serves ctx as ServeModelAs does, with the client's IP address
// as the caller.
func (h *Host) ServeModel(ctx *fasthttp.RequestCtx) bool {
	return h.ServeModelAs(ctx, Caller{Key: modelapi.CallerKey("", "", ctx.RemoteIP().String())})
}

// ServeModelAs serves ctx if its path is a route of a loaded module and
// reports whether it did. caller names who is calling (CallerKey: the
// authenticated user, else the client's address) and the weight of its
// share: each caller gets a fair share of the run slots and of a module's
// instances when callers contend, and a bounded place in its queue. Call
// it from the router's NotFound handler, after auth.
func (h *Host) ServeModelAs(ctx *fasthttp.RequestCtx, caller Caller) bool {
	r, ok := h.reg.Load().routes[string(ctx.Path())]
	if !ok {
		return false
	}
	if !ctx.IsPost() {
		ctx.Response.Header.Set("Allow", "POST")
		httpcore.WriteError(ctx, fasthttp.StatusMethodNotAllowed, modelapi.CodeMethodNotAllowed, "model routes accept POST only", "")
		return true
	}
	if mt, _, _ := strings.Cut(string(ctx.Request.Header.ContentType()), ";"); !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		httpcore.WriteError(ctx, fasthttp.StatusUnsupportedMediaType, modelapi.CodeUnsupportedMediaType, "send the input as Content-Type: application/json", "")
		return true
	}
	path := string(ctx.Path())
	body := ctx.PostBody()
	for attempt := 0; ; attempt++ {
		if done := h.serveOn(ctx, r, caller, body); done {
			return true
		}
		// The module was swapped out between lookup and call: use the new one.
		r, ok = h.reg.Load().routes[path]
		if !ok || attempt == 3 {
			httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, modelapi.CodeUnavailable, "the model was removed while the request was in flight", "")
			return true
		}
	}
}

// serveOn runs one call on route r, on behalf of the request (its values;
// the module's own call timeout is the deadline, and a shutdown lets it
// finish); it returns false if the module was retired.
func (h *Host) serveOn(ctx *fasthttp.RequestCtx, r route, caller Caller, body []byte) bool {
	out, hit, cerr, retired := h.invokeOn(context.WithoutCancel(ctx), r, caller, body)
	if retired {
		return false
	}
	man := r.e.mod.Manifest()
	rt := man.Routes[r.idx]
	setProvenance(&ctx.Response.Header, r.e)
	h.setCacheHeader(&ctx.Response.Header, cerr == nil, hit)
	if cerr != nil {
		if cerr.RetryAfter > 0 {
			ctx.Response.Header.Set("Retry-After", itoa(int(cerr.RetryAfter/time.Second)))
		}
		httpcore.WriteError(ctx, cerr.Status, cerr.Code, cerr.Message, cerr.Field)
		return true
	}
	accept := string(ctx.Request.Header.Peek("Accept"))
	if rt.Output.Table == nil && wantsCSV(accept) {
		if csvBody, ok := seriesCSV(out); ok {
			setFilename(ctx, rt.Output.Filename, ".csv")
			ctx.Response.Header.SetContentType("text/csv; charset=utf-8")
			ctx.SetBody(csvBody)
			return true
		}
		if !acceptsJSON(accept) {
			httpcore.WriteError(ctx, fasthttp.StatusNotAcceptable, modelapi.CodeNotAcceptable, "this route's answer has no table or time series to give as CSV; it answers application/json", "")
			return true
		}
	}
	if rt.Output.Table != nil && wantsCSV(accept) {
		if csvBody, err := tableCSV(out, rt.Output.Table); err == nil {
			setFilename(ctx, rt.Output.Filename, ".csv")
			ctx.Response.Header.SetContentType("text/csv; charset=utf-8")
			ctx.SetBody(csvBody)
			return true
		} else {
			h.log.Warn("table output could not be rendered as CSV; answering JSON", "module", man.Name, "route", rt.Path, "error", err)
		}
	}
	setFilename(ctx, rt.Output.Filename, ".json")
	ctx.Response.Header.SetContentType("application/json")
	ctx.SetBody(withProvenance(out, r.e))
	return true
}

// invokeOn validates body and runs it on route r as caller: the answer, or
// the error a client gets; retired is true if the module was swapped out.
func (h *Host) invokeOn(ctx context.Context, r route, caller Caller, body []byte) (out []byte, hit bool, cerr *modelapi.CallError, retired bool) {
	mod := r.e.mod
	man := mod.Manifest()
	rt := man.Routes[r.idx]
	limits := mod.Limits()
	if len(body) > limits.MaxInputBytes {
		return nil, false, &modelapi.CallError{Status: fasthttp.StatusRequestEntityTooLarge, Code: modelapi.CodePayloadTooLarge,
			Message: "the body has " + itoa(len(body)) + " bytes; this model accepts at most " + itoa(limits.MaxInputBytes)}, false
	}
	if ie := validateInput(r.e.schemas[r.idx], body); ie != nil {
		status, code := fasthttp.StatusUnprocessableEntity, modelapi.CodeInvalidInput
		if strings.HasPrefix(ie.message, "the body is not valid JSON") {
			status, code = fasthttp.StatusBadRequest, modelapi.CodeInvalidJSON
		}
		h.metrics.calls.WithLabelValues(man.Name, code).Inc()
		return nil, false, &modelapi.CallError{Status: status, Code: code, Message: ie.message, Field: ie.field}, false
	}
	start := time.Now()
	out, hit, err := h.answer(ctx, r, caller, &rt, body)
	if errors.Is(err, wasmrt.ErrRetired) {
		return nil, false, nil, true
	}
	var rej *rejection
	if errors.As(err, &rej) {
		h.metrics.rejected.WithLabelValues(man.Name, rej.reason).Inc()
		h.metrics.calls.WithLabelValues(man.Name, modelapi.CodeTooManyRequests).Inc()
		secs := int(rej.retryAfter / time.Second)
		return nil, false, &modelapi.CallError{Status: fasthttp.StatusTooManyRequests, Code: modelapi.CodeTooManyRequests,
			Message: rejectionMessage(man.Name, rej.reason, secs), RetryAfter: rej.retryAfter}, false
	}
	if err != nil && ctx.Err() != nil && !errors.As(err, new(*abi.Error)) {
		return nil, false, &modelapi.CallError{Status: fasthttp.StatusServiceUnavailable, Code: modelapi.CodeUnavailable, Message: "the call was canceled: " + ctx.Err().Error()}, false
	}
	h.metrics.duration.WithLabelValues(man.Name).Observe(time.Since(start).Seconds())
	if err != nil {
		status, code, msg, field := errorFor(err, limits)
		h.metrics.calls.WithLabelValues(man.Name, code).Inc()
		return nil, false, &modelapi.CallError{Status: status, Code: code, Message: msg, Field: field}, false
	}
	h.metrics.calls.WithLabelValues(man.Name, "ok").Inc()
	return out, hit, nil, false
}

// prepareTimeout bounds bringing a parked module back and starting an
// instance, before a call's own deadline starts (at least the deadline).
const prepareTimeout = 30 * time.Second

// call waits for the caller's turn (see scheduler), then runs input on
// one instance under the module's deadline (the wait does not count).
func (h *Host) call(ctx context.Context, r route, caller Caller, input []byte) ([]byte, error) {
	t, err := h.sched.acquire(ctx, caller, r.e.pool, false)
	if err != nil {
		return nil, err
	}
	return h.run(ctx, r, caller, t, input, 0)
}

// run runs input on one instance of r's module under the module's
// deadline, holding t, which it releases; items is the number of batch
// items input holds (0 for a single call).
func (h *Host) run(ctx context.Context, r route, caller Caller, t *ticket, input []byte, items int) ([]byte, error) {
	if items > 0 && r.e.mod.Parked() {
		items = 0 // the call compiles the module first: no measure of its time per item
	}
	start := time.Now()
	defer func() { h.sched.release(caller.Key, t, time.Since(start), items) }()
	timeout := time.Duration(r.e.mod.Limits().TimeoutMS) * time.Millisecond
	// The deadline covers the model's work: bringing a parked module back
	// and starting an instance come first, bounded on their own.
	pctx, pcancel := context.WithTimeout(ctx, max(timeout, prepareTimeout))
	err := r.e.mod.Prepare(pctx)
	late := pctx.Err() != nil
	pcancel()
	switch {
	case errors.Is(err, wasmrt.ErrRetired):
		return nil, err
	case err != nil && late:
		return nil, &wasmrt.Failure{Kind: wasmrt.FailBusy, Err: fmt.Errorf("preparing the module: %w", err)}
	case err != nil:
		return nil, &wasmrt.Failure{Kind: wasmrt.FailCrash, Err: fmt.Errorf("preparing the module: %w", err)}
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return r.e.mod.Call(cctx, r.idx, input)
}

func rejectionMessage(model, reason string, secs int) string {
	var why string
	switch reason {
	case RejectCallerQueueFull:
		why = "you already have the most calls waiting for model " + model + " that one caller may have"
	case RejectQueueFull:
		why = "the queue of model " + model + " is full"
	case RejectCallerRunning:
		why = "you already run as many model calls at once as one caller may"
	default:
		why = "no instance of model " + model + " came free in time"
	}
	return why + "; retry in " + itoa(secs) + " s"
}

// setFilename adds Content-Disposition for routes whose manifest names a
// file to save the answer to (only plain names; anything else is ignored).
func setFilename(ctx *fasthttp.RequestCtx, base, ext string) {
	if base == "" || len(base) > 100 {
		return
	}
	for _, c := range base {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return
		}
	}
	ctx.Response.Header.Set("Content-Disposition", `attachment; filename="`+base+ext+`"`)
}

// errorFor maps a call error to status, code, message and field.
func errorFor(err error, limits abi.Limits) (int, string, string, string) {
	var ge *abi.Error
	if errors.As(err, &ge) {
		switch ge.Kind {
		case abi.KindInvalidInput:
			return fasthttp.StatusUnprocessableEntity, modelapi.CodeInvalidInput, ge.Message, ge.Field
		case abi.KindNotFound:
			return fasthttp.StatusNotFound, modelapi.CodeNotFound, ge.Message, ge.Field
		default:
			return fasthttp.StatusInternalServerError, modelapi.CodeModelError, ge.Message, ge.Field
		}
	}
	var f *wasmrt.Failure
	if errors.As(err, &f) {
		switch f.Kind {
		case wasmrt.FailTimeout:
			return fasthttp.StatusGatewayTimeout, modelapi.CodeTimeout, "the model did not answer within " + itoa(limits.TimeoutMS) + " ms; the call was stopped", ""
		case wasmrt.FailBusy:
			return fasthttp.StatusServiceUnavailable, modelapi.CodeOverloaded, "all instances of the model stayed busy until the deadline; retry later", ""
		case wasmrt.FailOutOfMemory:
			return fasthttp.StatusInternalServerError, modelapi.CodeOutOfMemory, "the model ran out of its " + itoa(int(limits.MemoryPages)/16) + " MiB of memory; the instance was discarded", ""
		case wasmrt.FailOutputTooLarge:
			return fasthttp.StatusInternalServerError, modelapi.CodeOutputTooLarge, "the model's output is larger than the gateway allows", ""
		case wasmrt.FailBadOutput:
			return fasthttp.StatusInternalServerError, modelapi.CodeBadModuleOutput, "the module returned a malformed result", ""
		case wasmrt.FailCanceled:
			return fasthttp.StatusServiceUnavailable, modelapi.CodeUnavailable, "the call was canceled (the gateway is shutting down)", ""
		default:
			return fasthttp.StatusInternalServerError, modelapi.CodeModuleCrashed, "the model crashed while computing this request; the instance was discarded", ""
		}
	}
	return fasthttp.StatusInternalServerError, modelapi.CodeModuleCrashed, "the model call failed", ""
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
