package catalog

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
)

// scaleHeapProfile names the file BenchmarkScaleHeapProfile writes.
var scaleHeapProfile = flag.String("scale-heap-profile", "", "file for BenchmarkScaleHeapProfile's heap profile (empty: a temporary file)")

// BenchmarkScaleHeapProfile builds BenchmarkScale's read model at the
// first size of -scale, reports its live heap per dataset and writes a heap
// profile while it is live, so that `go tool pprof -sample_index=inuse_space
// -top -cum` shows where each dataset's bytes go (catalog/README.md,
// "Memory per dataset"):
//
//	go test -run '^$' -bench ScaleHeapProfile -benchtime 1x ./catalog/ -args -scale=100000 -scale-heap-profile=/tmp/heap.prof
func BenchmarkScaleHeapProfile(b *testing.B) {
	n, err := strconv.Atoi(strings.TrimSpace(strings.Split(*scaleSizes, ",")[0]))
	if err != nil || n <= 0 {
		b.Fatalf("bad -scale %q", *scaleSizes)
	}
	path := *scaleHeapProfile
	if path == "" {
		path = filepath.Join(b.TempDir(), "heap.prof")
	}
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 4096
	defer func() { runtime.MemProfileRate = rate }()
	for b.Loop() {
		base := heapInUse()
		rm := genModel(b, n)
		b.ReportMetric(float64(heapInUse()-base)/float64(n), "B/dataset")
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(rm)
	}
}
