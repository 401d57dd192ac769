package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"toxgate/gateway/harness"
	"toxgate/plugins/contract"
)

// loadGate is a FIFO the catalog plugin reads before it loads
// (contract.EnvLoadGate): the plugin stays loading until open releases it.
type loadGate string

func newLoadGate(t *testing.T) loadGate {
	t.Helper()
	p := filepath.Join(t.TempDir(), "load-gate")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	return loadGate(p)
}

func (g loadGate) env() harness.Option {
	return harness.WithEnv(contract.EnvLoadGate + "=" + string(g))
}

// open lets the plugin waiting at the gate load: opening the FIFO for
// writing waits for the plugin to open it for reading.
func (g loadGate) open(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(string(g), os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("open the load gate: %v", err)
	}
	_, _ = f.WriteString("go")
	_ = f.Close()
}

// answer is one reply of the gateway, decoded.
type answer struct {
	status     int
	retryAfter string
	body       map[string]any
	raw        string
}

func gwCall(t *testing.T, g *harness.Gateway, method, path, token string, data map[string]any) answer {
	t.Helper()
	h := http.Header{}
	var b []byte
	if data != nil {
		b, _ = json.Marshal(data)
		h.Set("Content-Type", "application/json")
	}
	if token != "" {
		h.Set("Authorization", token)
	}
	resp, body, err := g.Do(context.Background(), method, path, h, b)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return answer{}
	}
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), raw: string(body)}
	_ = json.Unmarshal(body, &a.body)
	return a
}

// isLoading reports whether a is the catalog's answer while it loads: a
// CKAN-shaped 503 with Retry-After.
func (a answer) isLoading() bool {
	e, _ := a.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return a.status == http.StatusServiceUnavailable && a.retryAfter != "" && a.body["success"] == false &&
		e["__type"] == "Service Unavailable" && strings.Contains(msg, "catalog is loading")
}

// The catalog plugin completes its handshake before it loads: the gateway
// listens and serves while the catalog is held at its load gate, /readyz
// says the catalog is loading, every catalog action answers a CKAN-shaped
// 503 with Retry-After (never an empty or wrong answer), and once the gate
// opens every answer is either that 503 or the right one until /readyz
// turns 200, after which the catalog answers in full.
func TestCatalogLoadsAfterTheHandshake(t *testing.T) {
	dir := t.TempDir()
	g := harness.Start(t, harness.WithDataDir(dir))
	admin := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": "tox-lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	for i := range 3 {
		if code, out := ckan(t, g, "package_create", admin, map[string]any{"name": fmt.Sprintf("load-%d", i), "owner_org": "tox-lab",
			"title": fmt.Sprintf("Loaded assay %d", i)}); code != 200 {
			t.Fatalf("package_create: %d %v", code, out)
		}
	}
	if code := g.Stop(); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}

	gate := newLoadGate(t)
	g = harness.Start(t, harness.WithDataDir(dir), harness.WithoutReadyWait(), gate.env())
	// the gateway listens while the catalog waits at its gate
	if a := gwCall(t, g, http.MethodGet, "/IsAlive", "", nil); a.status != 200 {
		t.Fatalf("/IsAlive while loading: %d %s", a.status, a.raw)
	}
	a := gwCall(t, g, http.MethodGet, "/readyz", "", nil)
	parts, _ := a.body["parts"].(map[string]any)
	if st, _ := parts["plugins"].(string); a.status != 503 || !strings.Contains(st, "plugin catalog is loading") {
		t.Fatalf("/readyz while loading: %d %s", a.status, a.raw)
	}
	if a := gwCall(t, g, http.MethodGet, "/admin/plugins", admin, nil); a.status != 200 || !strings.Contains(a.raw, `"loading":true`) {
		t.Fatalf("/admin/plugins while loading: %d %s", a.status, a.raw)
	}
	requests := []struct{ method, path, token string }{
		{http.MethodGet, "/api/3/action/package_show?id=load-1", ""},
		{http.MethodGet, "/api/3/action/package_search?q=assay", ""},
		{http.MethodGet, "/api/3/action/package_list", ""},
		{http.MethodGet, "/api/3/action/organization_show?id=tox-lab", admin},
		{http.MethodPost, "/api/3/action/package_create", admin},
	}
	for _, r := range requests {
		var data map[string]any
		if r.method == http.MethodPost {
			data = map[string]any{"name": "made-while-loading", "owner_org": "tox-lab"}
		}
		if a := gwCall(t, g, r.method, r.path, r.token, data); !a.isLoading() {
			t.Fatalf("%s %s while loading: %d Retry-After %q %s", r.method, r.path, a.status, a.retryAfter, a.raw)
		}
	}

	if a := gwCall(t, g, http.MethodGet, "/metrics", "", nil); !strings.Contains(a.raw, `toxgate_plugin_loading{plugin="catalog"} 1`) {
		t.Fatalf("/metrics while loading: no toxgate_plugin_loading 1")
	}
	// the catalog's web pages say so too (a 503, not an empty list or a 500)
	if a := gwCall(t, g, http.MethodGet, "/dataset", "", nil); a.status != http.StatusServiceUnavailable || !strings.Contains(a.raw, "catalog is loading") {
		t.Fatalf("/dataset while loading: %d %.300s", a.status, a.raw)
	}

	gate.open(t)
	// until /readyz is 200 an answer is the loading 503 or the right one
	waitUntil(t, 2*time.Minute, "/readyz 200 after the load", func() bool {
		a := gwCall(t, g, http.MethodGet, "/api/3/action/package_show?id=load-1", "", nil)
		if !a.isLoading() {
			res, _ := a.body["result"].(map[string]any)
			if a.status != 200 || res["title"] != "Loaded assay 1" {
				t.Fatalf("package_show during the load: %d %s", a.status, a.raw)
			}
		}
		return gwCall(t, g, http.MethodGet, "/readyz", "", nil).status == 200
	})
	if a := gwCall(t, g, http.MethodGet, "/metrics", "", nil); !strings.Contains(a.raw, `toxgate_plugin_loading{plugin="catalog"} 0`) ||
		!strings.Contains(a.raw, `toxgate_plugin_load_seconds{plugin="catalog"}`) {
		t.Fatalf("/metrics once loaded: no toxgate_plugin_loading 0 or toxgate_plugin_load_seconds")
	}
	if code, out := ckan(t, g, "package_search", "", map[string]any{"q": "assay"}); code != 200 || out["result"].(map[string]any)["count"] != 3.0 {
		t.Fatalf("package_search once loaded: %d %v", code, out)
	}
	if code, out := ckan(t, g, "package_create", admin, map[string]any{"name": "made-after-loading", "owner_org": "tox-lab"}); code != 200 {
		t.Fatalf("package_create once loaded: %d %v", code, out)
	}
}

