package main

import (
	"fmt"
	"math"
	"testing"

	"toxgate/sdk/ml"
)

// TestScaffoldHoldoutKeepsScaffoldsApart checks the held-out scaffold
// split: every row on exactly one side, no scaffold on both, the held-out
// side about the requested share and made of the rarest scaffolds.
func TestScaffoldHoldoutKeepsScaffoldsApart(t *testing.T) {
	var sc []string
	for g := 0; g < 60; g++ {
		for k := 0; k <= 60/(g+1); k++ { // group g has 60/(g+1)+1 rows
			sc = append(sc, fmt.Sprintf("s%d", g))
		}
	}
	train, test := scaffoldHoldout(sc, 0.2, 1)
	if len(train)+len(test) != len(sc) {
		t.Fatalf("%d + %d rows, want %d", len(train), len(test), len(sc))
	}
	side := map[string]int{}
	seen := map[int]bool{}
	for s, rows := range [][]int{train, test} {
		for _, r := range rows {
			if seen[r] {
				t.Fatalf("row %d on both sides", r)
			}
			seen[r] = true
			if prev, ok := side[sc[r]]; ok && prev != s {
				t.Fatalf("scaffold %s on both sides", sc[r])
			}
			side[sc[r]] = s
		}
	}
	if f := float64(len(test)) / float64(len(sc)); f < 0.2 || f > 0.3 {
		t.Errorf("held-out share %.3f, want about 0.2", f)
	}
	largestTest := 0
	for _, r := range test {
		largestTest = max(largestTest, count(sc, sc[r]))
	}
	if smallestTrain := count(sc, sc[train[len(train)-1]]); largestTest > smallestTrain {
		t.Errorf("held-out scaffold of %d rows while a training one has %d", largestTest, smallestTrain)
	}
}

func count(sc []string, s string) int {
	n := 0
	for _, v := range sc {
		if v == s {
			n++
		}
	}
	return n
}

// TestSelectionScoreOnScaffolds checks that an endpoint judged on new
// structures chooses on both splits, and the others on the random split.
func TestSelectionScoreOnScaffolds(t *testing.T) {
	res := []ml.CVResult{{Split: "random", Scores: ml.Scores{ROCAUC: 0.8}}, {Split: "scaffold", Scores: ml.Scores{ROCAUC: 0.6}}}
	if got := selectionScore(taskDef{}, res); got != 0.8 {
		t.Errorf("random-split selection %v, want 0.8", got)
	}
	if got := selectionScore(taskDef{OnScaffolds: true}, res); math.Abs(got-0.7) > 1e-12 {
		t.Errorf("both-split selection %v, want 0.7", got)
	}
}
