package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"toxgate/catalog/datastore/pgtest"
	"toxgate/gateway/harness"
	"toxgate/internal/s3test"
)

// cluster is three gateways on one PostgreSQL (store and DataStore), one
// S3 bucket, behind HAProxy.
type cluster struct {
	gws   []*harness.Gateway
	addrs []string
	lb    *balancer
	admin string
}

// startCluster starts PostgreSQL, versitygw, three gateways (at once, on
// an empty store) on fixed loopback ports and HAProxy in front of them.
func startCluster(t testing.TB) *cluster {
	t.Helper()
	pg := pgtest.Start(t)
	storeURL, err := pg.NewDatabase("toxgate_store")
	if err != nil {
		t.Fatal(err)
	}
	dsURL, err := pg.NewDatabase("toxgate_datastore")
	if err != nil {
		t.Fatal(err)
	}
	s3 := s3test.Start(t)
	env := append(s3.Env(s3.Bucket(t), "files/"),
		"TOXGATE_STORE_BACKEND=postgresql", "TOXGATE_STORE_POSTGRES_URL="+storeURL,
		"TOXGATE_DATASTORE_URL="+dsURL,
		"TOXGATE_MODULES_DIR="+modulesDir(t, "herg"), "TOXGATE_MODULES_REQUIRE_TOKEN=false",
		"TOXGATE_LOG_ACCESS=false",
		// a scoring job in small chunks with short leases, so that a
		// killed gateway's chunks move to another within the test
		"TOXGATE_JOBS_CHUNK_ROWS=100", "TOXGATE_JOBS_LEASE=2s", "TOXGATE_JOBS_POLL_INTERVAL=200ms", "TOXGATE_JOBS_WORKERS=1")
	c := &cluster{}
	bins := harness.Build(t)
	c.gws = make([]*harness.Gateway, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	c.addrs = make([]string, 3)
	for i := range c.gws {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// a free port may be taken by another process before the
			// gateway binds it: then try another
			for try := 0; try < 3; try++ {
				c.addrs[i] = freeLoopback(t)
				c.gws[i], errs[i] = harness.Launch(bins, harness.WithEnv(append(env, "TOXGATE_SERVER_ADDR="+c.addrs[i])...))
				if errs[i] == nil || !strings.Contains(errs[i].Error(), "address already in use") {
					return
				}
			}
		}(i)
	}
	wg.Wait()
	for i, g := range c.gws {
		if errs[i] != nil {
			t.Fatalf("gateway %d: %v", i, errs[i])
		}
		t.Cleanup(func() { g.Close() })
	}
	c.lb = startBalancer(t, c.addrs)
	for i := range c.gws {
		c.lb.waitState(t, fmt.Sprintf("g%d", i), "UP", time.Minute)
	}
	c.admin = adminToken(t, c.gws[0])
	return c
}

// load is a mixed load through the balancer: catalog reads and writes,
// uploads and model calls, recording every failure and every
// acknowledged write.
type load struct {
	c      *cluster
	client *http.Client
	stop   chan struct{}
	wg     sync.WaitGroup

	ok     atomic.Int64
	mu     sync.Mutex
	fails  []string
	phase  string
	byPh   map[string]int
	writes []string          // names of acknowledged package_create
	files  map[string][]byte // acknowledged uploads: resource id -> bytes
}

func startLoad(c *cluster, workers int) *load {
	l := &load{c: c, client: &http.Client{Timeout: time.Minute}, stop: make(chan struct{}), byPh: map[string]int{},
		files: map[string][]byte{}, phase: "warm"}
	for w := 0; w < workers; w++ {
		l.wg.Add(1)
		go l.work(w)
	}
	return l
}

func (l *load) setPhase(p string) { l.mu.Lock(); l.phase = p; l.mu.Unlock() }

func (l *load) current() string { l.mu.Lock(); defer l.mu.Unlock(); return l.phase }

// fail records a failed request of the phase it started in.
func (l *load) fail(phase, what string, code int, body []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byPh[phase]++
	if len(l.fails) < 50 {
		l.fails = append(l.fails, fmt.Sprintf("[%s] %s: %d %.200s", phase, what, code, body))
	}
}

func (l *load) failures(phase string) int { l.mu.Lock(); defer l.mu.Unlock(); return l.byPh[phase] }

// waitOps waits until n more requests have succeeded.
func (l *load) waitOps(t *testing.T, n int64) {
	t.Helper()
	target := l.ok.Load() + n
	waitUntil(t, 2*time.Minute, fmt.Sprintf("%d more successful requests", n), func() bool { return l.ok.Load() >= target })
}

