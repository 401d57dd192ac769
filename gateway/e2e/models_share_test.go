package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// pooledClient keeps up to conns connections to the gateway open.
func pooledClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
}

// post sends one model call and returns its status (0 on a transport error).
func post(ctx context.Context, c *http.Client, url, body string, h http.Header) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return 0, err.Error()
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A caller alone with 16, then 64 concurrent connections to one model gets
// every call answered: the calls past the run slots wait, none is refused.
func TestModelLoneCallerWaitsInsteadOfFailing(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+modulesDir(t, "herg"), "TOXGATE_MODULES_REQUIRE_TOKEN=false"))
	body := smilesBatch(8)
	for _, conns := range []int{16, 64} {
		t.Run(fmt.Sprintf("%d connections", conns), func(t *testing.T) {
			c := pooledClient(conns)
			defer c.CloseIdleConnections()
			perConn := max(4, 512/conns)
			var ok, failed atomic.Int64
			var first sync.Once
			var firstErr string
			var wg sync.WaitGroup
			for range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range perConn {
						code, out := post(context.Background(), c, g.URL+"/hERG/evaluate", body, nil)
						if code == 200 {
							ok.Add(1)
							continue
						}
						failed.Add(1)
						first.Do(func() { firstErr = fmt.Sprintf("%d %.300s", code, out) })
					}
				}()
			}
			wg.Wait()
			if failed.Load() > 0 {
				t.Fatalf("%d of %d calls failed; first: %s", failed.Load(), int64(conns*perConn), firstErr)
			}
			t.Logf("%d calls over %d connections, all 200", ok.Load(), conns)
		})
	}
}

// Two callers with 16 connections each to the same model complete calls in
// shares within 20% of each other (counted over a fixed number of
// completions once both are under way, not over time).
func TestModelSharesBetweenTwoBusyCallers(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+modulesDir(t, "herg")))
	admin := adminToken(t, g)
	provision(t, g, admin, "alice", "alice-password-1", true, "models")
	provision(t, g, admin, "bob", "bob-password-1", true, "models")
	callers := []http.Header{bearer(tokenFor(t, g, admin, "alice", nil)), bearer(tokenFor(t, g, admin, "bob", nil))}
	// Calls of 50 SMILES: the model's work, not HTTP, is what the two
	// callers contend for (both keep every run slot busy).
	const conns, warmup, window = 16, 32, 800
	body := smilesBatch(50)
	c := pooledClient(2 * conns)
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var total [2]atomic.Int64   // completions since the start
	var counted [2]atomic.Int64 // completions in the window
	var inWindow, windowTotal atomic.Int64
	var wg sync.WaitGroup
	for i, h := range callers {
		for range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					code, out := post(ctx, c, g.URL+"/hERG/evaluate", body, h)
					if ctx.Err() != nil {
						return
					}
					if code != 200 {
						t.Errorf("caller %d: %d %.300s", i, code, out)
						cancel()
						return
					}
					total[i].Add(1)
					if inWindow.Load() == 0 {
						if total[0].Load() >= warmup && total[1].Load() >= warmup {
							inWindow.Store(1)
						}
						continue
					}
					counted[i].Add(1)
					if windowTotal.Add(1) >= window {
						cancel()
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	a, b := counted[0].Load(), counted[1].Load()
	if a+b < window {
		t.Fatalf("the window did not fill: %d + %d completions", a, b)
	}
	if lo, hi := min(a, b), max(a, b); float64(hi-lo) > 0.2*float64(hi) {
		t.Fatalf("shares of %d completions: alice %d, bob %d; want within 20%%", a+b, a, b)
	}
	t.Logf("shares of %d completions: alice %d, bob %d", a+b, a, b)
}
