package chemindex

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"time"

	"toxgate/internal/cputime"
	"toxgate/sdk/chem"
)

// benchRows is the size of the benchmark's index.
const benchRows = 1000000

// benchIndex builds an index of benchRows rows from the shipped compounds:
// each compound, variants of it with a substituent appended to its SMILES
// (parsed and fingerprinted as any row), and copies of those with a few
// fingerprint bits flipped until the index holds benchRows rows, in tables
// of 100,000 rows.
func benchIndex(b *testing.B) (*Index, []*Structure) {
	b.Helper()
	base, err := embeddedCompounds()
	if err != nil {
		b.Fatal(err)
	}
	var parents []*Structure
	var smiles []string
	for _, c := range base {
		if c.st != nil {
			parents = append(parents, c.st)
			smiles = append(smiles, c.SMILES)
		}
	}
	subs := []string{"C", "CC", "O", "N", "Cl", "F", "CCC", "OC", "C(C)C", "C(=O)O", "Br", "C#N", "CO", "c1ccccc1", "S", "CCCC"}
	all := append([]*Structure(nil), parents...)
	for _, sub := range subs {
		for _, s := range smiles {
			if st, err := Standardize(s + sub); err == nil {
				all = append(all, st)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ix := NewIndex()
	var rows []PreparedRow
	table := 0
	for n := 0; n < benchRows; n++ {
		st := all[n%len(all)]
		if n >= len(all) {
			cp := *st
			for k := 1 + rng.IntN(4); k > 0; k-- {
				bit := rng.IntN(FPBits)
				cp.FP[bit/64] ^= 1 << (bit % 64)
			}
			cp.Key = strconv.Itoa(n)
			st = &cp
		}
		rows = append(rows, PreparedRow{ID: int64(n), SMILES: st.SMILES, st: st})
		if len(rows) == 100000 {
			ix.SetTable("t"+strconv.Itoa(table), "smiles", rows, 0)
			rows, table = nil, table+1
		}
	}
	if len(rows) > 0 {
		ix.SetTable("t"+strconv.Itoa(table), "smiles", rows, 0)
	}
	queries := make([]*Structure, 0, 51)
	for i := 0; i < 51; i++ {
		queries = append(queries, parents[rng.IntN(len(parents))])
	}
	return ix, queries
}

// BenchmarkStructureSearch reports the p50 and p90 (wall time) and the CPU
// time per query of a similarity search (threshold 0.7, limit 100) over
// 1,000,000 indexed rows with the bit-count prefilter, beside a plain scan
// of every row in the same run, an exact search, and substructure searches
// (SMARTS and molecule patterns) with the count screen beside a plain scan
// matching every row. The CPU figure is the
// process's (getrusage), which stays meaningful on a shared machine.
func BenchmarkStructureSearch(b *testing.B) {
	ix, queries := benchIndex(b)
	if ix.Rows() != benchRows {
		b.Fatalf("%d rows", ix.Rows())
	}
	run := func(name string, q Query) {
		b.Run(name, func(b *testing.B) {
			var d []time.Duration
			hits := 0
			cpu0 := cputime.Process()
			for i := 0; i < b.N; i++ {
				for _, st := range queries {
					q.Structure = st
					t0 := time.Now()
					r := ix.Search(q)
					d = append(d, time.Since(t0))
					hits += r.Total
				}
			}
			reportQueries(b, d, hits, cpu0)
		})
	}
	run("similarity-0.7-prefilter", Query{Mode: ModeSimilarity, Threshold: 0.7, Limit: 100})
	run("similarity-0.7-plain-scan", Query{Mode: ModeSimilarity, Threshold: 0.7, Limit: 100, NoPrefilter: true})
	run("similarity-0.4-prefilter", Query{Mode: ModeSimilarity, Threshold: 0.4, Limit: 100})
	run("exact", Query{Mode: ModeExact, Limit: 100})
	// substructure: SMARTS patterns from broad to narrow, and shipped
	// compounds as molecule patterns, with the count screen and as a plain
	// scan matching every row
	var pats []*chem.Query
	for _, s := range benchPatterns {
		q, err := chem.ParseSMARTS(s)
		if err != nil {
			b.Fatal(err)
		}
		pats = append(pats, q)
	}
	var mols []*chem.Query
	for _, st := range queries[:10] {
		m, err := chem.ParseSMILES(st.SMILES)
		if err != nil {
			b.Fatal(err)
		}
		mols = append(mols, chem.QueryFromMol(m))
	}
	runSub := func(name string, pats []*chem.Query, noPre bool) {
		b.Run(name, func(b *testing.B) {
			var d []time.Duration
			hits := 0
			cpu0 := cputime.Process()
			for i := 0; i < b.N; i++ {
				for _, p := range pats {
					t0 := time.Now()
					r := ix.Search(Query{Mode: ModeSubstructure, Pattern: p, Limit: 100, Steps: SubstructureSteps, NoPrefilter: noPre})
					d = append(d, time.Since(t0))
					if r.Err != nil {
						b.Fatalf("%s: %v", p, r.Err)
					}
					hits += r.Total
				}
			}
			reportQueries(b, d, hits, cpu0)
		})
	}
	runSub("substructure-smarts-screen", pats, false)
	runSub("substructure-smarts-plain-scan", pats, true)
	runSub("substructure-molecule-screen", mols, false)
	runSub("substructure-molecule-plain-scan", mols, true)
}

// benchPatterns are the benchmark's SMARTS patterns: common groups and
// toxicophores, from ones most rows hold to rare ones.
var benchPatterns = []string{
	"c1ccccc1", "C(=O)[OX2H1]", "[N+](=O)[O-]", "c1ccc2ccccc2c1", "[Cl,Br,I]c", "C1CCCCC1",
	"[#6]1~[#6]~[#6]~[#6]~[#6]~1", "O=C-N", "[SX4](=O)(=O)", "N=N", "[$(C=O)]O[CH3]", "c1ccncc1",
}

// reportQueries reports the CPU per query since cpu0, the p50 and p90 of
// the query times d and the hits per query.
func reportQueries(b *testing.B, d []time.Duration, hits int, cpu0 float64) {
	b.ReportMetric((cputime.Process()-cpu0)*1000/float64(len(d)), "cpu-ms/query")
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(d[len(d)*9/10].Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(hits)/float64(len(d)), "hits/query")
	b.ReportMetric(0, "ns/op")
}
