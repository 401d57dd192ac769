package e2e

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"toxgate/gateway/harness"
	"toxgate/gateway/loadgen"
	"toxgate/plugins/contract"
)

// BenchmarkCatalogScaleThroughGateway measures the catalog at the size
// TOXGATE_SCALE_DATASETS says (default 10,000) through a real gateway and
// plugin on the embedded store: `toxgate catalog generate` fills it (in
// TOXGATE_SCALE_DIR when set, which keeps it for the next run), then the
// time from starting the gateway to /readyz 200 without an index snapshot
// and with the one the first start wrote (and before each, the time until
// it listens: the catalog loads after), the catalog plugin's RSS, and
// over loopback HTTP: /IsAlive (the floor of the same run), package_show
// by name (req/s at 32 connections), and package_search with q and two
// facets (p50/p99 at 16 connections, req/s at 64).
func BenchmarkCatalogScaleThroughGateway(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("TOXGATE_SCALE_DATASETS")); err == nil && v > 0 {
		n = v
	}
	dir := os.Getenv("TOXGATE_SCALE_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	bins := harness.Build(b)
	gen := exec.Command(bins.Gateway, "catalog", "generate", "--datasets", strconv.Itoa(n), "--quiet")
	gen.Env = append(os.Environ(), "TOXGATE_CONFIG=", "TOXGATE_MONGODB_URI=", "TOXGATE_MONGODB_DATA_DIR="+filepath.Join(dir, "store"),
		"TOXGATE_PLUGINS_PROGRAMS=catalog="+filepath.Join(bins.Dir, "toxgate-catalog"))
	start := time.Now()
	if out, err := gen.CombinedOutput(); err != nil {
		b.Fatalf("catalog generate: %v\n%s", err, out)
	}
	b.ReportMetric(time.Since(start).Seconds(), "generate-s")

	snap := filepath.Join(dir, "catalog-index.snap")
	records := snap + ".records" // the catalog plugin keeps it beside the index snapshot (catalog.RecordsFileBeside)
	_ = os.Remove(snap)
	_ = os.Remove(records)
	launch := func(what string) (*harness.Gateway, time.Duration, time.Duration) {
		t0 := time.Now()
		g, err := harness.Launch(bins, harness.WithDataDir(dir), harness.WithoutReadyWait(),
			harness.WithStartWithin(30*time.Minute), harness.WithEnv("TOXGATE_LOG_ACCESS=false"))
		if err != nil {
			b.Fatalf("%s: %v", what, err)
		}
		listening := time.Since(t0)
		waitUntil(b, 30*time.Minute, what+": /readyz 200", func() bool {
			resp, _, err := g.Do(context.Background(), http.MethodGet, "/readyz", nil, nil)
			return err == nil && resp.StatusCode == 200
		})
		return g, listening, time.Since(t0)
	}
	g, listen, cold := launch("start without a snapshot")
	b.ReportMetric(listen.Seconds(), "listen-no-snapshot-s")
	b.ReportMetric(cold.Seconds(), "start-no-snapshot-s")
	waitUntil(b, 30*time.Minute, "the index snapshot and the records file written", func() bool {
		_, err := os.Stat(snap)
		_, rerr := os.Stat(records)
		return err == nil && rerr == nil
	})
	if code := g.Stop(); code != 0 {
		b.Fatalf("stop: exit %d", code)
	}
	// TOXGATE_SCALE_PROFILE names a directory for CPU profiles of the
	// package_show run, of the gateway and of the catalog plugin
	profileDir := os.Getenv("TOXGATE_SCALE_PROFILE")
	if profileDir != "" {
		b.Setenv(contract.EnvCPUProfile, filepath.Join(profileDir, "plugin-show.pprof"))
	}
	g, listen, warm := launch("start from the snapshot")
	defer g.Stop()
	b.ReportMetric(listen.Seconds(), "listen-snapshot-s")
	b.ReportMetric(warm.Seconds(), "start-snapshot-s")
	b.ReportMetric(float64(pluginRSS(b, g.PID()))/(1<<20), "plugin-RSS-MiB")
	b.ReportMetric(float64(pluginRSS(b, g.PID()))/float64(n), "plugin-RSS-B/dataset")

	admin := adminToken(b, g)
	run := func(name string, conns int, urls []string, header map[string]string) loadgen.Result {
		r, err := loadgen.Run(context.Background(), loadgen.Target{Method: http.MethodGet, URLs: urls, Header: header},
			loadgen.Options{Conns: conns, Duration: 10 * time.Second, Warmup: time.Second})
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		if r.Errors > 0 {
			b.Fatalf("%s: %d errors, first %s", name, r.Errors, r.FirstErr)
		}
		return r
	}
	alive := run("IsAlive", 32, []string{g.URL + "/IsAlive"}, nil)
	b.ReportMetric(alive.RPS, "IsAlive-req/s@32")
	var shows []string
	for i := 1; i <= 500; i++ {
		shows = append(shows, g.URL+"/api/3/action/package_show?id=gen-"+leftPad(i*max(n/500, 1)))
	}
	// as a sysadmin: one in ten generated datasets is private
	showTarget := loadgen.Target{Method: http.MethodGet, URLs: shows, Header: map[string]string{"Authorization": admin}}
	if _, err := loadgen.Run(context.Background(), showTarget, loadgen.Options{Conns: 32, Duration: time.Second, Warmup: -1}); err != nil {
		b.Fatalf("package_show warm-up: %v", err)
	}
	pluginPID := catalogPID(b, g.PID())
	stopProfiles := startProfiles(b, g, pluginPID, profileDir, "show")
	gw0, pl0 := procCPU(g.PID()), procCPU(pluginPID)
	show, err := loadgen.Run(context.Background(), showTarget, loadgen.Options{Conns: 32, Duration: 10 * time.Second, Warmup: -1})
	gwCPU, plCPU := procCPU(g.PID())-gw0, procCPU(pluginPID)-pl0
	stopProfiles()
	if err != nil || show.Errors > 0 {
		b.Fatalf("package_show: %v, %d errors, first %s", err, show.Errors, show.FirstErr)
	}
	b.ReportMetric(show.RPS, "show-req/s@32")
	// CPU per call in each process; /proc counts in 10 ms ticks
	b.ReportMetric(float64(gwCPU.Microseconds())/float64(show.Requests), "show-gateway-cpu-us/call")
	b.ReportMetric(float64(plCPU.Microseconds())/float64(show.Requests), "show-plugin-cpu-us/call")
	var searches []string
	for _, q := range []string{"hepatotoxicity", "herg assay", "doxorubicin kinetics", "human liver", "toxicology", "plasma clearance"} {
		searches = append(searches, g.URL+"/api/3/action/package_search?"+url.Values{"q": {q}, "facet.field": {`["tags","organization"]`}}.Encode())
	}
	s16 := run("package_search", 16, searches, nil)
	b.ReportMetric(float64(s16.P50.Microseconds())/1000, "search-p50-ms@16")
	b.ReportMetric(float64(s16.P99.Microseconds())/1000, "search-p99-ms@16")
	b.ReportMetric(run("package_search", 64, searches, nil).RPS, "search-req/s@64")
}

