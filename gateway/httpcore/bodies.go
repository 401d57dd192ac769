package httpcore

import (
	"io"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// bodyStep is how much of a body is read (and reserved) at a time.
const bodyStep = 64 << 10

// BodyBudget bounds the bytes that request bodies held in memory may take at
// once. The server streams request bodies (fasthttp's StreamRequestBody), so
// nothing is allocated for a declared Content-Length; bytes are reserved as
// they arrive and given back when the request ends.
type BodyBudget struct {
	max  int64
	used atomic.Int64
	// peak since the last time the budget was empty, for giving memory back.
	peak     atomic.Int64
	freeMu   sync.Mutex
	lastFree time.Time
}

// NewBodyBudget returns a budget of max bytes.
func NewBodyBudget(max int64) *BodyBudget { return &BodyBudget{max: max} }

// InUse is the number of bytes reserved now.
func (b *BodyBudget) InUse() int64 { return b.used.Load() }

// tryAcquire reserves n bytes, or reports that they are not available.
func (b *BodyBudget) tryAcquire(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.max {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			if p := b.peak.Load(); u+n > p {
				b.peak.CompareAndSwap(p, u+n)
			}
			return true
		}
	}
}

// release gives n bytes back. When the budget empties after holding more
// than bodyFreeAbove, the Go runtime is asked (at most every few seconds)
// to return freed memory to the operating system at once rather than over
// minutes.
func (b *BodyBudget) release(n int64) {
	if n == 0 {
		return
	}
	if b.used.Add(-n) != 0 || b.peak.Load() < bodyFreeAbove {
		return
	}
	b.peak.Store(0)
	b.freeMu.Lock()
	due := time.Since(b.lastFree) > 5*time.Second
	if due {
		b.lastFree = time.Now()
	}
	b.freeMu.Unlock()
	if due {
		go debug.FreeOSMemory()
	}
}

// bodyFreeAbove is the peak of reserved bytes above which an emptied budget
// returns memory to the operating system.
const bodyFreeAbove = 32 << 20

// BodyPolicy says how the Bodies middleware treats one request's body.
type BodyPolicy struct {
	// Limit is the largest body accepted (413 beyond).
	Limit int64
	// Deferred bodies are not read by the middleware: the route reads them
	// itself after authenticating the caller (ReadBody, or a stream).
	Deferred bool
}

// Bodies reads each request body into memory before the handler runs,
// within the policy's limit (413) and the budget (503 with Retry-After),
// closing the connection on refusal so that the unread rest of the body is
// never parsed as a request. Deferred bodies are only checked against their
// declared length here. rejected (may be nil) counts refusals by reason.
func Bodies(policy func(ctx *fasthttp.RequestCtx) BodyPolicy, budget *BodyBudget, rejected func(reason string)) Middleware {
	return func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			cl := ctx.Request.Header.ContentLength()
			if cl == 0 || ctx.RequestBodyStream() == nil {
				next(ctx)
				return
			}
			p := policy(ctx)
			if int64(cl) > p.Limit {
				refuseBody(ctx, rejected, "too_large", p.Limit)
				return
			}
			if p.Deferred {
				next(ctx)
				// The route may have answered without reading its body
				// (a refused caller): never parse the rest as a request.
				ctx.SetConnectionClose()
				return
			}
			held, ok := ReadBody(ctx, p.Limit, budget, rejected)
			defer budget.release(held)
			if ok {
				next(ctx)
			}
		}
	}
}

// ReadBody reads the streamed body of ctx into memory, reserving budget as
// bytes arrive; on refusal it has answered 413 or 503. The caller releases
// the returned bytes with ReleaseBody once the request is done.
func ReadBody(ctx *fasthttp.RequestCtx, limit int64, budget *BodyBudget, rejected func(reason string)) (held int64, ok bool) {
	stream := ctx.RequestBodyStream()
	if stream == nil {
		return 0, true
	}
	declared := int64(ctx.Request.Header.ContentLength()) // -1: chunked
	var buf []byte
	for declared < 0 || int64(len(buf)) < declared {
		step := int64(bodyStep)
		if declared >= 0 {
			step = min(step, declared-int64(len(buf)))
		}
		if int64(len(buf))+step > limit+1 {
			step = limit + 1 - int64(len(buf))
		}
		if step <= 0 {
			refuseBody(ctx, rejected, "too_large", limit)
			return held, false
		}
		if !budget.tryAcquire(step) {
			DrainBody(ctx)
			ctx.Response.Header.Set("Retry-After", "1")
			if rejected != nil {
				rejected("memory")
			}
			ctx.SetConnectionClose()
			WriteError(ctx, fasthttp.StatusServiceUnavailable, "busy",
				"the server holds too many request bodies at once; retry shortly", "")
			return held, false
		}
		held += step
		if int64(cap(buf)-len(buf)) < step {
			grown := make([]byte, len(buf), int64(2*cap(buf))+step)
			copy(grown, buf)
			buf = grown
		}
		n, err := io.ReadFull(stream, buf[len(buf):int64(len(buf))+step])
		buf = buf[:len(buf)+n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if declared >= 0 && int64(len(buf)) < declared {
				ctx.SetConnectionClose()
				WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", "the request body ended before its declared length", "")
				return held, false
			}
			break
		}
		if err != nil {
			ctx.SetConnectionClose()
			WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", "cannot read the request body: "+err.Error(), "")
			return held, false
		}
	}
	if int64(len(buf)) > limit {
		refuseBody(ctx, rejected, "too_large", limit)
		return held, false
	}
	ctx.Request.SetBodyRaw(buf)
	return held, true
}

// Draining bounds: a refused request's body is read and thrown away up to
// drainMax bytes or for drainTime, so that a client still sending a modest
// body sees the answer rather than a reset connection; past that the
// connection is closed on it.
const (
	drainMax  = 16 << 20
	drainTime = 2 * time.Second
)

// DrainBody discards what is left of a streamed request body, within
// bounds, before a refusal is sent (nothing is kept in memory).
func DrainBody(ctx *fasthttp.RequestCtx) {
	stream := ctx.RequestBodyStream()
	if stream == nil {
		return
	}
	if c := ctx.Conn(); c != nil {
		_ = c.SetReadDeadline(time.Now().Add(drainTime))
	}
	_, _ = io.CopyN(io.Discard, stream, drainMax)
}

// ReleaseBody gives back what ReadBody reserved.
func ReleaseBody(budget *BodyBudget, held int64) { budget.release(held) }

// refuseBody answers 413 naming the limit and closes the connection.
func refuseBody(ctx *fasthttp.RequestCtx, rejected func(string), reason string, limit int64) {
	if rejected != nil {
		rejected(reason)
	}
	DrainBody(ctx)
	ctx.SetConnectionClose()
	WriteError(ctx, fasthttp.StatusRequestEntityTooLarge, "body_too_large",
		"request body larger than "+strconv.FormatInt(limit, 10)+" bytes", "")
}
