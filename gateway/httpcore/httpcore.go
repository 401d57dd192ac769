// Package httpcore is the gateway's HTTP plumbing on fasthttp: request IDs,
// access logs, panic recovery, Prometheus metrics, JSON errors and the server
// limits. It knows nothing of catalogs or models.
package httpcore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// Middleware wraps a handler.
type Middleware func(fasthttp.RequestHandler) fasthttp.RequestHandler

// Chain applies mws around h; the first middleware is the outermost.
func Chain(h fasthttp.RequestHandler, mws ...Middleware) fasthttp.RequestHandler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// HeaderRequestID is the header carrying the request ID in both directions.
const HeaderRequestID = "X-Request-ID"

// hdrRequestID is HeaderRequestID in canonical form: set without
// normalising the key on every request.
var hdrRequestID = []byte(HeaderRequestID)

// s2b is s as bytes, for fasthttp calls that copy them.
func s2b(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

const (
	keyRequestID = "toxgate.request_id"
	keyRoute     = "toxgate.route"
)

// RequestID returns the ID of the request (set by the RequestIDs middleware).
func RequestID(ctx *fasthttp.RequestCtx) string {
	if v, ok := ctx.UserValue(keyRequestID).(string); ok {
		return v
	}
	return ""
}

// SetRoute names the route pattern of a request for metrics and logs, for
// handlers that resolve paths themselves (e.g. model paths from a registry).
func SetRoute(ctx *fasthttp.RequestCtx, pattern string) { ctx.SetUserValue(keyRoute, pattern) }

// Route returns the route pattern that served the request: the one set by
// SetRoute, else the router's matched pattern, else "unmatched".
func Route(ctx *fasthttp.RequestCtx) string {
	if v, ok := ctx.UserValue(keyRoute).(string); ok {
		return v
	}
	if v, ok := ctx.UserValue(router.MatchedRoutePathParam).(string); ok {
		return v
	}
	return "unmatched"
}

var (
	idPrefix  = newIDPrefix()
	idCounter atomic.Uint64
)

func newIDPrefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newRequestID returns a process-unique ID: a random per-process prefix and a counter.
func newRequestID() string {
	n := idCounter.Add(1)
	buf := make([]byte, 0, 32)
	buf = append(buf, idPrefix...)
	buf = append(buf, '-')
	buf = strconv.AppendUint(buf, n, 36)
	return string(buf)
}

// validRequestID accepts a client-supplied ID of reasonable length made of
// visible ASCII characters, so that it is safe to log and echo.
func validRequestID(b []byte) bool {
	if len(b) == 0 || len(b) > 128 {
		return false
	}
	for _, c := range b {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// RequestIDs honours a valid incoming X-Request-ID or creates one, and echoes
// it on the response.
func RequestIDs() Middleware {
	return func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			var id string
			if in := ctx.Request.Header.Peek(HeaderRequestID); validRequestID(in) {
				id = string(in)
			} else {
				id = newRequestID()
			}
			ctx.SetUserValue(keyRequestID, id)
			ctx.Response.Header.SetCanonical(hdrRequestID, s2b(id))
			next(ctx)
		}
	}
}

// Recover turns a panic in a handler into a 500 JSON error, logged with the
// request ID and the stack.
func Recover(log *slog.Logger) Middleware {
	return func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			defer func() {
				if p := recover(); p != nil {
					log.Error("panic in handler", "request_id", RequestID(ctx),
						"method", string(ctx.Method()), "path", string(ctx.Path()),
						"panic", p, "stack", string(debug.Stack()))
					ctx.Response.Reset()
					ctx.Response.Header.Set(HeaderRequestID, RequestID(ctx))
					WriteError(ctx, fasthttp.StatusInternalServerError, "internal", "internal server error", "")
				}
			}()
			next(ctx)
		}
	}
}