// leftPad is a generated dataset's number as its name writes it.
func leftPad(i int) string {
	s := strconv.Itoa(i)
	return strings.Repeat("0", max(0, 7-len(s))) + s
}

var vmRSS = regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`)

// pluginRSS is the resident memory of the catalog plugin, the gateway
// process's child.
func pluginRSS(tb testing.TB, gatewayPID int) int64 {
	tb.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(catalogPID(tb, gatewayPID)) + "/status")
	if m := vmRSS.FindSubmatch(status); err == nil && m != nil {
		kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return kb << 10
	}
	tb.Fatal("no resident memory of the catalog plugin")
	return 0
}

// catalogPID is the process id of the catalog plugin, the gateway
// process's child.
func catalogPID(tb testing.TB, gatewayPID int) int {
	tb.Helper()
	children, _ := filepath.Glob("/proc/" + strconv.Itoa(gatewayPID) + "/task/*/children")
	for _, c := range children {
		b, _ := os.ReadFile(c)
		for _, pid := range strings.Fields(string(b)) {
			comm, _ := os.ReadFile("/proc/" + pid + "/comm")
			if strings.TrimSpace(string(comm)) == "toxgate-catalog" {
				n, _ := strconv.Atoi(pid)
				return n
			}
		}
	}
	tb.Fatal("no catalog plugin process under the gateway")
	return 0
}

// procCPU is the user and system CPU time process pid has used, from
// /proc (in ticks of 10 ms).
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// the fields after the command name: utime and stime are the 12th and 13th
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// startProfiles, when dir is set, starts CPU profiles of the gateway (its
// /debug/pprof route, for 9 s) and of the catalog plugin (SIGUSR1, see
// contract.EnvCPUProfile) and returns what ends them and writes
// dir/gateway-<name>.pprof; the plugin writes its own file.
func startProfiles(tb testing.TB, g *harness.Gateway, pluginPID int, dir, name string) func() {
	tb.Helper()
	if dir == "" {
		return func() {}
	}
	if err := syscall.Kill(pluginPID, syscall.SIGUSR1); err != nil {
		tb.Fatalf("start the plugin's profile: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, body, err := g.Do(context.Background(), http.MethodGet, "/debug/pprof/profile?seconds=9", nil, nil)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "gateway-"+name+".pprof"), body, 0o644)
		}
		done <- err
	}()
	return func() {
		if err := syscall.Kill(pluginPID, syscall.SIGUSR1); err != nil {
			tb.Errorf("stop the plugin's profile: %v", err)
		}
		if err := <-done; err != nil {
			tb.Errorf("gateway profile: %v", err)
		}
	}
}
