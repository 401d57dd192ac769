package ml

import (
	"encoding/csv"
	"math/rand"
	"os"
	"slices"
	"testing"
)

// topOf runs one of the 1024-bit scans and returns its raw top list.
func topOf(a *ADSet, q []uint64, search bool) []float64 {
	top := []float64{-1, -1, -1}
	nq := popcount(q)
	if search && a.sliced != nil {
		a.searchSliced(q, nq, top)
	} else if search {
		a.search16((*[16]uint64)(q), nq, top)
	} else {
		a.scan16((*[16]uint64)(q), nq, top)
	}
	return top
}

func sameTop(t *testing.T, a *ADSet, q []uint64, what string) {
	t.Helper()
	if popcount(q) == 0 {
		return
	}
	want, got := topOf(a, q, false), topOf(a, q, true)
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s: sliced search %v, scan16 %v", what, got, want)
		}
	}
	sl := a.sliced
	a.sliced = nil
	got = topOf(a, q, true)
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
			want := make([]float64, k)
			got := make([]float64, k)
			for i := range want {
				want[i], got[i] = -1, -1
			}
			a.scan16((*[16]uint64)(q), popcount(q), want)
			a.searchSliced(q, popcount(q), got)
			if !slices.Equal(want, got) {
				t.Fatalf("n=%d k=%d: sliced %v, scan %v", n, k, got, want)
			}
		}
	}
}