// AccessLog writes one line per request: method, path, status, size,
// duration, request ID, remote address and route. It hands the record to the
// logger's handler itself, without a caller's program counter: slog's
// Logger.LogAttrs walks the stack for it on every call (~1.4% of the gateway's
// CPU on /IsAlive), and an access line has no use for a source position.
func AccessLog(log *slog.Logger) Middleware {
	h := log.Handler()
	// The gateway's own access handler, without attributes or groups
	// added, renders the line directly (logRequest).
	fast, _ := h.(*AccessHandler)
	if fast != nil && (len(fast.pre) > 0 || fast.group != "") {
		fast = nil
	}
	return func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			next(ctx)
			if !h.Enabled(ctx, slog.LevelInfo) {
				return
			}
			// A streamed body (a file download) is not read to count it:
			// that would load it whole into memory.
			n := ctx.Response.Header.ContentLength()
			if !ctx.Response.IsBodyStream() {
				n = len(ctx.Response.Body())
			}
			now := time.Now()
			if fast != nil {
				e := accessEntry{when: now, method: methodLabel(ctx.Method()), path: ctx.Path(),
					status: ctx.Response.StatusCode(), bytes: n, duration: now.Sub(ctx.Time()),
					requestID: RequestID(ctx), route: Route(ctx)}
				e.remote, e.remoteStr = remoteAddr(ctx.RemoteAddr())
				_ = fast.logRequest(&e) // a failed log write must not fail the request
				return
			}
			r := slog.NewRecord(now, slog.LevelInfo, "request", 0)
			r.AddAttrs(
				slog.String("method", methodLabel(ctx.Method())),
				slog.String("path", string(ctx.Path())),
				slog.Int("status", ctx.Response.StatusCode()),
				slog.Int("bytes", n),
				slog.Duration("duration", now.Sub(ctx.Time())),
				slog.String("request_id", RequestID(ctx)),
				slog.String("remote", remoteIP(ctx)),
				slog.String("route", Route(ctx)),
			)
			_ = h.Handle(ctx, r) // a failed log write must not fail the request
		}
	}
}

func remoteIP(ctx *fasthttp.RequestCtx) string {
	if a, ok := ctx.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return ctx.RemoteAddr().String()
}

// ErrorBody is the JSON error shape of the gateway core and model endpoints:
// {"error":{"code":...,"message":...,"field":...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Field     string `json:"field,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

// WriteError answers status with the JSON error shape.
func WriteError(ctx *fasthttp.RequestCtx, status int, code, message, field string) {
	WriteJSON(ctx, status, ErrorBody{Error: ErrorDetail{Code: code, Message: message, Field: field, RequestID: RequestID(ctx)}})
}

// WriteJSON answers status with v encoded as JSON.
func WriteJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = fasthttp.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"response encoding failed"}}`)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// ServerErrorHandler answers errors that happen before a handler runs
// (oversized body or header, timeouts, malformed requests) in the JSON
// error shape with the right status.
func ServerErrorHandler(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		WriteError(ctx, fasthttp.StatusRequestEntityTooLarge, "body_too_large", "request body larger than the server accepts", "")
	case errors.As(err, &small):
		WriteError(ctx, fasthttp.StatusRequestHeaderFieldsTooLarge, "header_too_large", "request header larger than the server accepts", "")
	case errors.As(err, &netErr) && netErr.Timeout():
		WriteError(ctx, fasthttp.StatusRequestTimeout, "timeout", "request not received in time", "")
	default:
		WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", "malformed HTTP request", "")
	}
}

// RequestContext is the context for a handler's work on behalf of ctx: it
// carries the request's values and ends after timeout (the configured
// deadline of that work). It is not cancelled when the server starts to
// shut down: in-flight requests finish within server.shutdown_timeout.
// (A *fasthttp.RequestCtx is itself a context.Context, but one without a
// deadline that ends every request at the first moment of a shutdown.)
func RequestContext(ctx *fasthttp.RequestCtx, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), timeout)
}
