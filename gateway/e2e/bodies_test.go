package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// rssBytes reads a process's resident set size.
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// openBody sends a request head declaring length bytes and the first sent
// bytes of the body, and returns the connection.
func openBody(t *testing.T, g *harness.Gateway, method, path string, header string, length, sent int) net.Conn {
	t.Helper()
	u, _ := url.Parse(g.URL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %d\r\n\r\n", method, path, u.Host, header, length)
	if _, err := c.Write([]byte(head + strings.Repeat("x", sent))); err != nil {
		t.Fatal(err)
	}
	return c
}

func readStatus(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, sb.String()
}

// A declared length costs nothing until the bytes arrive, and a large
// upload route answers an anonymous caller before reading its body.
func TestDeclaredBodiesDoNotReserveMemory(t *testing.T) {
	g := harness.Start(t)
	before := rssBytes(t, g.PID())
	// 40 anonymous module uploads declaring 67 MB each, sending 16 KB
	// (past the 8 KB the server reads with the head): refused at once.
	for i := 0; i < 40; i++ {
		c := openBody(t, g, "POST", "/admin/modules", "Content-Type: application/wasm\r\n", 67_000_000, 16<<10)
		resp, _ := readStatus(t, c)
		if resp.StatusCode != 401 || !resp.Close {
			t.Fatalf("anonymous module upload: %d, close %v", resp.StatusCode, resp.Close)
		}
	}
	// 100 connections declaring 8 MB on an ordinary route, sending 16 KB
	// and stalling: the gateway holds what arrived, not what was declared.
	conns := make([]net.Conn, 100)
	for i := range conns {
		conns[i] = openBody(t, g, "POST", "/api/3/action/package_create", "Content-Type: application/json\r\n", 8<<20, 16<<10)
	}
	waitFor(t, 30*time.Second, "the stalled bodies to be in use", func() bool {
		return metricValue(t, g, "toxgate_http_body_bytes_in_use") >= 100*(16<<10)
	})
	grown := rssBytes(t, g.PID()) - before
	t.Logf("gateway RSS grew by %d MiB with 40 refused 67 MB uploads and 100 stalled 8 MB bodies", grown>>20)
	if grown > 100<<20 {
		t.Fatalf("gateway RSS grew by %d MiB (declared lengths must not be reserved)", grown>>20)
	}
	for _, c := range conns {
		c.Close()
	}
	waitFor(t, 30*time.Second, "the bodies to be given back", func() bool {
		return metricValue(t, g, "toxgate_http_body_bytes_in_use") == 0
	})
}

// Past server.max_body_memory, a request gets 503 with Retry-After and is
// counted; the request that holds the memory still completes.
func TestBodyMemoryBudget(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_SERVER_MAX_BODY_MEMORY=1048576"))
	first := openBody(t, g, "POST", "/api/3/action/package_create", "Content-Type: application/json\r\n", 700<<10, 600<<10)
	waitFor(t, 30*time.Second, "the first body to hold its bytes", func() bool {
		return metricValue(t, g, "toxgate_http_body_bytes_in_use") >= 600<<10
	})
	second := openBody(t, g, "POST", "/api/3/action/package_create", "Content-Type: application/json\r\n", 500<<10, 500<<10)
	resp, body := readStatus(t, second)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "too many request bodies") {
		t.Fatalf("over the budget: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if _, err := first.Write([]byte(strings.Repeat("y", 100<<10))); err != nil {
		t.Fatal(err)
	}
	if resp, body := readStatus(t, first); resp.StatusCode != 400 || !strings.Contains(body, "JSON") {
		t.Fatalf("the body within the budget: %d %s", resp.StatusCode, body)
	}
	if metricValue(t, g, `toxgate_http_bodies_rejected_total{reason="memory"}`) < 1 {
		t.Fatal("the refusal is not counted")
	}
}

// metricValue reads one sample from /metrics (0 when absent).
func metricValue(t *testing.T, g *harness.Gateway, name string) float64 {
	t.Helper()
	resp, body := fetch(t, g, http.MethodGet, g.URL+"/metrics", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}
