package model

import (
	"encoding/csv"
	"math/bits"
	"os"
	"slices"
	"testing"

	"toxgate/sdk/ml"
)

// TestADMatchesBruteForce checks the hERG applicability domain (the pruned
// bit-sliced search of ml.ADSet.Check) against a brute-force scan of all
// 10 105 training fingerprints, with the same Dice arithmetic, for the 3000
// reference structures of sdk/chem plus the benchmark molecules: the same
// nearest similarities (exactly, after rounding) and the same verdict.
func TestADMatchesBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force over 3000 × 10105 fingerprints")
	}
	f, err := os.Open("../../../sdk/chem/testdata/rdkit_descriptors_tox21_3000.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	smiles := slices.Clone(benchSMILES)
	for _, r := range rows[1:] {
		smiles = append(smiles, r[0])
	}
	ad := Server.Bundle.AD[0]
	n, in := 0, 0
	for _, s := range smiles {
		m, err := ml.Standardize(s)
		if err != nil || m.NumHeavyAtoms() == 0 {
			continue
		}
		q := ml.ADFingerprint(m)
		nq := 0
		for _, w := range q {
			nq += bits.OnesCount64(w)
		}
		top := []float64{-1, -1, -1}
		for i, p := range ad.Pop {
			and := 0
			for j, w := range ad.FP[i*ad.Words : (i+1)*ad.Words] {
				and += bits.OnesCount64(w & q[j])
			}
			if d := nq + int(p); d > 0 {
				if s := 2 * float64(and) / float64(d); s > top[2] {
					top[2] = s
					slices.SortFunc(top, func(a, b float64) int {
						switch {
						case a > b:
							return -1
						case a < b:
							return 1
						}
						return 0
					})
				}
			}
		}
		var want []float64
		for _, s := range top {
			if s >= 0 {
				want = append(want, float64(int64(s*10000+0.5))/10000)
			}
		}
		got := ad.Check(q)
		if !slices.Equal(got.Nearest, want) || got.InDomain != (len(want) == 3 && top[2] > ad.Threshold) {
			t.Fatalf("%s: Check %+v, brute force %v", s, got, want)
		}
		n++
		if got.InDomain {
			in++
		}
	}
	if n < 3000 {
		t.Fatalf("only %d structures compared", n)
	}
	t.Logf("%d structures, %d in domain: same nearest similarities and verdicts as the brute force", n, in)
}
