package server

import (
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/pprofhandler"

	"toxgate/gateway/httpcore"
)

// routes registers the core's own routes. Every path the gateway serves
// lies under one of httpcore.Prefixes (TestEveryRouteIsReserved).
func (a *App) routes(testRoutes bool) {
	r := a.router
	r.GET("/IsAlive", a.isAlive)
	r.HEAD("/IsAlive", a.isAlive)
	r.GET("/readyz", a.readyz)
	// CKAN's API version routes.
	version := func(v int) fasthttp.RequestHandler {
		body := []byte(`{"version": ` + strconv.Itoa(v) + `}`)
		return func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("application/json;charset=utf-8")
			ctx.SetBody(body)
		}
	}
	r.GET("/api", version(1))
	r.GET("/api/1", version(1))
	r.GET("/api/3", version(3))
	// CKAN actions: core actions (users, tokens) first, then plugins.
	for _, prefix := range []string{"/api/3/action/{name}", "/api/action/{name}"} {
		r.GET(prefix, a.action)
		r.POST(prefix, a.action)
	}
	if testRoutes {
		r.GET("/debug/pprof/{profile:*}", pprofhandler.PprofHandler)
		r.GET("/debug/routes", func(ctx *fasthttp.RequestCtx) {
			httpcore.WriteJSON(ctx, fasthttp.StatusOK, r.List())
		})
		r.GET("/debug/panic", func(*fasthttp.RequestCtx) { panic("test panic") })
		r.ANY("/debug/slow", func(ctx *fasthttp.RequestCtx) {
			ms, _ := strconv.Atoi(string(ctx.QueryArgs().Peek("ms")))
			time.Sleep(time.Duration(ms) * time.Millisecond)
			httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"slept_ms": ms, "body_bytes": len(ctx.PostBody())})
		})
	}
}
