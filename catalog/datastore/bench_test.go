package datastore_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"toxgate/catalog/datastore/pgtest"
	"toxgate/gateway/harness"
	"toxgate/gateway/loadgen"
)

// benchRows is the size of the benchmark's CSV (TOXGATE_DS_BENCH_ROWS,
// default 1,000,000).
func benchRows() int {
	if n, err := strconv.Atoi(os.Getenv("TOXGATE_DS_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 1000000
}

// BenchmarkDataStore loads a 6-column CSV through the loader on each
// engine (rows/s), then runs datastore_search with a filter on an indexed
// column and with a sort + offset of half the table, at 16 connections,
// through the gateway and directly against the engine in the same run.
//
//	TOXGATE_DS_BENCH_ROWS=100000 go test -run '^$' -bench DataStore -benchtime 1x ./catalog/datastore/
func BenchmarkDataStore(b *testing.B) {
	n := benchRows()
	var csv strings.Builder
	csv.WriteString("id,smiles,conc,viability,plate,note\n")
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < n; i++ {
		fmt.Fprintf(&csv, "%d,C%dCO,%.3f,%.2f,%d,row %d\n", i, i%997, rng.Float64()*100, rng.Float64(), i%384, i)
	}
	body := []byte(csv.String())
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			var env []string
			dsURL := ""
			if engine == "postgres" {
				pg, err := pgtest.Launch()
				if err != nil {
					b.Skip(err)
				}
				defer pg.Stop()
				if dsURL, err = pg.NewDatabase("bench"); err != nil {
					b.Fatal(err)
				}
				env = []string{"TOXGATE_DATASTORE_URL=" + dsURL}
			}
			f := newFilesTB(b)
			s := newSite(b, f.allow(env), harness.WithLogSink(io.Discard))
			start := time.Now()
			rid := s.dataset("bench", false, map[string]any{"url": f.put("/bench.csv", body), "format": "CSV"})
			if st := s.waitLoad(rid, 30*time.Minute); st["status"] != "complete" {
				b.Fatalf("load: %v", st)
			}
			loadSecs := time.Since(start).Seconds()
			b.ReportMetric(float64(n)/loadSecs, "load-rows/s")
			s.ok(s.tok["eddie"], "datastore_create", map[string]any{"resource_id": rid, "indexes": "id,conc"})

			var db *sql.DB
			var err error
			if dsURL != "" {
				db, err = sql.Open("pgx", dsURL)
			} else {
				db, err = sql.Open("sqlite", "file:"+filepath.Join(s.g.DataDir, "datastore", "datastore.db")+"?mode=ro&_pragma=busy_timeout(30000)")
			}
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(16)
			ph := "?"
			if dsURL != "" {
				ph = "$1"
			}
			cols := `"_id", "id", "smiles", "conc", "viability", "plate", "note"`
			tbl := `"` + rid + `"`
			filterSQL := []string{`SELECT ` + cols + ` FROM ` + tbl + ` WHERE ("id" = ` + ph + `) ORDER BY "_id" LIMIT 10 OFFSET 0`,
				`SELECT COUNT(*) FROM ` + tbl + ` WHERE ("id" = ` + ph + `)`}
			half := n / 2
			sortSQL := []string{`SELECT ` + cols + ` FROM ` + tbl + ` ORDER BY "conc" DESC LIMIT 10 OFFSET ` + strconv.Itoa(half),
				`SELECT COUNT(*) FROM ` + tbl}

			var filterURLs []string
			for i := 0; i < 1000; i++ {
				q := url.Values{"resource_id": {rid}, "filters": {fmt.Sprintf(`{"id": %d}`, (i*7919)%n)}, "limit": {"10"}}
				filterURLs = append(filterURLs, s.g.URL+"/api/3/action/datastore_search?"+q.Encode())
			}
			sortURL := s.g.URL + "/api/3/action/datastore_search?" + url.Values{"resource_id": {rid}, "sort": {"conc desc"}, "offset": {strconv.Itoa(half)}, "limit": {"10"}}.Encode()
			dur := 5 * time.Second
			if d, err := time.ParseDuration(os.Getenv("TOXGATE_DS_BENCH_DURATION")); err == nil {
				dur = d
			}
			for _, c := range []struct {
				name string
				urls []string
				sql  []string
				arg  bool
			}{{"filter", filterURLs, filterSQL, true}, {"sort-offset", []string{sortURL}, sortSQL, false}} {
				api, err := loadgen.Run(context.Background(), loadgen.Target{Method: "GET", URLs: c.urls}, loadgen.Options{Conns: 16, Duration: dur})
				if err != nil || api.Errors > 0 {
					b.Fatalf("%s via the API: %v %s", c.name, err, api.FirstErr)
				}
				direct := runDirect(b, db, c.sql, c.arg, n, dur)
				b.Logf("%s %s: API %s | direct %s | API adds %.2f ms p50", engine, c.name, api, direct, float64(api.P50-direct.P50)/1e6)
				b.ReportMetric(api.RPS, c.name+"-api-req/s")
				b.ReportMetric(float64(api.P50.Microseconds())/1000, c.name+"-api-p50-ms")
				b.ReportMetric(direct.RPS, c.name+"-direct-req/s")
				b.ReportMetric(float64(direct.P50.Microseconds())/1000, c.name+"-direct-p50-ms")
			}
			b.Logf("%s: loaded %d rows in %.1fs (%.0f rows/s)", engine, n, loadSecs, float64(n)/loadSecs)
		})
	}
}

// runDirect runs the statements the API runs for one search (the page and
// the total) on 16 connections straight against the engine.
func runDirect(b *testing.B, db *sql.DB, stmts []string, withArg bool, n int, dur time.Duration) loadgen.Result {
	var mu sync.Mutex
	var lat []time.Duration
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var mine []time.Duration
			for i := w; time.Now().Before(deadline); i += 16 {
				t0 := time.Now()
				for _, q := range stmts {
					var args []any
					if withArg {
						args = []any{(i * 7919) % n}
					}
					rows, err := db.Query(q, args...)
					if err != nil {
						b.Error(err)
						return
					}
					for rows.Next() {
					}
					rows.Close()
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r := loadgen.Result{Requests: len(lat), Elapsed: dur}
	if len(lat) > 0 {
		r.RPS = float64(len(lat)) / dur.Seconds()
		r.P50, r.P99, r.Max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	return r
}
