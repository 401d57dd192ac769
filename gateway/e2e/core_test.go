package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

func get(t *testing.T, g *harness.Gateway, path string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	resp, body, err := g.Do(context.Background(), http.MethodGet, path, header, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp, body
}

func TestLivenessReadinessAndVersion(t *testing.T) {
	g := harness.Start(t)

	resp, body := get(t, g, "/IsAlive", nil)
	var alive struct {
		Alive   bool   `json:"alive"`
		Version string `json:"version"`
		Uptime  *int64 `json:"uptime_s"`
	}
	if err := json.Unmarshal(body, &alive); err != nil || resp.StatusCode != 200 {
		t.Fatalf("IsAlive: %d %s (%v)", resp.StatusCode, body, err)
	}
	if !alive.Alive || alive.Version == "" || alive.Uptime == nil {
		t.Fatalf("IsAlive body = %s", body)
	}
	if resp.Header.Get("X-Request-ID") == "" {
		t.Error("no X-Request-ID on the response")
	}

	head, _, err := g.Do(context.Background(), http.MethodHead, "/IsAlive", nil, nil)
	if err != nil || head.StatusCode != 200 {
		t.Fatalf("HEAD /IsAlive: %v %v", head, err)
	}

	resp, body = get(t, g, "/readyz", nil)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"store":"ok"`)) {
		t.Fatalf("readyz: %d %s", resp.StatusCode, body)
	}
	// which backends, and no peers on an embedded SQLite store of its own
	for _, want := range []string{`"store_backend":"sqlite"`, `"files_backend":"dir"`, `"peers":[]`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("readyz lacks %s: %s", want, body)
		}
	}
	if _, m := get(t, g, "/metrics", nil); !bytes.Contains(m, []byte(`toxgate_backend_info{backend="sqlite",part="store"} 1`)) || !bytes.Contains(m, []byte("toxgate_peers 0")) {
		t.Errorf("metrics lack the store backend or the peers gauge")
	}

	resp, body = get(t, g, "/api/3", nil)
	if resp.StatusCode != 200 || string(body) != `{"version": 3}` {
		t.Fatalf("/api/3: %d %s", resp.StatusCode, body)
	}
}

func TestRequestIDHonouredOrCreated(t *testing.T) {
	g := harness.Start(t)
	resp, _ := get(t, g, "/IsAlive", http.Header{"X-Request-ID": {"my-trace-42"}})
	if got := resp.Header.Get("X-Request-ID"); got != "my-trace-42" {
		t.Errorf("incoming request ID not honoured: %q", got)
	}
	a, _ := get(t, g, "/IsAlive", nil)
	b, _ := get(t, g, "/IsAlive", nil)
	if a.Header.Get("X-Request-ID") == b.Header.Get("X-Request-ID") {
		t.Error("two requests got the same generated ID")
	}
	// An ID with control characters is replaced, not echoed.
	resp, _ = get(t, g, "/IsAlive", http.Header{"X-Request-ID": {strings.Repeat("x", 500)}})
	if got := resp.Header.Get("X-Request-ID"); len(got) > 128 || got == "" {
		t.Errorf("oversized request ID echoed: %d chars", len(got))
	}
	if !g.WaitLog(regexp.MustCompile(`"request_id":"my-trace-42"`), 5*time.Second) {
		t.Error("access log does not carry the request ID")
	}
}

func TestLimits(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_SERVER_MAX_BODY_BYTES=1024", "TOXGATE_SERVER_MAX_HEADER_BYTES=2048"))

	// Oversized body: the server answers 413 as soon as it reads the
	// Content-Length, possibly before the client has written the body, so
	// the request is written on a raw connection and the answer read back.
	resp := rawRequest(t, g, "POST /debug/slow?ms=0 HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n"+strings.Repeat("a", 4096))
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: status %d, want 413 (%s)", resp.StatusCode, body)
	}
	if !bytes.Contains(body, []byte(`"code":"body_too_large"`)) {
		t.Errorf("413 body = %s", body)
	}

	// A body within the limit is accepted.
	resp, body, err := g.Do(context.Background(), http.MethodPost, "/debug/slow?ms=0", nil, bytes.Repeat([]byte("a"), 512))
	if err != nil || resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"body_bytes":512`)) {
		t.Fatalf("body within limit: %v %s %v", resp, body, err)
	}

	// Oversized header.
	resp = rawRequest(t, g, "GET /IsAlive HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("b", 4000)+"\r\n\r\n")
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("oversized header: status %d, want 431", resp.StatusCode)
	}
}

// rawRequest writes req on a new connection (in the background, so that a
// server answering early does not make the write fail the test) and reads
// the response.
func rawRequest(t *testing.T, g *harness.Gateway, req string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go conn.Write([]byte(req))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp
}