func (l *load) work(w int) {
	defer l.wg.Done()
	ctx := context.Background()
	base, tok := l.c.lb.URL, l.c.admin
	last := "" // the dataset this worker created last: its uploads go there, so no dataset is written twice
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		phase := l.current()
		switch i % 4 {
		case 0: // catalog read
			code, body := call(ctx, l.client, http.MethodGet, base, "/api/3/action/package_search?q=cluster&rows=5", "", "", nil)
			if code != 200 {
				l.fail(phase, "package_search", code, body)
				continue
			}
		case 1: // catalog write
			name := fmt.Sprintf("cluster-w%d-%d", w, i)
			b, _ := json.Marshal(map[string]any{"name": name, "owner_org": "cluster-lab", "notes": "cluster load"})
			code, body := call(ctx, l.client, http.MethodPost, base, "/api/3/action/package_create", tok, "application/json", b)
			if code != 200 {
				l.fail(phase, "package_create "+name, code, body)
				continue
			}
			l.mu.Lock()
			l.writes = append(l.writes, name)
			l.mu.Unlock()
			last = name
		case 2: // model call
			code, body := call(ctx, l.client, http.MethodPost, base, "/hERG/evaluate", "", "application/json", []byte(fmt.Sprintf(`{"smiles":"%s"}`, strings.Repeat("C", 1+i%7)+"O")))
			if code != 200 {
				l.fail(phase, "hERG", code, body)
				continue
			}
		case 3: // upload, by two workers (uploads one user may run at once)
			if w >= 2 || last == "" {
				continue
			}
			data := []byte(fmt.Sprintf("smiles,n\nCCO,%d\nCCN,%d\n", w, i))
			ct, body := uploadForm(map[string]string{"package_id": last, "name": fmt.Sprintf("u%d-%d.csv", w, i)}, "u.csv", data)
			code, out := call(ctx, l.client, http.MethodPost, base, "/api/3/action/resource_create", tok, ct, body)
			if code != 200 {
				l.fail(phase, "resource_create", code, out)
				continue
			}
			var env struct {
				Result struct {
					ID string `json:"id"`
				} `json:"result"`
			}
			_ = json.Unmarshal(out, &env)
			l.mu.Lock()
			l.files[env.Result.ID] = data
			l.mu.Unlock()
		}
		l.ok.Add(1)
	}
}

func (l *load) end() { close(l.stop); l.wg.Wait() }

