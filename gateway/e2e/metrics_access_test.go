package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// metrics.token: /metrics answers only to the bearer token.
func TestMetricsNeedTheConfiguredToken(t *testing.T) {
	const tok = "scrape-token-0123456789"
	g := harness.Start(t, harness.WithEnv("TOXGATE_METRICS_TOKEN="+tok))
	for name, h := range map[string]http.Header{
		"no token":       nil,
		"wrong token":    bearer("scrape-token-0123456780"),
		"prefix":         bearer(tok[:10]),
		"admin API key":  {"Authorization": {adminToken(t, g)}},
		"token + suffix": bearer(tok + "x"),
	} {
		resp, body := get(t, g, "/metrics", h)
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: %d %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		if strings.Contains(string(body), "toxgate_build_info") {
			t.Errorf("%s: metrics served", name)
		}
	}
	resp, body := get(t, g, "/metrics", bearer(tok))
	if resp.StatusCode != 200 || !strings.Contains(string(body), "toxgate_build_info") {
		t.Fatalf("with the token: %d %.200s", resp.StatusCode, body)
	}
}

// metrics.addr: /metrics is served on that address only.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	g := harness.Start(t, harness.WithEnv("TOXGATE_METRICS_ADDR="+addr))
	if resp, body := get(t, g, "/metrics", nil); resp.StatusCode != http.StatusNotFound || strings.Contains(string(body), "toxgate_build_info") {
		t.Fatalf("/metrics on the main address: %d %.200s", resp.StatusCode, body)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics on %s: %v", addr, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(b.String(), "toxgate_build_info") {
		t.Fatalf("/metrics on %s: %d %.200s", addr, resp.StatusCode, b.String())
	}
	req, _ = http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+addr+"/IsAlive", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("other paths on the metrics address: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}