func TestPanicBecomes500AndServerStaysUp(t *testing.T) {
	g := harness.Start(t)
	resp, body := get(t, g, "/debug/panic", http.Header{"X-Request-ID": {"panic-req-1"}})
	if resp.StatusCode != 500 {
		t.Fatalf("panic: status %d", resp.StatusCode)
	}
	var e struct {
		Error struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != "internal" || e.Error.RequestID != "panic-req-1" {
		t.Fatalf("panic body = %s", body)
	}
	if !g.WaitLog(regexp.MustCompile(`"msg":"panic in handler".*"request_id":"panic-req-1"`), 5*time.Second) {
		t.Errorf("panic not logged with request ID; logs:\n%s", g.Logs())
	}
	if resp, _ := get(t, g, "/IsAlive", nil); resp.StatusCode != 200 {
		t.Fatal("gateway not serving after a panic")
	}
}

func TestMethodNotAllowedAndNotFound(t *testing.T) {
	g := harness.Start(t)
	resp, body, _ := g.Do(context.Background(), http.MethodDelete, "/IsAlive", nil, nil)
	if resp.StatusCode != 405 || !bytes.Contains(body, []byte("method_not_allowed")) {
		t.Errorf("DELETE /IsAlive: %d %s", resp.StatusCode, body)
	}
	resp, body = get(t, g, "/no/such/path", nil)
	if resp.StatusCode != 404 || !bytes.Contains(body, []byte(`"code":"not_found"`)) {
		t.Errorf("unknown path: %d %s", resp.StatusCode, body)
	}
}

func TestMetrics(t *testing.T) {
	g := harness.Start(t)
	for i := 0; i < 3; i++ {
		get(t, g, "/IsAlive", nil)
	}
	get(t, g, "/no/such/path", nil)
	_, body := get(t, g, "/metrics", nil)
	text := string(body)
	for _, want := range []string{
		`toxgate_http_requests_total{code="200",method="GET",route="/IsAlive"} 3`,
		`toxgate_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`toxgate_http_request_duration_seconds_bucket{method="GET",route="/IsAlive",le="+Inf"} 3`,
		`toxgate_http_requests_in_flight 1`,
		`toxgate_build_info{goversion=`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// inFlight reads toxgate_http_requests_in_flight from /metrics.
func inFlight(t *testing.T, g *harness.Gateway) int {
	_, body := get(t, g, "/metrics", nil)
	m := regexp.MustCompile(`(?m)^toxgate_http_requests_in_flight (\d+)`).FindSubmatch(body)
	if m == nil {
		t.Fatal("no in-flight gauge")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// SIGTERM lets a request in flight finish, refuses new connections, stops the
// store and exits 0.
func TestGracefulShutdownFinishesInFlightRequest(t *testing.T) {
	g := harness.Start(t)
	var wg sync.WaitGroup
	var status int
	var body []byte
	var reqErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		var resp *http.Response
		resp, body, reqErr = g.Do(context.Background(), http.MethodGet, "/debug/slow?ms=1500", nil, nil)
		if resp != nil {
			status = resp.StatusCode
		}
	}()
	// Wait until the slow request is being served (the /metrics call is the other one).
	deadline := time.Now().Add(10 * time.Second)
	for inFlight(t, g) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("slow request never became in-flight")
		}
	}
	g.Signal(syscall.SIGTERM)
	code := g.Wait(30 * time.Second)
	wg.Wait()
	if reqErr != nil || status != 200 || !bytes.Contains(body, []byte(`"slept_ms":1500`)) {
		t.Fatalf("in-flight request: status %d body %s err %v", status, body, reqErr)
	}
	if code != 0 {
		t.Fatalf("exit code %d, want 0; logs:\n%s", code, g.Logs())
	}
	if !strings.Contains(g.Logs(), `"msg":"store closed"`) {
		t.Error("store not closed at shutdown")
	}
	addr := strings.TrimPrefix(g.URL, "http://")
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("gateway still accepts connections after shutdown")
	}
}

func TestRestartKeepsStoreDirectory(t *testing.T) {
	g := harness.Start(t)
	g.Restart()
	if resp, body := get(t, g, "/readyz", nil); resp.StatusCode != 200 {
		t.Fatalf("readyz after restart: %d %s", resp.StatusCode, body)
	}
}

func TestBadConfigStopsStartWithKeyName(t *testing.T) {
	bins := harness.Build(t)
	cmd := exec.Command(bins.Gateway)
	cmd.Env = append(os.Environ(), "TOXGATE_CONFIG=", "TOXGATE_SERVER_READ_TIMEOUT=forever")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("gateway started with a bad value")
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	if !strings.Contains(string(out), "server.read_timeout") {
		t.Fatalf("error does not name the key: %s", out)
	}
}

// /readyz answers 503 naming the part that is not ready (here: a module file
// that is not a WebAssembly module), while /IsAlive keeps answering 200.
func TestReadinessNamesThePartNotReady(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.wasm"), []byte("not wasm at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+dir), harness.WithoutReadyWait())
	var resp *http.Response
	var body []byte
	// The modules and the catalog load in the background: wait until the
	// part names the file and the catalog has loaded (a 503 may first say
	// the modules or the catalog are still loading).
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, body = get(t, g, "/readyz", nil)
		if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), "broken.wasm") &&
			!strings.Contains(string(body), "is loading") || time.Now().After(deadline) {
			break
		}
	}
	var out struct {
		Ready    bool              `json:"ready"`
		NotReady []string          `json:"not_ready"`
		Parts    map[string]string `json:"parts"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("readyz body %s: %v", body, err)
	}
	if resp.StatusCode != 503 || out.Ready || len(out.NotReady) != 1 || out.NotReady[0] != "modules" || !strings.Contains(out.Parts["modules"], "broken.wasm") {
		t.Fatalf("readyz = %d %s, want 503 naming modules and the file", resp.StatusCode, body)
	}
	if out.Parts["store"] != "ok" || out.Parts["plugins"] != "ok" {
		t.Errorf("other parts: %v", out.Parts)
	}
	if resp, _ := get(t, g, "/IsAlive", nil); resp.StatusCode != 200 {
		t.Errorf("IsAlive while not ready: %d", resp.StatusCode)
	}
}
