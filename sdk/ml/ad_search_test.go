package ml

import (
	"encoding/csv"
	"math/rand"
	"os"
	"slices"
	"testing"
)

// newTop is an empty top list of k slots.
func newTop(k int) topList {
	tl := topList{make([]float64, k), make([]float64, k)}
	for i := range tl.sim {
		tl.sim[i] = -1
	}
	return tl
}

// topOf runs one of the 1024-bit scans and returns its raw top list, after
// checking that each slot's reference has the slot's similarity.
func topOf(t *testing.T, a *ADSet, q []uint64, search bool) []float64 {
	t.Helper()
	tl := newTop(3)
	nq := popcount(q)
	if search && a.sliced != nil {
		a.searchSliced(q, nq, tl)
	} else if search {
		a.search16((*[16]uint64)(q), nq, tl)
	} else {
		a.scan16((*[16]uint64)(q), nq, tl)
	}
	checkRefs(t, a, q, tl)
	return tl.sim
}

// checkRefs fails unless every filled slot of tl names a reference whose
// Dice similarity with q is the slot's.
func checkRefs(t *testing.T, a *ADSet, q []uint64, tl topList) {
	t.Helper()
	for j, s := range tl.sim {
		if s < 0 {
			continue
		}
		i := int(tl.ref[j])
		r := a.FP[i*a.Words : (i+1)*a.Words]
		and := 0
		for w := range r {
			and += popcount([]uint64{r[w] & q[w]})
		}
		if d := 2 * float64(and) / float64(popcount(q)+int(a.Pop[i])); d != s {
			t.Fatalf("slot %d names reference %d with Dice %v, slot holds %v", j, i, d, s)
		}
	}
}

func sameTop(t *testing.T, a *ADSet, q []uint64, what string) {
	t.Helper()
	if popcount(q) == 0 {
		return
	}
	want, got := topOf(t, a, q, false), topOf(t, a, q, true)
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s: sliced search %v, scan16 %v", what, got, want)
		}
	}
	sl := a.sliced
	a.sliced = nil
	got = topOf(t, a, q, true)
	a.sliced = sl
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s: search16 %v, scan16 %v", what, got, want)
		}
	}
	if d := a.Check(q); d.InDomain != (want[a.MinNeighbours-1] > a.Threshold) {
		t.Fatalf("%s: in domain %v with top %v", what, d.InDomain, want)
	}
}

// TestADSearchMatchesScanExactly compares the pruned search with the full
// scan, value for value, on random sets with clustered bit counts and
// duplicates and on the fingerprints of 3000 real structures.
func TestADSearchMatchesScanExactly(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	var fps [][]uint64
	for i := 0; i < 2000; i++ {
		fp := make([]uint64, 16)
		if i > 0 && r.Intn(10) == 0 { // near-duplicate of an earlier one
			copy(fp, fps[r.Intn(len(fps))])
			fp[r.Intn(16)] ^= 1 << r.Intn(64)
		} else {
			for j := 0; j < 10+r.Intn(90); j++ {
				b := r.Intn(1024)
				fp[b/64] |= 1 << (b % 64)
			}
		}
		fps = append(fps, fp)
	}
	ad := NewADSet(fps, 0.3, 3)
	if ad.rest8 == nil {
		t.Fatal("NewADSet did not prepare the set")
	}
	for q := 0; q < 300; q++ {
		query := append([]uint64(nil), fps[r.Intn(len(fps))]...)
		for j := 0; j < q%5; j++ {
			query[r.Intn(16)] ^= r.Uint64() & r.Uint64()
		}
		sameTop(t, ad, query, "random")
	}

	f, err := os.Open("../chem/testdata/rdkit_descriptors_tox21_3000.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var real [][]uint64
	var names []string
	for _, row := range rows[1:] {
		if m, err := Standardize(row[0]); err == nil {
			real, names = append(real, ADFingerprint(m)), append(names, row[0])
		}
	}
	ref := NewADSet(real[:len(real)*2/3], 0.3, 3)
	for i, q := range real {
		if i%3 == 0 || i >= len(real)*2/3 {
			sameTop(t, ref, q, names[i])
		}
	}
}

// TestFeaturesAndADMatchesTwoCalls checks the one-pass featurisation against
// Features and ADFingerprint on the feature digest panel.
func TestFeaturesAndADMatchesTwoCalls(t *testing.T) {
	for _, f := range []Featurizer{DefaultFeaturizer, {Radius: 3, Bits: 1024}, {Radius: 1, Bits: 512}} {
		for _, s := range digestPanel {
			m, err := Standardize(s)
			if err != nil {
				t.Fatal(err)
			}
			x, fp := f.FeaturesAndAD(m)
			wx, wfp := f.Features(m), ADFingerprint(m)
			if !slices.Equal(x.Idx, wx.Idx) || !slices.Equal(x.Val, wx.Val) || !slices.Equal(fp, wfp) {
				t.Fatalf("%s %+v: one pass differs from two", s, f)
			}
		}
	}
}

// TestADSlicedSmallAndSparseSets covers what the real sets rarely reach:
// sets of 1 to 130 references (partial last block, fewer references than
// neighbours), sparse fingerprints whose top lists hold zeros, and k of 1 to 5.
func TestADSlicedSmallAndSparseSets(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for trial := 0; trial < 400; trial++ {
		n := 1 + r.Intn(130)
		density := 1 + r.Intn(40)
		var fps [][]uint64
		for i := 0; i < n; i++ {
			fp := make([]uint64, 16)
			for j := r.Intn(density + 1); j > 0; j-- {
				b := r.Intn(1024)
				fp[b/64] |= 1 << (b % 64)
			}
			fps = append(fps, fp)
		}
		k := 1 + r.Intn(5)
		a := NewADSet(fps, 0.3, k)
		for qi := 0; qi < 10; qi++ {
			q := make([]uint64, 16)
			if qi%2 == 0 {
				copy(q, fps[r.Intn(n)])
			}
			for j := r.Intn(density + 1); j >= 0; j-- {
				b := r.Intn(1024)
				q[b/64] ^= 1 << (b % 64)
			}
			if popcount(q) == 0 {
				continue
			}
			want, got := newTop(k), newTop(k)
			a.scan16((*[16]uint64)(q), popcount(q), want)
			a.searchSliced(q, popcount(q), got)
			checkRefs(t, a, q, want)
			checkRefs(t, a, q, got)
			if !slices.Equal(want.sim, got.sim) {
				t.Fatalf("n=%d k=%d: sliced %v, scan %v", n, k, got, want)
			}
		}
	}
}
