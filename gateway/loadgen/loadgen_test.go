package loadgen

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func TestRunCountsRequestsAndErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/bad" {
			ctx.SetStatusCode(500)
		}
	}}
	go srv.Serve(ln)
	defer srv.Shutdown()
	base := "http://" + ln.Addr().String()

	res, err := Run(context.Background(), Target{URL: base + "/ok"}, Options{Conns: 4, Duration: 5 * time.Second, MaxRequests: 200, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 200 || res.Errors != 0 || res.RPS <= 0 || res.P50 > res.P99 {
		t.Fatalf("result = %+v", res)
	}
	res, err = Run(context.Background(), Target{URL: base + "/bad"}, Options{Conns: 2, MaxRequests: 10, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 10 {
		t.Fatalf("errors = %d, want 10", res.Errors)
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	if _, err := Run(context.Background(), Target{URL: "http://10.0.0.1/"}, Options{MaxRequests: 1}); err == nil {
		t.Fatal("non-loopback target accepted")
	}
}
