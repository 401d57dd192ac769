package modulehost_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// rssMB reads a process's resident set size from /proc/<pid>/status.
func rssMB(b *testing.B, pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmRSS in /proc status")
	return 0
}

// BenchmarkIdleRSS starts the real gateway with every module `make build`
// made, loaded and ready, and reports its resident memory at rest beside the
// modules' total .wasm size, and the latency of the first hERG call (which
// compiles the parked module again from the on-disk cache) and the second.
// The baseline, same run: the same gateway with modules.idle_release -1s
// (every module kept compiled with a warm instance).
func BenchmarkIdleRSS(b *testing.B) {
	bins := harness.Build(b)
	files, _ := filepath.Glob(filepath.Join(bins.Modules, "*.wasm"))
	if len(files) == 0 {
		b.Skip("no modules built (make build)")
	}
	var wasmBytes int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			wasmBytes += st.Size()
		}
	}
	settle := func(g *harness.Gateway) float64 {
		// RSS at rest: the lowest of a few readings while nothing is called.
		low := rssMB(b, g.PID())
		for range 10 {
			time.Sleep(200 * time.Millisecond)
			low = min(low, rssMB(b, g.PID()))
		}
		return low
	}
	call := func(g *harness.Gateway) time.Duration {
		h := http.Header{"Content-Type": {"application/json"}}
		t0 := time.Now()
		resp, body, err := g.Do(context.Background(), http.MethodPost, "/hERG/evaluate", h, []byte(`{"smiles":"CCO"}`))
		d := time.Since(t0)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("hERG call: %v %v %.200s", err, resp, body)
		}
		return d
	}
	var idle, warm, first, second float64
	for range b.N {
		g, err := harness.Launch(bins, harness.WithAllModules(), harness.WithEnv("TOXGATE_MODULES_REQUIRE_TOKEN=false"))
		if err != nil {
			b.Fatal(err)
		}
		idle += settle(g)
		first += float64(call(g).Microseconds()) / 1000
		second += float64(call(g).Microseconds()) / 1000
		g.Close()
		g, err = harness.Launch(bins, harness.WithAllModules(), harness.WithEnv("TOXGATE_MODULES_REQUIRE_TOKEN=false", "TOXGATE_MODULES_IDLE_RELEASE=-1s"))
		if err != nil {
			b.Fatal(err)
		}
		warm += settle(g)
		g.Close()
	}
	n := float64(b.N)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(len(files)), "modules")
	b.ReportMetric(float64(wasmBytes)/(1<<20), "wasm-MB")
	b.ReportMetric(idle/n, "idle-RSS-MB")
	b.ReportMetric(warm/n, "all-warm-RSS-MB")
	b.ReportMetric(idle/warm, "idle/all-warm")
	b.ReportMetric(first/n, "first-call-ms")
	b.ReportMetric(second/n, "second-call-ms")
}
