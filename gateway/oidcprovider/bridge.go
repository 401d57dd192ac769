package oidcprovider

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// maxResponseBytes bounds what op may write for one request (its answers
// are small JSON documents and redirects).
const maxResponseBytes = 1 << 20

// recorder is the http.ResponseWriter op writes into; serveHTTP copies it
// to the fasthttp response.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	over   bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.body.Len()+len(b) > maxResponseBytes {
		r.over = true
		return 0, fmt.Errorf("response larger than %d bytes", maxResponseBytes)
	}
	return r.body.Write(b)
}

// serveHTTP runs the net/http handler h for the fasthttp request in the
// same goroutine, with cctx (deadline, values) as the request's context.
func serveHTTP(ctx *fasthttp.RequestCtx, cctx context.Context, h http.Handler) error {
	var r http.Request
	if err := fasthttpadaptor.ConvertRequest(ctx, &r, true); err != nil {
		return fmt.Errorf("convert request: %w", err)
	}
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, r.WithContext(cctx))
	if rec.over {
		return fmt.Errorf("%s %s: response larger than %d bytes", r.Method, r.URL.Path, maxResponseBytes)
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	for k, vs := range rec.header {
		for _, v := range vs {
			ctx.Response.Header.Add(k, v)
		}
	}
	ctx.SetStatusCode(rec.status)
	ctx.SetBody(rec.body.Bytes())
	return nil
}
