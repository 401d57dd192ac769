package httpcore

import (
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// isAliveLike answers as the gateway's /IsAlive does.
func isAliveLike(ctx *fasthttp.RequestCtx) {
	buf := make([]byte, 0, 96)
	buf = append(buf, `{"alive":true,"version":"bench","uptime_s":`...)
	buf = strconv.AppendInt(buf, 42, 10)
	buf = append(buf, '}')
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBody(buf)
}

// gatewayChain is the gateway's middleware chain (gateway/server
// App.Handler) around a router serving /IsAlive, with the access log
// written to io.Discard.
func gatewayChain(skip string) fasthttp.RequestHandler {
	r := router.New()
	r.SaveMatchedRoutePath = true
	r.GET("/IsAlive", isAliveLike)
	m := NewMetrics("bench")
	budget := NewBodyBudget(64 << 20)
	all := []struct {
		name string
		mw   Middleware
	}{
		{"requestid", RequestIDs()},
		{"accesslog", AccessLog(slog.New(NewAccessHandler(io.Discard, true, slog.LevelInfo)))},
		{"metrics", m.Middleware()},
		{"recover", Recover(slog.New(slog.NewTextHandler(io.Discard, nil)))},
		{"framing", RefuseAmbiguousFraming()},
		{"bodies", Bodies(func(*fasthttp.RequestCtx) BodyPolicy { return BodyPolicy{Limit: 1 << 20} }, budget, nil)},
	}
	var mws []Middleware
	for _, x := range all {
		if x.name != skip {
			mws = append(mws, x.mw)
		}
	}
	return Chain(r.Handler, mws...)
}

// BenchmarkIsAliveChain is the CPU one /IsAlive costs in the middleware
// chain (no network), beside the bare handler and the chain without each
// middleware in turn:
//
//	go test -run '^$' -bench IsAliveChain -benchmem ./gateway/httpcore/
func BenchmarkIsAliveChain(b *testing.B) {
	var req fasthttp.Request
	req.Header.SetMethod("GET")
	req.SetRequestURI("/IsAlive")
	req.Header.SetHost("127.0.0.1")
	req.Header.Set("User-Agent", "toxgate-bench")
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
	run := func(b *testing.B, h fasthttp.RequestHandler) {
		var ctx fasthttp.RequestCtx
		b.ReportAllocs()
		for b.Loop() {
			ctx.Init(&req, addr, nil)
			h(&ctx)
			if ctx.Response.StatusCode() != 200 {
				b.Fatal(ctx.Response.StatusCode())
			}
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, isAliveLike) })
	b.Run("chain", func(b *testing.B) { run(b, gatewayChain("")) })
	for _, skip := range []string{"requestid", "accesslog", "metrics", "recover", "framing", "bodies"} {
		b.Run("without-"+skip, func(b *testing.B) { run(b, gatewayChain(skip)) })
	}
}
