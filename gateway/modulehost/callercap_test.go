package modulehost

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/modulehost/modtest"
)

// One caller's endless loops take at most CallerRunning calls' worth of
// CPU: its further calls wait in its own queue and are refused with 429,
// while another caller's calls to another model are answered.
func TestCallerRunningCapAcrossModules(t *testing.T) {
	dir := t.TempDir()
	modtest.Install(t, "testdata/faults", dir, "faults")
	modtest.Install(t, "../../modules/example-units", dir, "example-units")
	h, err := New(context.Background(), Config{ModulesDir: dir, CacheDir: compileCache, CallerRunning: 1, CallerQueue: 8},
		quietLogger(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := router.New()
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		h.ServeModelAs(ctx, string(ctx.Request.Header.Peek("X-Caller")))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: r.Handler}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(); h.Close(context.Background()) })
	base := "http://" + ln.Addr().String()
	call := func(caller, path, body string) (int, string) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Caller", caller)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	// Caller A floods the loop route.
	var wg sync.WaitGroup
	statuses := make(chan [2]string, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := call("A", "/faults/loop", `{}`)
			statuses <- [2]string{http.StatusText(code), body}
		}()
	}
	eventually(t, "A's calls to queue behind its one running call", func() bool {
		h.callers.mu.Lock()
		defer h.callers.mu.Unlock()
		cg := h.callers.gates["A"]
		if cg == nil {
			return false
		}
		st := cg.g.stats()
		return st.Running == 1 && st.Queued >= 1
	})
	for i := 0; i < 5; i++ {
		if code, body := call("B", "/example/units/convert", `{"value":2,"from":"g/L","to":"mg/L"}`); code != 200 || !strings.Contains(body, `"value":2000`) {
			t.Fatalf("B's call while A loops: %d %s", code, body)
		}
	}
	wg.Wait()
	close(statuses)
	refused := 0
	for s := range statuses {
		if s[0] == http.StatusText(http.StatusTooManyRequests) && strings.Contains(s[1], "as many model calls at once as one caller may") {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("none of A's queued loop calls was refused past its wait")
	}
}