// TestClusterSurvivesKillAndRollingRestart runs three gateways on one
// PostgreSQL and one bucket behind HAProxy under a mixed load: a kill -9 of
// one is routed around and loses no acknowledged write or upload; a
// rolling restart of all three (SIGTERM, drain, start) fails no request;
// a hot reload of the catalog plugin on one fails no request; a scoring
// job submitted to the killed gateway finishes on the others; every
// gateway lists the other two as peers.
func TestClusterSurvivesKillAndRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("the cluster test starts PostgreSQL, an S3 server, three gateways and HAProxy")
	}
	c := startCluster(t)
	g0 := c.gws[0]
	if code, out := ckan(t, g0, "organization_create", c.admin, map[string]any{"name": "cluster-lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	// every gateway sees the other two through the shared store
	for i, g := range c.gws {
		waitUntil(t, time.Minute, fmt.Sprintf("gateway %d listing 2 peers", i), func() bool {
			var rz struct {
				Store string                  `json:"store_backend"`
				Files string                  `json:"files_backend"`
				Peers []struct{ Addr string } `json:"peers"`
			}
			_, body, err := g.Do(context.Background(), http.MethodGet, "/readyz", nil, nil)
			return err == nil && json.Unmarshal(body, &rz) == nil && rz.Store == "postgresql" && rz.Files == "s3" && len(rz.Peers) == 2
		})
	}

	// a scoring job submitted to the gateway about to be killed
	if code, out := ckan(t, g0, "package_create", c.admin, map[string]any{"name": "cluster-jobs", "owner_org": "cluster-lab"}); code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}
	code, out := uploadAction(t, g0, c.admin, "resource_create", map[string]string{"package_id": "cluster-jobs", "name": "lib.csv"}, "lib.csv", library(t, 3000))
	if code != 200 {
		t.Fatalf("upload: %d %v", code, out)
	}
	code, out = jobCall(t, c.gws[1], http.MethodPost, "/jobs", c.admin, map[string]any{"model": "herg",
		"resource_id": out["result"].(map[string]any)["id"], "smiles_column": "smiles", "package_id": "cluster-jobs"})
	if code != http.StatusAccepted {
		t.Fatalf("POST /jobs: %d %v", code, out)
	}
	jobID := out["id"].(string)
	waitJob(t, c.gws[1], c.admin, jobID, 5*time.Minute, "running", state("running"))

	// a resumable upload through the balancer, as a browser sends it
	tusThroughBalancer(t, c, "cluster-jobs")

	l := startLoad(c, 4)
	defer func() {
		if t.Failed() {
			t.Logf("failures: %s", strings.Join(l.fails, "\n"))
		}
	}()
	l.waitOps(t, 40)

	// kill -9 one gateway: the balancer takes it out
	l.setPhase("kill")
	c.gws[1].Kill9()
	killed := time.Now()
	c.lb.waitState(t, "g1", "DOWN", time.Minute)
	routedAround := time.Since(killed)
	l.setPhase("after-kill")
	l.waitOps(t, 40)
	t.Logf("kill -9 → out of the balancer in %v; failed requests while it was in: %d, after: %d",
		routedAround.Round(time.Millisecond), l.failures("kill"), l.failures("after-kill"))
	if n := l.failures("after-kill"); n != 0 {
		t.Errorf("%d requests failed after the balancer took the killed gateway out", n)
	}
	// the job's chunks leased by the killed gateway move to the others
	st := waitJob(t, g0, c.admin, jobID, 10*time.Minute, "over", over)
	if st["state"] != "succeeded" {
		t.Fatalf("scoring job after kill -9 of the gateway it was submitted to: %v", st)
	}
	rid, _ := st["result_resource_id"].(string)
	table := downloadIs(t, g0, c.admin, rid)
	if lines := strings.Count(strings.TrimSpace(string(table)), "\n") + 1; lines != 3001 {
		t.Fatalf("scoring job result: %d lines, want 3001", lines)
	}
	c.gws[1].Relaunch()
	c.lb.waitState(t, "g1", "UP", time.Minute)

	// rolling restart: SIGTERM, drain, start, one gateway at a time
	l.setPhase("rolling")
	for i, g := range c.gws {
		if code := g.Stop(); code != 0 {
			t.Fatalf("gateway %d exit code %d after SIGTERM", i, code)
		}
		c.lb.waitState(t, fmt.Sprintf("g%d", i), "DOWN", time.Minute)
		g.Relaunch()
		c.lb.waitState(t, fmt.Sprintf("g%d", i), "UP", time.Minute)
		l.waitOps(t, 20)
	}
	// a hot reload of the catalog plugin on one gateway while all serve
	l.setPhase("reload")
	c.gws[1].Signal(syscall.SIGHUP)
	waitUntil(t, 5*time.Minute, "the catalog plugin reloaded on gateway 1", func() bool {
		_, body, err := c.gws[1].Do(context.Background(), http.MethodGet, "/metrics", nil, nil)
		return err == nil && strings.Contains(string(body), `toxgate_plugin_reloads_total{plugin="catalog",result="ok"} 1`)
	})
	l.waitOps(t, 20)
	l.end()
	t.Logf("rolling restart of 3 gateways: %d failed requests; plugin reload on one: %d; %d requests succeeded in all",
		l.failures("rolling"), l.failures("reload"), l.ok.Load())
	if n := l.failures("reload"); n != 0 {
		t.Errorf("%d requests failed during the plugin reload:\n%s", n, strings.Join(l.fails, "\n"))
	}
	if n := l.failures("rolling"); n != 0 {
		t.Errorf("%d requests failed in the rolling restart:\n%s", n, strings.Join(l.fails, "\n"))
	}
	if t.Failed() {
		for i, g := range c.gws {
			t.Logf("gateway %d (%s), catalog log:\n%s", i, c.addrs[i], catalogLog(g))
		}
	}

	// no acknowledged write or upload lost: each is read back through
	// the balancer (so from every gateway in turn)
	ctx := context.Background()
	for _, name := range l.writes {
		if code, body := call(ctx, l.client, http.MethodGet, c.lb.URL, "/api/3/action/package_show?id="+name, c.admin, "", nil); code != 200 {
			t.Errorf("acknowledged dataset %s: %d %.200s", name, code, body)
		}
	}
	for id, data := range l.files {
		for _, g := range c.gws {
			if got := downloadIs(t, g, c.admin, id); string(got) != string(data) {
				t.Errorf("acknowledged upload %s: other bytes from %s", id, g.URL)
			}
		}
	}
	t.Logf("%d acknowledged datasets and %d uploads all read back", len(l.writes), len(l.files))
}
