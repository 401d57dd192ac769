package pluginhost

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// createBody is a package_create body shaped like a real catalog's
// dataset: three tags, two extras, two link resources, a 40-word
// description.
func createBody(n int64) string {
	return fmt.Sprintf(`{"name":"w8-%d-%d","title":"Screen %d","owner_org":"liver-lab",`+
		`"notes":"A study of hepatotoxicity and cardiotoxicity in vitro and in vivo, with kinetics of doxorubicin and bisphenol in rat and human cells, measured by assay over weeks, with lipidomics and proteomics of the exposed tissues and the controls, as part of screen %d",`+
		`"tags":[{"name":"herg"},{"name":"assay"},{"name":"rat"}],`+
		`"extras":[{"key":"species","value":"rat"},{"key":"endpoint","value":"ic50"}],`+
		`"resources":[{"url":"http://example.org/%d.csv","name":"results","format":"CSV"},{"url":"http://example.org/%d.json","name":"meta","format":"JSON"}]}`,
		time.Now().UnixNano(), n, n, n, n, n)
}

// BenchmarkPackageCreate8 creates datasets (b.N in all) with 8 concurrent
// writers through the real gateway path, catalog plugin and embedded
// store, on top of the 10,000 seeded datasets, and reports creates/s,
// latency percentiles and the CPU a create costs in each process. Beside
// it, in the same run: store-insert-ms, one plain InsertOne round trip to
// the same store from this process (one writer), and store-insert8/s, the
// plain inserts 8 concurrent writers reach. Target: ≥ 500 creates/s on 2
// cores.
func BenchmarkPackageCreate8(b *testing.B) {
	e, c := benchEnv(b)
	ctx := context.Background()
	// the baseline: plain inserts into a collection of their own
	coll := e.db.Collection("bench_plain_inserts")
	const plain = 200
	t0 := time.Now()
	for i := range plain {
		if _, err := coll.InsertOne(ctx, bson.M{"_id": fmt.Sprintf("s%d-%d", t0.UnixNano(), i), "v": i}); err != nil {
			b.Fatal(err)
		}
	}
	serial := time.Since(t0) / plain
	var pn atomic.Int64
	var wg sync.WaitGroup
	t1 := time.Now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := pn.Add(1); i <= 4*plain; i = pn.Add(1) {
				if _, err := coll.InsertOne(ctx, bson.M{"_id": fmt.Sprintf("p%d-%d", t1.UnixNano(), i), "v": i}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	plain8 := float64(4*plain) / time.Since(t1).Seconds()

	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	stopProfiles := startProfiles(e.pid())
	pluginCPU0, hostCPU0 := cpuTime(e.pid()), cpuTime(0)
	b.ResetTimer()
	start := time.Now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				code, body, d, err := post(c, e.url, "package_create", createBody(i))
				if err != nil || code != 200 {
					b.Errorf("create: %v %d %.200s", err, code, body)
					return
				}
				local = append(local, d)
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	pluginCPU, hostCPU := cpuTime(e.pid())-pluginCPU0, cpuTime(0)-hostCPU0
	stopProfiles()
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "creates/s")
	b.ReportMetric(float64(serial.Microseconds())/1000, "store-insert-ms")
	b.ReportMetric(plain8, "store-insert8/s")
	if len(lat) > 0 {
		b.ReportMetric(float64(pluginCPU.Microseconds())/float64(len(lat)), "plugin-cpu-us/create")
		b.ReportMetric(float64(hostCPU.Microseconds())/float64(len(lat)), "store+client-cpu-us/create")
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
