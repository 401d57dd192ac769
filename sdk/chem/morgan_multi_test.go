package chem

import (
	"encoding/csv"
	"os"
	"slices"
	"testing"
)

// TestMorganCountsAndBitsMatchesTwoCalls checks the one-pass function against
// MorganCounts and Morgan on the 3000 Tox21 structures for several radii.
func TestMorganCountsAndBitsMatchesTwoCalls(t *testing.T) {
	f, err := os.Open("testdata/rdkit_descriptors_tox21_3000.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	combos := [][4]int{{2, 2048, 3, 1024}, {3, 1024, 2, 2048}, {0, 64, 4, 512}, {4, 0, 1, 0}, {2, 2048, 2, 2048}}
	for _, row := range rows[1:] {
		m, err := ParseSMILES(row[0])
		if err != nil {
			continue
		}
		for _, c := range combos {
			cv, b := MorganCountsAndBits(m, c[0], c[1], c[2], c[3])
			wcv, wb := MorganCounts(m, c[0], c[1]), Morgan(m, c[2], c[3])
			if cv.N != wcv.N || !slices.Equal(cv.Idx, wcv.Idx) || !slices.Equal(cv.Counts, wcv.Counts) {
				t.Fatalf("%s %v: counts differ", row[0], c)
			}
			if b.Len() != wb.Len() || !slices.Equal(b.Words(), wb.Words()) {
				t.Fatalf("%s %v: bits differ", row[0], c)
			}
		}
	}
}
