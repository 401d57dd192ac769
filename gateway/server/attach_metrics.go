package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/identityhttp"
)

// attachMetrics serves the Prometheus metrics: on the main address, or with
// metrics.addr only on that address; with metrics.token only to requests
// that carry it as a bearer token.
func (a *App) attachMetrics(context.Context) error {
	h := metricsAuth(a.cfg.Metrics.Token, a.metrics.Handler())
	if a.cfg.Metrics.Addr == "" {
		a.router.GET("/metrics", h)
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.Metrics.Addr)
	if err != nil {
		return fmt.Errorf("metrics.addr: %w", err)
	}
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) != "/metrics" || !ctx.IsGet() {
				httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "only GET /metrics is served here", "")
				return
			}
			h(ctx)
		},
		Name:         "toxgate-metrics",
		ReadTimeout:  a.cfg.Server.ReadTimeout,
		WriteTimeout: a.cfg.Server.WriteTimeout,
		IdleTimeout:  a.cfg.Server.IdleTimeout,
		Logger:       fasthttpLogger{a.log},
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, net.ErrClosed) {
			a.log.Error("metrics listener stopped", "err", err)
		}
	}()
	a.AddCloser("metrics listener", srv.ShutdownWithContext)
	a.log.Info("metrics served", "addr", ln.Addr().String(), "token", a.cfg.Metrics.Token != "")
	return nil
}

// metricsAuth lets a request through to next only if it carries token
// (Authorization: Bearer <token>, compared in constant time); an empty
// token lets every request through.
func metricsAuth(token string, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if token == "" {
		return next
	}
	want := []byte(token)
	return func(ctx *fasthttp.RequestCtx) {
		got := []byte(identityhttp.Credential(&ctx.Request.Header))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="toxgate metrics"`)
			httpcore.WriteError(ctx, fasthttp.StatusUnauthorized, "unauthorized", "metrics need the bearer token of metrics.token", "")
			return
		}
		next(ctx)
	}
}
