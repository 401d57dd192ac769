package e2e

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

// BenchmarkClusterBalancer measures what a cluster of three gateways on
// one PostgreSQL behind HAProxy costs and how fast it routes around a
// loss: the same catalog reads (package_show) and model calls (hERG) with
// 16 connections straight to one gateway, through an HAProxy whose only
// server is that gateway (the balancer's own cost: overhead-%) and through
// the balancer of all three, in alternating rounds of the same run, and
// the time from a kill -9 of one
// gateway until the balancer marks it down (checks on /readyz every
// 250 ms, down after 2 failures).
func BenchmarkClusterBalancer(b *testing.B) {
	c := startCluster(b)
	g0 := c.gws[0]
	if code, out := ckan(b, g0, "organization_create", c.admin, map[string]any{"name": "bench-lab"}); code != 200 {
		b.Fatalf("organization_create: %d %v", code, out)
	}
	if code, out := ckan(b, g0, "package_create", c.admin, map[string]any{"name": "bench-read", "owner_org": "bench-lab"}); code != 200 {
		b.Fatalf("package_create: %d %v", code, out)
	}
	one := startBalancer(b, c.addrs[:1])
	one.waitState(b, "g0", "UP", time.Minute)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	const conns, perConn = 16, 200
	run := func(base, method, path, ct string, body []byte) time.Duration {
		var wg sync.WaitGroup
		start := time.Now()
		for w := 0; w < conns; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < perConn; i++ {
					if code, out := call(context.Background(), client, method, base, path, "", ct, body); code != 200 {
						b.Errorf("%s %s%s: %d %.200s", method, base, path, code, out)
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	kinds := []struct {
		name, method, path, ct string
		body                   []byte
	}{
		{"package_show", http.MethodGet, "/api/3/action/package_show?id=bench-read", "", nil},
		{"hERG", http.MethodPost, "/hERG/evaluate", "application/json", []byte(`{"smiles":"CCO"}`)},
	}
	for _, k := range kinds {
		var direct, proxied, balanced time.Duration
		for round := 0; round < 3; round++ { // alternate, so that all see the same machine
			direct += run(g0.URL, k.method, k.path, k.ct, k.body)
			proxied += run(one.URL, k.method, k.path, k.ct, k.body)
			balanced += run(c.lb.URL, k.method, k.path, k.ct, k.body)
		}
		n := float64(3 * conns * perConn)
		b.ReportMetric(float64(direct.Microseconds())/n, k.name+"-direct-µs/req")
		b.ReportMetric(float64(proxied.Microseconds())/n, k.name+"-haproxy1-µs/req")
		b.ReportMetric(float64(balanced.Microseconds())/n, k.name+"-haproxy3-µs/req")
		b.ReportMetric(100*(float64(proxied)/float64(direct)-1), k.name+"-overhead-%")
	}
	c.gws[2].Kill9()
	killed := time.Now()
	c.lb.waitState(b, "g2", "DOWN", time.Minute)
	b.ReportMetric(float64(time.Since(killed).Milliseconds()), "kill-to-down-ms")
}
