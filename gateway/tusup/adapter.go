package tusup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"
)

// serveHTTP runs the net/http handler h for a fasthttp request without
// reading the body into memory: the request's Body is the streamed body of
// the connection, and deadlines set through http.ResponseController reach
// the connection. The answer (headers and a small body) is copied back.
func serveHTTP(ctx *fasthttp.RequestCtx, rctx context.Context, h http.Handler) error {
	u, err := url.ParseRequestURI(string(ctx.RequestURI()))
	if err != nil {
		return err
	}
	r := (&http.Request{
		Method: string(ctx.Method()), URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header), Host: string(ctx.Host()), RemoteAddr: ctx.RemoteAddr().String(),
		RequestURI: string(ctx.RequestURI()), TLS: ctx.TLSConnectionState(),
	}).WithContext(rctx)
	for k, v := range ctx.Request.Header.All() {
		r.Header.Add(string(k), string(v))
	}
	r.ContentLength = int64(ctx.Request.Header.ContentLength())
	switch {
	case r.ContentLength == -1: // chunked
	case r.ContentLength < 0:
		r.ContentLength = 0
	}
	if s := ctx.RequestBodyStream(); s != nil {
		r.Body = io.NopCloser(s)
	} else {
		r.Body = io.NopCloser(bytes.NewReader(ctx.PostBody()))
	}
	w := &responseWriter{ctx: ctx, header: make(http.Header)}
	h.ServeHTTP(w, r)
	w.finish()
	return nil
}

// responseWriter is the http.ResponseWriter of serveHTTP. It implements
// SetReadDeadline and SetWriteDeadline for http.ResponseController, which
// tusd uses to time out idle bodies and to stop a body being read.
type responseWriter struct {
	ctx    *fasthttp.RequestCtx
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

// maxResponse bounds what a tus answer may write (they are a few bytes).
const maxResponse = 64 << 10

func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.body.Len()+len(p) > maxResponse {
		return 0, errors.New("tusup: response too large")
	}
	return w.body.Write(p)
}

// SetReadDeadline sets the connection's read deadline.
func (w *responseWriter) SetReadDeadline(t time.Time) error {
	if c := w.ctx.Conn(); c != nil {
		return c.SetReadDeadline(t)
	}
	return nil
}

// SetWriteDeadline sets the connection's write deadline.
func (w *responseWriter) SetWriteDeadline(t time.Time) error {
	if c := w.ctx.Conn(); c != nil {
		return c.SetWriteDeadline(t)
	}
	return nil
}

// FlushError does nothing: the answer is sent when the handler returns.
func (w *responseWriter) FlushError() error { return nil }

func (w *responseWriter) finish() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.ctx.SetStatusCode(w.status)
	for k, vs := range w.header {
		for i, v := range vs {
			if i == 0 {
				w.ctx.Response.Header.Set(k, v)
			} else {
				w.ctx.Response.Header.Add(k, v)
			}
		}
	}
	w.ctx.SetBody(w.body.Bytes())
}
