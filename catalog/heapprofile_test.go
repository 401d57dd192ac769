package catalog

import (
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
)

// scaleHeapProfile names the file TestScaleHeapProfile writes.
var scaleHeapProfile = flag.String("scale-heap-profile", "", "file for TestScaleHeapProfile's heap profile (empty: the test is skipped)")

// TestScaleHeapProfile builds BenchmarkScale's read model at the first
// size of -scale and writes a heap profile while it is live, so that
// `go tool pprof -sample_index=inuse_space -top -cum` shows where each
// dataset's bytes go (catalog/README.md, "Memory per dataset"):
//
//	go test -run TestScaleHeapProfile ./catalog/ -args -scale=100000 -scale-heap-profile=/tmp/heap.prof
func TestScaleHeapProfile(t *testing.T) {
	if *scaleHeapProfile == "" {
		t.Skip("no -scale-heap-profile")
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.Split(*scaleSizes, ",")[0]))
	if err != nil || n <= 0 {
		t.Fatalf("bad -scale %q", *scaleSizes)
	}
	runtime.MemProfileRate = 4096
	base := heapInUse()
	rm := genModel(t, n)
	t.Logf("%d datasets: %.0f bytes per dataset", n, float64(heapInUse()-base)/float64(n))
	f, err := os.Create(*scaleHeapProfile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(rm)
}
