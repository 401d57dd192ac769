package httpcore

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

var (
	hdrContentLength    = []byte("Content-Length")
	hdrTransferEncoding = []byte("Transfer-Encoding")
)

// AmbiguousFraming reports whether a request carries both Content-Length
// and Transfer-Encoding. fasthttp lets Transfer-Encoding win and keeps the
// connection open; a proxy in front may have framed the body by
// Content-Length instead, so the bytes after the body would be read as a
// second request that the proxy never saw (request smuggling). It reads the
// raw header block, because fasthttp drops Content-Length from the parsed
// header when Transfer-Encoding is present.
func AmbiguousFraming(h *fasthttp.RequestHeader) bool {
	raw := h.RawHeaders()
	var cl, te bool
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		key := line[:colon]
		switch {
		case bytes.EqualFold(key, hdrContentLength):
			cl = true
		case bytes.EqualFold(key, hdrTransferEncoding):
			te = true
		}
	}
	return cl && te
}

// RefuseAmbiguousFraming answers 400 and closes the connection for a
// request that carries both Content-Length and Transfer-Encoding (RFC 9112
// section 6.3: such a message ought to be handled as an error, and the
// connection closed after the answer), before any handler sees it.
func RefuseAmbiguousFraming() Middleware {
	return func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			if AmbiguousFraming(&ctx.Request.Header) {
				ctx.SetConnectionClose()
				WriteError(ctx, fasthttp.StatusBadRequest, "bad_request",
					"request carries both Content-Length and Transfer-Encoding", "")
				return
			}
			next(ctx)
		}
	}
}
