package e2e

import (
	"context"
	"net/http"
	"sort"
	"testing"
	"time"

	"toxgate/gateway/harness"
	"toxgate/gateway/loadgen"
)

// BenchmarkTokenCheckOverhead compares a catalog read (package_list) sent
// with a valid API token against the same read sent anonymously, 64
// connections, alternating, median of 3 rounds each. The metric
// overhead_% is how much slower the token read is (target: at most 10).
func BenchmarkTokenCheckOverhead(b *testing.B) {
	g := harness.Start(b, harness.WithEnv("TOXGATE_LOG_ACCESS=false"))
	tok := adminToken(b, g)
	url := g.URL + "/api/3/action/package_list"
	resp, _, err := g.Do(context.Background(), http.MethodGet, "/api/3/action/package_list", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	want := resp.StatusCode // 200 with the catalog plugin; the check runs either way
	anon := loadgen.Target{Method: http.MethodGet, URL: url, Want: want}
	withTok := loadgen.Target{Method: http.MethodGet, URL: url, Want: want, Header: map[string]string{"Authorization": tok}}
	opts := loadgen.Options{Conns: 64, Duration: 2 * time.Second, Warmup: 300 * time.Millisecond}
	var a, w []float64
	for b.Loop() {
		a, w = a[:0], w[:0]
		for round := 0; round < 3; round++ {
			for i, tg := range []loadgen.Target{anon, withTok} {
				r, err := loadgen.Run(context.Background(), tg, opts)
				if err != nil || r.Errors > 0 {
					b.Fatalf("load: %v %s", err, r.FirstErr)
				}
				if i == 0 {
					a = append(a, r.RPS)
				} else {
					w = append(w, r.RPS)
				}
			}
		}
	}
	ma, mw := median(a), median(w)
	b.ReportMetric(ma, "anon_req/s")
	b.ReportMetric(mw, "token_req/s")
	b.ReportMetric((ma/mw-1)*100, "overhead_%")
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
