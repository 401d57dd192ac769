package catalog

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"toxgate/catalog/ckan"
	"toxgate/catalog/search"
)

// scaleSizes are the catalog sizes BenchmarkScale measures.
var scaleSizes = flag.String("scale", "10000,100000", "comma-separated catalog sizes for BenchmarkScale")

// genModel builds a read model of n generated datasets (generate.go's
// shapes: one organization per 500 datasets, Zipf tags, extras,
// resources, one in ten private), validated as package_create validates
// them, with no store.
func genModel(tb testing.TB, n int) *readModel {
	rm := newReadModel()
	nOrgs := max(3, n/500)
	orgs := make([]string, nOrgs)
	for i := range orgs {
		orgs[i] = fmt.Sprintf("gen-org-%03d", i+1)
		rm.putOrg(&Organization{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Name: orgs[i], Title: "Generated laboratory " + strconv.Itoa(i+1),
			State: StateActive, Created: now(), Rev: 1})
	}
	sys := Caller{Name: "generator", Sysadmin: true}
	rng := rand.New(rand.NewSource(1))
	tags := rand.NewZipf(rng, 1.2, 1, uint64(len(genTags)-1))
	at := now()
	for i := 1; i <= n; i++ {
		data := genDataset(rng, tags, i, orgs)
		in, verr := rm.buildDataset(sys, data, nil, at.Add(time.Duration(i)*time.Millisecond), true)
		if verr != nil {
			tb.Fatal(verr)
		}
		in.d.Rev = 1
		rm.putDataset(in.d)
	}
	return rm
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkScale measures the catalog at each size of -scale, in process:
// memory per dataset (everything, and the search index alone), the time to
// build the read model from decoded records (the in-memory part of a
// restart), package_search with q and two facets (p50/p99 at 16 callers,
// req/s at 64), package_show by name, and beside them a plain lookup of
// the same record in a Go map, all in the same run.
//
//	go test -run '^$' -bench Scale -benchtime 1x -timeout 60m ./catalog/ -args -scale=10000,100000
func BenchmarkScale(b *testing.B) {
	for _, f := range strings.Split(*scaleSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("bad -scale entry %q", f)
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				scaleRun(b, n)
			}
		})
	}
}

func scaleRun(b *testing.B, n int) {
	base := heapInUse()
	rm := genModel(b, n)
	total := heapInUse() - base
	// the index alone: rebuild it from the records and weigh it
	start := time.Now()
	ix := search.New()
	for _, d := range rm.datasets {
		doc := rm.docFor(d)
		ix.Put(doc)
	}
	build := time.Since(start)
	withTwo := heapInUse()
	runtime.KeepAlive(ix)
	ix = nil
	indexBytes := withTwo - heapInUse()
	// the index's snapshot: written, then read back (the index part of a
	// start from a snapshot, against index-build-s for one without)
	var snap bytes.Buffer
	start = time.Now()
	if err := rm.index.WriteSnapshot(&snap, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(start).Seconds(), "snap-write-s")
	b.ReportMetric(float64(snap.Len())/float64(n), "snap-B/dataset")
	start = time.Now()
	if _, _, err := search.ReadSnapshot(snap.Bytes(), func(id string) (any, bool) { return rm.datasets[id], true }); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(start).Seconds(), "snap-read-s")
	snap = bytes.Buffer{}
	// the records file: its base written, then read back into a fresh
	// read model (the records part of a start from it)
	recPath := filepath.Join(b.TempDir(), "catalog.records")
	start = time.Now()
	rf, err := rm.startRecords(recPath, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(start).Seconds(), "records-write-s")
	b.ReportMetric(float64(rf.base)/float64(n), "records-B/dataset")
	rf.close(rm)
	start = time.Now()
	fresh := newReadModel()
	fresh.deferIndex = true
	if _, err := fresh.restoreRecords(recPath, "bench", runtime.GOMAXPROCS(0)); err != nil || len(fresh.datasets) != n {
		b.Fatalf("records file read back: %v (%d datasets)", err, len(fresh.datasets))
	}
	b.ReportMetric(time.Since(start).Seconds(), "records-read-s")
	fresh = nil
	_ = os.Remove(recPath)
	b.ReportMetric(float64(total)/float64(n), "B/dataset")
	b.ReportMetric(float64(indexBytes)/float64(n), "index-B/dataset")
	b.ReportMetric(build.Seconds(), "index-build-s")

	s := &Service{st: rm}
	names := make([]string, 0, len(rm.datasets))
	for _, d := range rm.datasets {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	qs := []string{"hepatotoxicity", "herg assay", "doxorubicin kinetics", "human liver", "toxicology", "plasma clearance"}
	ctx := context.Background()
	searchOne := func(i int) {
		data := map[string]any{"q": qs[i%len(qs)], "facet.field": `["tags","organization"]`}
		res, err := packageSearch(ctx, s, &Request{Action: "package_search", Data: data, SiteURL: site})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ckan.Marshal(res); err != nil {
			b.Fatal(err)
		}
	}
	show := func(i int) {
		res, err := packageShow(ctx, s, &Request{Action: "package_show", Data: map[string]any{"id": names[i*7919%len(names)]}, SiteURL: site})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ckan.Marshal(res); err != nil {
			b.Fatal(err)
		}
	}
	lookup := func(i int) {
		var d *Dataset
		rm.view(func() { d = rm.datasets[rm.byName[names[i*7919%len(names)]]] })
		if d == nil {
			b.Fatal("missing")
		}
	}
	b.ReportMetric(cpuPer(200, searchOne), "search-cpu-ms")
	b.ReportMetric(cpuPer(2000, show), "show-cpu-ms")
	p50, p99, _ := loadRun(16, 2*time.Second, searchOne)
	_, _, rps := loadRun(64, 2*time.Second, searchOne)
	b.ReportMetric(float64(p50.Microseconds())/1000, "search-p50-ms@16")
	b.ReportMetric(float64(p99.Microseconds())/1000, "search-p99-ms@16")
	b.ReportMetric(rps, "search-req/s@64")
	_, _, rps = loadRun(32, 2*time.Second, show)
	b.ReportMetric(rps, "show-req/s@32")
	_, _, rps = loadRun(32, time.Second, lookup)
	b.ReportMetric(rps, "lookup-req/s@32")
	runtime.KeepAlive(rm)
}

// cpuPer is the process's CPU time per call of fn over n calls in a row
// (less sensitive than wall time to other work on the machine), in ms.
func cpuPer(n int, fn func(i int)) float64 {
	runtime.GC()
	before := cpuTime()
	for i := range n {
		fn(i)
	}
	return float64((cpuTime() - before).Microseconds()) / 1000 / float64(n)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadRun calls fn from conc goroutines for about dur and returns the
// p50 and p99 latency and the calls per second.
func loadRun(conc int, dur time.Duration, fn func(i int)) (p50, p99 time.Duration, rps float64) {
	var (
		mu   sync.Mutex
		lats []time.Duration
		next atomic.Int64
		wg   sync.WaitGroup
	)
	deadline := time.Now().Add(dur)
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t := time.Now()
				fn(int(next.Add(1)))
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	took := time.Since(start)
	slices.Sort(lats)
	if len(lats) == 0 {
		return 0, 0, 0
	}
	return lats[len(lats)/2], lats[len(lats)*99/100], float64(len(lats)) / took.Seconds()
}
