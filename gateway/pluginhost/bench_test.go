package pluginhost

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/catalog"
	"toxgate/plugins/contract"
)

// BenchmarkTransport measures one plugin RPC round trip (an action the
// plugin rejects without touching the store) over gRPC and net/rpc.
func BenchmarkTransport(b *testing.B) {
	for _, tr := range []string{contract.TransportGRPC, contract.TransportNetRPC} {
		b.Run(tr, func(b *testing.B) {
			h, err := New(Config{Plugins: []PluginConfig{{Name: "catalog", Path: pluginBin}}, MongoURI: mongoURI,
				MongoDatabase: "bench_transport", Transport: tr, Settings: testSettings()}, quiet, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer h.Close(context.Background())
			m := h.plugins[0]
			req := &contract.Request{Action: "no_such_action", Method: "POST", ContentType: "application/json", Body: []byte(`{"id":"x"}`)}
			b.Run("serial", func(b *testing.B) {
				for b.Loop() {
					if _, err := h.call(context.Background(), m, req); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("parallel", func(b *testing.B) {
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := h.call(context.Background(), m, req); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		})
	}
}

// benchTransport picks the plugin transport of the HTTP benchmarks.
var benchTransport = flag.String("transport", contract.TransportNetRPC, "plugin transport for the HTTP benchmarks: grpc or netrpc")

// benchPluginProfile, when set, makes the plugin write a CPU profile of
// the measured part of each HTTP benchmark to this file (the last run wins).
var benchPluginProfile = flag.String("plugin-cpuprofile", "", "write the catalog plugin's CPU profile of the measured part to this file")

// benchHostProfile, when set, writes this process's CPU profile of the
// measured part of each HTTP benchmark (gateway path, load-generating
// clients and the embedded store) to this file (the last run wins).
var benchHostProfile = flag.String("host-cpuprofile", "", "write this process's CPU profile of the measured part to this file")

// benchCreateClients is the number of concurrent clients per CPU of
// BenchmarkPackageCreate.
var benchCreateClients = flag.Int("create-clients", 4, "concurrent clients per CPU in BenchmarkPackageCreate")

// benchCatalogEnv is one more KEY=value for the catalog plugin of the HTTP
// benchmarks, e.g. TOXGATE_CATALOG_CPUPROFILE=/tmp/cpu.out.
var benchCatalogEnv = flag.String("catalog-env", "", "KEY=value added to the catalog plugin's environment")

// benchConcurrentWrites sets catalog.concurrent_writes in the plugin
// settings of the HTTP benchmarks.
var benchConcurrentWrites = flag.Bool("concurrent-writes", false, "catalog.concurrent_writes of the catalog plugin")

// benchShowSlow makes BenchmarkReloadUnderWrites print each read slower
// than this that overlapped a reload, with its offset from the reload's start.
var benchShowSlow = flag.Duration("show-slow", 0, "print reads during reloads slower than this")

var (
	seedOnce sync.Once
	seedDB   string
	seedErr  error
)

const seedCount = 10000

// seed10k writes 10,000 generated datasets straight into a database once
// per run (the catalog loads them at start).
func seed10k(b *testing.B) string {
	seedOnce.Do(func() {
		seedDB = fmt.Sprintf("bench_%d", time.Now().UnixNano())
		ctx := context.Background()
		st, err := openDB(ctx, seedDB)
		if err != nil {
			seedErr = err
			return
		}
		defer st.Close(ctx)
		// the change marker as after 100 writes: it lists the last 64
		// changes, and every request's freshness check reads it
		var recent []map[string]any
		for i := 37; i <= 100; i++ {
			recent = append(recent, map[string]any{"seq": int64(i), "k": "dataset", "id": fmt.Sprintf("10000000-0000-4000-8000-%012d", i)})
		}
		if _, err := st.DB().Collection(catalog.CollChanges).InsertOne(ctx, map[string]any{"_id": "catalog", "seq": int64(100), "recent": recent}); err != nil {
			seedErr = err
			return
		}
		orgs := []string{"liver-lab", "heart-lab", "kidney-lab", "neuro-lab"}
		var orgDocs []any
		for i, o := range orgs {
			orgDocs = append(orgDocs, catalog.Organization{ID: fmt.Sprintf("00000000-0000-4000-8000-0000000000%02d", i), Name: o, Title: o, State: "active", Created: time.Now(), Rev: 1})
		}
		if _, err := st.DB().Collection(catalog.CollOrganizations).InsertMany(ctx, orgDocs); err != nil {
			seedErr = err
			return
		}
		words := []string{"hepatotoxicity", "cardiotoxicity", "herg", "ahr", "pbpk", "doxorubicin", "bisphenol", "assay", "rat", "human", "in vitro", "in vivo", "kinetics", "lipidomics", "proteomics"}
		formats := []string{"CSV", "JSON", "XLSX", "PDF"}
		var docs []any
		now := time.Now().UTC().Truncate(time.Millisecond)
		for i := range seedCount {
			notes := fmt.Sprintf("Study %d of %s and %s in %s", i, words[i%len(words)], words[(i/3)%len(words)], words[(i/7)%len(words)])
			name := fmt.Sprintf("dataset-%05d", i)
			rn := "results " + words[i%len(words)]
			docs = append(docs, catalog.Dataset{
				ID: fmt.Sprintf("10000000-0000-4000-8000-%012d", i), Name: name, Title: fmt.Sprintf("%s study %d", words[(i/2)%len(words)], i),
				Notes: &notes, OwnerOrg: orgDocs[i%len(orgs)].(catalog.Organization).ID, State: "active", Type: "dataset",
				MetadataCreated: now, MetadataModified: now.Add(time.Duration(i) * time.Millisecond),
				Tags:      []string{words[i%len(words)], words[(i+5)%len(words)]},
				Resources: []catalog.Resource{{ID: fmt.Sprintf("20000000-0000-4000-8000-%012d", i), URL: "http://example.org/" + name + ".csv", Name: &rn, Format: formats[i%len(formats)], State: "active"}},
				Rev:       1,
			})
			if len(docs) == 1000 {
				if _, err := st.DB().Collection(catalog.CollDatasets).InsertMany(ctx, docs); err != nil {
					seedErr = err
					return
				}
				docs = docs[:0]
			}
		}
	})
	if seedErr != nil {
		b.Fatal(seedErr)
	}
	return seedDB
}

// benchEnv is a host on the seeded database behind a fasthttp server.
func benchEnv(b *testing.B) (*env, *fasthttp.Client) {
	db := seed10k(b)
	e := newEnvTB(b, nil, envOpts{dbName: db, cfg: func(c *Config) {
		c.Transport = *benchTransport
		c.Settings.Catalog.ConcurrentWrites = *benchConcurrentWrites
		// as a gateway's default: an index snapshot and a records file
		c.Settings.Catalog.IndexSnapshot = filepath.Join(b.TempDir(), "catalog-index.snap")
		if *benchCatalogEnv != "" {
			c.Env = append(c.Env, *benchCatalogEnv)
		}
		if *benchPluginProfile != "" {
			c.Env = append(c.Env, "TOXGATE_CATALOG_CPUPROFILE="+*benchPluginProfile)
		}
	}})
	return e, &fasthttp.Client{MaxConnsPerHost: 512}
}

// cpuTime is the user+system CPU time of process pid (0: this process),
// from /proc.
func cpuTime(pid int) time.Duration {
	path := "/proc/self/stat"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/stat", pid)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	// fields after the command name in parentheses: utime and stime are
	// the 14th and 15th fields overall
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// hit sends GET path and checks for 200.
func hit(b *testing.B, c *fasthttp.Client, u string) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(u)
	if err := c.Do(req, resp); err != nil {
		b.Error(err)
		return
	}
	if resp.StatusCode() != 200 {
		b.Errorf("%s: %d %s", u, resp.StatusCode(), resp.Body())
	}
}

// runHTTP measures requests built by path(i) with 32 concurrent clients,
// reporting req/s and latency percentiles.
func runHTTP(b *testing.B, path func(i int) string) { runHTTPClients(b, 32, path) }

// runHTTPClients is runHTTP with about clients concurrent clients (a
// multiple of GOMAXPROCS).
func runHTTPClients(b *testing.B, clients int, path func(i int) string) {
	e, c := benchEnv(b)
	var mu sync.Mutex
	var lat []time.Duration
	var n int64
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	pid := e.pid()
	profiling := *benchPluginProfile != "" && pid != 0
	if profiling {
		_ = syscall.Kill(pid, syscall.SIGUSR1) // start
	}
	if *benchHostProfile != "" {
		if f, err := os.Create(*benchHostProfile); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	pluginCPU0, hostCPU0 := cpuTime(pid), cpuTime(0)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var local []time.Duration
		i := 0
		for pb.Next() {
			t0 := time.Now()
			hit(b, c, e.url+path(i))
			local = append(local, time.Since(t0))
			i += 7
		}
		mu.Lock()
		lat = append(lat, local...)
		n += int64(len(local))
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	pluginCPU, hostCPU := cpuTime(pid)-pluginCPU0, cpuTime(0)-hostCPU0
	if profiling {
		_ = syscall.Kill(pid, syscall.SIGUSR1) // stop and write
		time.Sleep(200 * time.Millisecond)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(n)/elapsed.Seconds(), "req/s")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		// CPU per request: in the plugin process, and in this process
		// (gateway path and the load-generating clients together); /proc
		// counts in 10 ms ticks, so short runs are coarse.
		b.ReportMetric(float64(pluginCPU.Microseconds())/float64(n), "plugin-cpu-us/req")
		b.ReportMetric(float64(hostCPU.Microseconds())/float64(n), "host+client-cpu-us/req")
	}
}

func BenchmarkPackageShowByName(b *testing.B) {
	runHTTP(b, func(i int) string { return fmt.Sprintf("/api/3/action/package_show?id=dataset-%05d", i%seedCount) })
}

func BenchmarkPackageShowByID(b *testing.B) {
	runHTTP(b, func(i int) string {
		return fmt.Sprintf("/api/3/action/package_show?id=10000000-0000-4000-8000-%012d", i%seedCount)
	})
}

// searchPath is package_search with q plus two facets.
func searchPath(i int) string {
	qs := []string{"hepatotoxicity", "herg assay", "doxorubicin kinetics", "human in vitro"}
	v := url.Values{"q": {qs[i%len(qs)]}, "facet.field": {`["tags","organization"]`}}
	return "/api/3/action/package_search?" + v.Encode()
}

func BenchmarkPackageSearch(b *testing.B) { runHTTP(b, searchPath) }

// BenchmarkPackageSearch64 is BenchmarkPackageSearch with 64 concurrent
// clients, as in the catalog's target (p50 within 20 ms).
func BenchmarkPackageSearch64(b *testing.B) { runHTTPClients(b, 64, searchPath) }

// variedSearches are package_search requests of other shapes than
// searchPath's: no q, filters, other sorts, deeper pages, more rows.
var variedSearches = []url.Values{
	{"facet.field": {`["tags","organization","res_format"]`}},
	{"q": {"assay"}, "fq": {"tags:rat"}, "facet.field": {`["tags"]`}},
	{"q": {"pbpk kinetics rat"}, "sort": {"metadata_modified desc"}},
	{"fq": {"organization:heart-lab"}, "sort": {"name asc"}, "rows": {"20"}},
	{"q": {"bisphenol"}, "start": {"100"}, "facet.field": {`["organization"]`}},
	{"q": {"title:herg"}, "facet.field": {`["tags","organization"]`}},
	{"q": {"lipidomics OR proteomics"}, "rows": {"50"}},
	{"q": {"study 4242"}},
}

// BenchmarkPackageSearchVaried64 is BenchmarkPackageSearch64 over
// variedSearches, for a figure beyond the four measured queries.
func BenchmarkPackageSearchVaried64(b *testing.B) {
	runHTTPClients(b, 64, func(i int) string {
		return "/api/3/action/package_search?" + variedSearches[i%len(variedSearches)].Encode()
	})
}

func BenchmarkPackageList(b *testing.B) {
	runHTTP(b, func(int) string { return "/api/3/action/package_list" })
}

// BenchmarkPackageCreate creates datasets through HTTP as a sysadmin, on top
// of the 10,000 seeded ones.
func BenchmarkPackageCreate(b *testing.B) {
	e, c := benchEnv(b)
	var seq int64
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(*benchCreateClients)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		var local []time.Duration
		defer func() { mu.Lock(); lat = append(lat, local...); mu.Unlock() }()
		for pb.Next() {
			t0 := time.Now()
			mu.Lock()
			seq++
			n := seq
			mu.Unlock()
			req.Reset()
			req.SetRequestURI(e.url + "/api/action/package_create")
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			req.Header.Set("Authorization", "tok-sysadmin")
			req.SetBodyString(fmt.Sprintf(`{"name":"created-%d-%d","owner_org":"liver-lab","notes":"benchmark","tags":[{"name":"bench"}]}`, time.Now().UnixNano(), n))
			if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 {
				b.Errorf("create: %v %d %s", err, resp.StatusCode(), resp.Body())
				return
			}
			local = append(local, time.Since(t0))
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkPackageSearchSerial sends one package_search (q plus two facets)
// at a time, for the latency a single client sees.
func BenchmarkPackageSearchSerial(b *testing.B) {
	e, c := benchEnv(b)
	qs := []string{"hepatotoxicity", "herg assay", "doxorubicin kinetics", "human in vitro"}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		v := url.Values{"q": {qs[i%len(qs)]}, "facet.field": {`["tags","organization"]`}}
		i++
		t0 := time.Now()
		hit(b, c, e.url+"/api/3/action/package_search?"+v.Encode())
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// post sends a POST of body to action as the sysadmin and returns the
// status and the time it took.
func post(c *fasthttp.Client, base, action, body string) (int, []byte, time.Duration, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(base + "/api/3/action/" + action)
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/json")
	req.Header.Set("Authorization", "tok-sysadmin")
	req.SetBodyString(body)
	t0 := time.Now()
	err := c.Do(req, resp)
	return resp.StatusCode(), append([]byte(nil), resp.Body()...), time.Since(t0), err
}

// timed is one request's start and duration.
type timed struct {
	at  time.Time
	dur time.Duration
}

// latencyStats is the maximum and the 99th percentile of ds (ms).
func latencyStats(ds []time.Duration) (maxMS, p99MS float64) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)-1].Microseconds()) / 1000, float64(s[len(s)*99/100].Microseconds()) / 1000
}

// startProfiles starts the CPU profiles asked for by -plugin-cpuprofile
// (of process pid) and -host-cpuprofile; the returned function writes them.
func startProfiles(pid int) func() {
	profiling := *benchPluginProfile != "" && pid != 0
	if profiling {
		_ = syscall.Kill(pid, syscall.SIGUSR1) // start
	}
	var f *os.File
	if *benchHostProfile != "" {
		if g, err := os.Create(*benchHostProfile); err == nil && pprof.StartCPUProfile(g) == nil {
			f = g
		}
	}
	return func() {
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
		}
		if profiling {
			_ = syscall.Kill(pid, syscall.SIGUSR1) // stop and write
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// BenchmarkReloadUnderWrites hot-reloads the catalog plugin (b.N times) on
// 10,000 datasets while 4 clients patch datasets and 8 clients read them
// (package_show), and reports the slowest read and write that overlapped a
// reload (from the reload's start to 1 s after it returned) beside the
// slowest of a window of the same load without a reload, measured first.
// Target: no catalog request slower than 100 ms during a reload.
func BenchmarkReloadUnderWrites(b *testing.B) {
	e, c := benchEnv(b)
	var (
		mu            sync.Mutex
		reads, writes []timed
		stop          = make(chan struct{})
		wg            sync.WaitGroup
		failed        atomic.Int64
		firstFailure  atomic.Value
	)
	fail := func(what string) {
		if failed.Add(1) == 1 {
			firstFailure.Store(what)
		}
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i += 4 {
				select {
				case <-stop:
					return
				default:
				}
				at := time.Now()
				code, body, d, err := post(c, e.url, "package_patch",
					fmt.Sprintf(`{"id":"dataset-%05d","notes":"patched at %d"}`, (i*7919)%seedCount, at.UnixNano()))
				if err != nil || code != 200 {
					fail(fmt.Sprintf("patch: %v %d %.200s", err, code, body))
					continue
				}
				mu.Lock()
				writes = append(writes, timed{at, d})
				mu.Unlock()
			}
		}()
	}
	for r := 0; r < 8; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for i := r; ; i += 8 {
				select {
				case <-stop:
					return
				default:
				}
				req.SetRequestURI(fmt.Sprintf("%s/api/3/action/package_show?id=dataset-%05d", e.url, (i*104729)%seedCount))
				at := time.Now()
				err := c.Do(req, resp)
				d := time.Since(at)
				if err != nil || resp.StatusCode() != 200 {
					fail(fmt.Sprintf("show: %v %d %.200s", err, resp.StatusCode(), resp.Body()))
					continue
				}
				mu.Lock()
				reads = append(reads, timed{at, d})
				mu.Unlock()
			}
		}()
	}
	window := func(from, to time.Time) (r, w []time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		for _, x := range reads {
			if x.at.Before(to) && x.at.Add(x.dur).After(from) {
				r = append(r, x.dur)
			}
		}
		for _, x := range writes {
			if x.at.Before(to) && x.at.Add(x.dur).After(from) {
				w = append(w, x.dur)
			}
		}
		return r, w
	}
	const after = time.Second
	// the baseline: the same load, no reload, for as long as a reload window
	time.Sleep(500 * time.Millisecond)
	ctx := context.Background()
	b.ResetTimer()
	var reloadWindows [][2]time.Time
	var reloadTook []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := e.host.Reload(ctx, "catalog"); err != nil {
			b.Fatal(err)
		}
		reloadTook = append(reloadTook, time.Since(t0))
		time.Sleep(after)
		reloadWindows = append(reloadWindows, [2]time.Time{t0, time.Now()})
	}
	b.StopTimer()
	// the quiet window comes last too, so that the baseline sees the
	// patched datasets grown by the writes
	var avgWindow time.Duration
	for _, w := range reloadWindows {
		avgWindow += w[1].Sub(w[0])
	}
	avgWindow /= time.Duration(len(reloadWindows))
	q1 := time.Now()
	time.Sleep(avgWindow)
	close(stop)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d requests failed; first: %v", n, firstFailure.Load())
	}
	var rr, rw []time.Duration
	if *benchShowSlow > 0 {
		mu.Lock()
		for i, w := range reloadWindows {
			for _, x := range reads {
				if x.at.After(w[0]) && x.at.Before(w[1]) && x.dur > *benchShowSlow {
					fmt.Printf("reload %d (call %v): read at +%v took %v\n", i, reloadTook[i], x.at.Sub(w[0]), x.dur)
				}
			}
		}
		mu.Unlock()
	}
	for _, w := range reloadWindows {
		r, wr := window(w[0], w[1])
		rr, rw = append(rr, r...), append(rw, wr...)
	}
	qr, qw := window(q1, q1.Add(avgWindow))
	rMax, rP99 := latencyStats(rr)
	wMax, _ := latencyStats(rw)
	qMax, qP99 := latencyStats(qr)
	qwMax, _ := latencyStats(qw)
	b.ReportMetric(rMax, "reload-read-max-ms")
	b.ReportMetric(rP99, "reload-read-p99-ms")
	b.ReportMetric(wMax, "reload-write-max-ms")
	b.ReportMetric(qMax, "quiet-read-max-ms")
	b.ReportMetric(qP99, "quiet-read-p99-ms")
	b.ReportMetric(qwMax, "quiet-write-max-ms")
	b.ReportMetric(float64(len(rw))/(avgWindow.Seconds()*float64(len(reloadWindows))), "writes/s")
	took, _ := latencyStats(reloadTook)
	b.ReportMetric(took, "reload-call-max-ms")
}

// BenchmarkPackagePatch8 patches datasets (b.N patches in all) with 8
// concurrent clients on 10,000 datasets, each patch on another dataset,
// and reports patches/s and latency percentiles. Target: at
// least 100 patches/s.
func BenchmarkPackagePatch8(b *testing.B) {
	e, c := benchEnv(b)
	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	stopProfiles := startProfiles(e.pid())
	pluginCPU0, hostCPU0 := cpuTime(e.pid()), cpuTime(0)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var local []time.Duration
		for pb.Next() {
			i := next.Add(1)
			code, body, d, err := post(c, e.url, "package_patch",
				fmt.Sprintf(`{"id":"dataset-%05d","notes":"patch %d"}`, (i*6151)%seedCount, i))
			if err != nil || code != 200 {
				b.Errorf("patch: %v %d %.200s", err, code, body)
				return
			}
			local = append(local, d)
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	pluginCPU, hostCPU := cpuTime(e.pid())-pluginCPU0, cpuTime(0)-hostCPU0
	stopProfiles()
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "patches/s")
	if len(lat) > 0 {
		b.ReportMetric(float64(pluginCPU.Microseconds())/float64(len(lat)), "plugin-cpu-us/patch")
		b.ReportMetric(float64(hostCPU.Microseconds())/float64(len(lat)), "store+client-cpu-us/patch")
	}
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
