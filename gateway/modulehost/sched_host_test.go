package modulehost

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/modulehost/modtest"
)

// loopEnv serves the faults module (endless loops) and example-units with
// the caller taken from the X-Caller header.
func loopEnv(t *testing.T, cfg Config) (*Host, func(caller, path, body string) (int, string)) {
	dir := t.TempDir()
	modtest.Install(t, "testdata/faults", dir, "faults")
	modtest.Install(t, "../../modules/example-units", dir, "example-units")
	cfg.ModulesDir, cfg.CacheDir = dir, compileCache
	h, err := New(context.Background(), cfg, quietLogger(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := router.New()
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		h.ServeModelAs(ctx, Caller{Key: string(ctx.Request.Header.Peek("X-Caller"))})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: r.Handler}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(); h.Close(context.Background()) })
	base := "http://" + ln.Addr().String()
	return h, func(caller, path, body string) (int, string) {
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
}

// floodLoops starts n endless-loop calls of caller A; the returned channel
// gets each one's status text and body.
func floodLoops(call func(caller, path, body string) (int, string), n int) (chan [2]string, *sync.WaitGroup) {
	var wg sync.WaitGroup
	statuses := make(chan [2]string, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := call("A", "/faults/loop", `{}`)
			statuses <- [2]string{http.StatusText(code), body}
		}()
	}
	return statuses, &wg
}

// One caller's endless loops take every run slot while it is alone; a
// second caller's calls to another model start at once (below its share)
// and are answered while the loops run.
func TestCallerLoopsLeaveOthersTheirShare(t *testing.T) {
	// A's calls wait as long as they must: six 1-second loops on two slots.
	h, call := loopEnv(t, Config{RunSlots: 2, QueueTimeout: time.Minute})
	statuses, wg := floodLoops(call, 6)
	eventually(t, "A's loops to take both run slots and queue the rest", func() bool {
		st := h.sched.callerStats("A")
		return st.Running == 2 && st.Queued >= 1
	})
	for i := 0; i < 5; i++ {
		if code, body := call("B", "/example/units/convert", `{"value":2,"from":"g/L","to":"mg/L"}`); code != 200 || !strings.Contains(body, `"value":2000`) {
			t.Fatalf("B's call while A loops: %d %s", code, body)
		}
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s[0] == http.StatusText(http.StatusTooManyRequests) {
			t.Errorf("A alone was refused a place: %s", s[1])
		}
	}
}

// With the hard cap modules.caller_running, one caller's endless loops
// take at most that many run slots: its further calls wait in its own
// queue and are refused with 429 past their wait, while another caller's
// calls to another model are answered.
func TestCallerRunningCapAcrossModules(t *testing.T) {
	h, call := loopEnv(t, Config{RunSlots: 4, CallerRunning: 1, CallerQueue: 8})
	statuses, wg := floodLoops(call, 6)
	eventually(t, "A's calls to queue behind its one running call", func() bool {
		st := h.sched.callerStats("A")
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