// A hot reload keeps the old catalog process serving while the new one
// loads (held at its load gate), then swaps: readers and a writer that
// run throughout see no failure and no wrong answer.
func TestCatalogReloadServesWhileTheNewProcessLoads(t *testing.T) {
	gate := newLoadGate(t)
	g := harness.Start(t, harness.WithoutReadyWait(), gate.env())
	gate.open(t)
	waitUntil(t, 2*time.Minute, "/readyz 200", func() bool { return gwCall(t, g, http.MethodGet, "/readyz", "", nil).status == 200 })
	admin := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": "tox-lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	if code, out := ckan(t, g, "package_create", admin, map[string]any{"name": "reload-0", "owner_org": "tox-lab", "title": "Reloaded assay"}); code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}

	var (
		stop     atomic.Bool
		done     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 10 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	defer func() { // also when the test fails half-way
		stop.Store(true)
		wg.Wait()
	}()
	for w := range 3 {
		wg.Go(func() {
			for !stop.Load() {
				a := gwCall(t, g, http.MethodGet, "/api/3/action/package_show?id=reload-0", "", nil)
				res, _ := a.body["result"].(map[string]any)
				if a.status != 200 || res["name"] != "reload-0" {
					fail("reader %d: package_show: %d %s", w, a.status, a.raw)
				}
				done.Add(1)
			}
		})
	}
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			notes := fmt.Sprintf("patch %d", i)
			a := gwCall(t, g, http.MethodPost, "/api/3/action/package_patch", admin, map[string]any{"id": "reload-0", "notes": notes})
			res, _ := a.body["result"].(map[string]any)
			if a.status != 200 || res["notes"] != notes {
				fail("writer: package_patch: %d %s", a.status, a.raw)
			}
			done.Add(1)
		}
	})
	// progress counted in requests, not time: n more answers after now
	progress := func(what string, n int64) {
		target := done.Load() + n
		waitUntil(t, 2*time.Minute, what, func() bool { return done.Load() >= target })
	}
	progress("requests before the reload", 20)
	g.Signal(syscall.SIGHUP)
	waitUntil(t, 2*time.Minute, "the new process at its load gate", func() bool {
		return strings.Count(g.Logs(), "catalog load waits at its gate") == 2
	})
	progress("requests while the new process waits at its gate", 50)
	if a := gwCall(t, g, http.MethodGet, "/readyz", "", nil); a.status != 200 {
		t.Errorf("/readyz while the new process loads: %d %s", a.status, a.raw)
	}
	gate.open(t)
	waitUntil(t, 2*time.Minute, "the reload", func() bool { return strings.Contains(g.Logs(), "plugin reloaded") })
	progress("requests after the swap", 50)
	stop.Store(true)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d requests, failures:\n%s", done.Load(), strings.Join(failures, "\n"))
	}
	if code, out := ckan(t, g, "package_show", "", map[string]any{"id": "reload-0"}); code != 200 {
		t.Fatalf("package_show after the reload: %d %v", code, out)
	}
}
