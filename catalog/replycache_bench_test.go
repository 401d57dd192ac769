package catalog

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"
)

// genReadModel is a read model holding n datasets shaped as Generate makes
// them (over one organization per 500), with a reply cache of entries.
func genReadModel(tb testing.TB, n, entries int) (*readModel, []*Dataset) {
	st := newReadModel()
	st.rendered = newReplyCache(entries)
	rng := rand.New(rand.NewSource(1))
	orgs := make([]string, max(3, n/500))
	for i := range orgs {
		orgs[i] = fmt.Sprintf("gen-org-%03d", i+1)
		st.putOrg(&Organization{ID: newID(), Name: orgs[i], Title: orgs[i], State: StateActive, Created: now(), Rev: 1})
	}
	tags := rand.NewZipf(rng, 1.2, 1, uint64(len(genTags)-1))
	sys := Caller{Name: "generator", Sysadmin: true}
	at := time.Now()
	ds := make([]*Dataset, 0, n)
	for i := 1; i <= n; i++ {
		in, err := st.buildDataset(sys, genDataset(rng, tags, i, orgs), nil, at, true)
		if err != nil {
			tb.Fatal(err)
		}
		st.putDataset(in.d)
		ds = append(ds, in.d)
	}
	return st, ds
}

// BenchmarkReplyCacheMemory reports the heap a dataset costs in the read
// model (record, indexes, postings) once every dataset has been shown,
// with every encoded reply kept (cache as large as the catalog) and with
// the default bound (DefaultReplyCacheEntries), at 10,000 and 30,000
// generated datasets; and package_show's encoding step (datasetJSON) per
// call over all datasets in turn with the default bound, beside a plain
// in-process lookup of the same record (map by id). Command:
// go test -run '^$' -bench ReplyCacheMemory -benchtime 1x ./catalog/
func BenchmarkReplyCacheMemory(b *testing.B) {
	for _, n := range []int{10000, 30000} {
		for _, bound := range []struct {
			name    string
			entries int
		}{{"all", n}, {"default", DefaultReplyCacheEntries}} {
			b.Run(fmt.Sprintf("datasets=%d/cache=%s", n, bound.name), func(b *testing.B) {
				for b.Loop() {
					base := heapInUse()
					st, ds := genReadModel(b, n, bound.entries)
					for _, d := range ds {
						if _, err := st.datasetJSON(d, "http://localhost"); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(heapInUse()-base)/float64(n), "heap-bytes/dataset")
					// package_show's encoding, every dataset in turn (the
					// worst order for the cache), beside the record lookup
					t0 := time.Now()
					const rounds = 3
					for range rounds {
						for _, d := range ds {
							if _, err := st.datasetJSON(d, "http://localhost"); err != nil {
								b.Fatal(err)
							}
						}
					}
					b.ReportMetric(float64(time.Since(t0).Nanoseconds())/float64(rounds*n)/1000, "encode-us/show")
					t1 := time.Now()
					hits := 0
					for range rounds {
						for _, d := range ds {
							if st.datasets[d.ID] != nil {
								hits++
							}
						}
					}
					b.ReportMetric(float64(time.Since(t1).Nanoseconds())/float64(rounds*n)/1000, "lookup-us/show")
					runtime.KeepAlive(st)
				}
			})
		}
	}
}
