package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkScoringJob scores a library of TOXGATE_BENCH_JOB_ROWS SMILES
// (default 100,000) with hERG as a job, beside the same molecules sent as
// 1,000-SMILES batches to /hERG/evaluate in the same run, and measures the
// p50 of single /hERG/evaluate calls at 4 connections with and without the
// job running.
func BenchmarkScoringJob(b *testing.B) {
	rows := 100000
	if v, err := strconv.Atoi(os.Getenv("TOXGATE_BENCH_JOB_ROWS")); err == nil && v > 0 {
		rows = v
	}
	for b.Loop() {
		f := newJobFixture(b, []string{"herg"})
		lib := library(b, rows)
		resID := f.upload(b, "bench.csv", lib)
		smiles := make([]string, 0, rows)
		for _, line := range bytes.Split(lib, []byte("\n"))[1:] {
			if p := bytes.SplitN(line, []byte(","), 3); len(p) == 3 {
				smiles = append(smiles, string(p[1]))
			}
		}
		call := func(body []byte) (time.Duration, int) {
			start := time.Now()
			resp, _, err := f.g.Do(context.Background(), http.MethodPost, "/hERG/evaluate", http.Header{"Authorization": {f.editor}, "Content-Type": {"application/json"}}, body)
			if err != nil {
				b.Fatal(err)
			}
			return time.Since(start), resp.StatusCode
		}
		// Baseline: the molecules as 1,000-SMILES batches, one after the other.
		start := time.Now()
		for i := 0; i < len(smiles); i += 1000 {
			body, _ := json.Marshal(map[string]any{"smiles": smiles[i:min(i+1000, len(smiles))]})
			if _, code := call(body); code != 200 {
				b.Fatalf("batch: %d", code)
			}
		}
		batchRate := float64(len(smiles)) / time.Since(start).Seconds()

		single := func(stop func() bool) float64 {
			var mu sync.Mutex
			var lat []float64
			var wg sync.WaitGroup
			for c := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; !stop(); n++ {
						body, _ := json.Marshal(map[string]any{"smiles": smiles[(c*7919+n)%len(smiles)]})
						d, code := call(body)
						if code == 200 {
							mu.Lock()
							lat = append(lat, d.Seconds()*1000)
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			sort.Float64s(lat)
			if len(lat) == 0 {
				return 0
			}
			return lat[len(lat)/2]
		}
		count := func(n int) func() bool {
			var mu sync.Mutex
			left := n
			return func() bool {
				mu.Lock()
				defer mu.Unlock()
				left--
				return left < 0
			}
		}
		p50Idle := single(count(800))

		id := f.submit(b, f.g, resID)
		status := func() map[string]any {
			_, out := jobCall(b, f.g, http.MethodGet, "/jobs/"+id, f.editor, nil)
			return out
		}
		waitJob(b, f.g, f.editor, id, 10*time.Minute, "started", func(m map[string]any) bool { return m["done"].(float64) > 0 })
		p50Job := single(func() bool { st := status(); return over(st) || st["done"].(float64) > float64(rows)*0.8 })
		st := waitJob(b, f.g, f.editor, id, 2*time.Hour, "over", over)
		if st["state"] != "succeeded" {
			b.Fatalf("job: %v", st)
		}
		jobRate := st["rows_per_second"].(float64)
		b.ReportMetric(jobRate, "job_rows/s")
		b.ReportMetric(batchRate, "batch_rows/s")
		b.ReportMetric(jobRate/batchRate, "job/batch")
		b.ReportMetric(p50Idle, "p50_ms_idle")
		b.ReportMetric(p50Job, "p50_ms_job")
		b.ReportMetric(p50Job/p50Idle, "p50_job/idle")
		fmt.Fprintf(os.Stderr, "scoring job: %d rows; job %.0f rows/s, 1000-batches %.0f rows/s (%.2f); single-call p50 at 4 connections %.1f ms idle, %.1f ms during the job (%.2fx)\n",
			rows, jobRate, batchRate, jobRate/batchRate, p50Idle, p50Job, p50Job/p50Idle)
	}
}
