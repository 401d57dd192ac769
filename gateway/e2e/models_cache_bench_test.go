package e2e

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"toxgate/gateway/harness"
	"toxgate/gateway/loadgen"
)

// distinctSMILES is n distinct SMILES of the RDKit reference set
// (sdk/chem/testdata, Tox21 structures), each as a one-SMILES hERG body.
func distinctSMILES(tb testing.TB, n int) [][]byte {
	tb.Helper()
	f, err := os.Open(filepath.Join(harness.RepoRoot(), "sdk", "chem", "testdata", "rdkit_descriptors_tox21_3000.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[string]bool{}
	var out [][]byte
	for _, r := range rows[1:] {
		if len(out) == n {
			break
		}
		if seen[r[0]] {
			continue
		}
		seen[r[0]] = true
		b, _ := json.Marshal(map[string]string{"smiles": r[0]})
		out = append(out, b)
	}
	return out
}

// BenchmarkModelResponseCache: one caller with 16 connections sends
// /hERG/evaluate one SMILES per call, cycling through the same 500
// distinct structures, on a gateway with the response cache (default
// config) and on one without (modules.response_cache_bytes 0), in
// alternating rounds; it reports both rates (median of the rounds) and
// their ratio:
//
//	TOXGATE_BIN_DIR=$PWD/bin go test -run '^$' -bench ModelResponseCache -benchtime 1x ./gateway/server/
func BenchmarkModelResponseCache(b *testing.B) {
	bodies := distinctSMILES(b, 500)
	start := func(env ...string) *harness.Gateway {
		return harness.Start(b, harness.WithLogSink(discardWriter{}),
			harness.WithEnv(append([]string{"TOXGATE_MODULES_DIR=" + modulesOnly(b, "herg"), "TOXGATE_MODULES_REQUIRE_TOKEN=false",
				"TOXGATE_CATALOG_PUBLISH_MODELS=false"}, env...)...))
	}
	cached, uncached := start(), start("TOXGATE_MODULES_RESPONSE_CACHE_BYTES=0")
	target := func(g *harness.Gateway) loadgen.Target {
		return loadgen.Target{Method: "POST", URL: g.URL + "/hERG/evaluate",
			Header: map[string]string{"Content-Type": "application/json"}, Bodies: bodies}
	}
	opts := loadgen.Options{Conns: 16, Duration: 3 * time.Second, Warmup: time.Second}
	ctx := context.Background()
	var on, off []float64
	for b.Loop() {
		for round := 0; round < 3; round++ {
			for _, c := range []struct {
				g   *harness.Gateway
				out *[]float64
			}{{uncached, &off}, {cached, &on}} {
				r, err := loadgen.Run(ctx, target(c.g), opts)
				if err != nil || r.Errors > 0 {
					b.Fatalf("%v: %d errors (%s)", err, r.Errors, r.FirstErr)
				}
				*c.out = append(*c.out, r.RPS)
			}
		}
	}
	med := func(x []float64) float64 { sort.Float64s(x); return x[len(x)/2] }
	b.ReportMetric(med(on), "cached-req/s")
	b.ReportMetric(med(off), "uncached-req/s")
	b.ReportMetric(med(on)/med(off), "ratio")
	fmt.Printf("hERG, 500 distinct SMILES repeated, 16 connections: cached %.0f req/s, uncached %.0f req/s, ratio %.1fx\n", med(on), med(off), med(on)/med(off))
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// modulesOnly is a fresh folder holding the named modules.
func modulesOnly(tb testing.TB, names ...string) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "modules")
	copyModules(tb, dir, names...)
	return dir
}
