package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestTopKMatchesFullSort(t *testing.T) {
	for trial := range 50 {
		n := 1 + rand.IntN(200)
		hits := make([]hit, n)
		for i := range hits {
			hits[i] = hit{doc: &Doc{ID: fmt.Sprintf("%04d", i)}, score: float64(rand.IntN(20))}
		}
		less := func(a, b hit) bool {
			if a.score != b.score {
				return a.score > b.score
			}
			return a.doc.ID < b.doc.ID
		}
		want := slices.Clone(hits)
		slices.SortFunc(want, func(a, b hit) int {
			if less(a, b) {
				return -1
			}
			return 1
		})
		k := rand.IntN(n + 1)
		topK(hits, k, less)
		for i := 0; i < k; i++ {
			if hits[i].doc.ID != want[i].doc.ID {
				t.Fatalf("trial %d n=%d k=%d: position %d: %s want %s", trial, n, k, i, hits[i].doc.ID, want[i].doc.ID)
			}
		}
	}
}

func TestParseAndMatch(t *testing.T) {
	d := &Doc{ID: "1", Fields: map[string][]string{"tags": {"herg", "in vitro"}, "organization": {"tox-lab"}, "title": {"hERG blockers"}, "metadata_modified": {"2024-05-01T00:00:00.000000Z"}},
		Text: map[string]float64{"herg": 6, "blocker": 4}}
	cases := map[string]bool{
		`tags:herg`: true, `tags:"in vitro"`: true, `-tags:herg`: false, `tags:herg AND organization:tox-lab`: true,
		`tags:x OR organization:tox-lab`: true, `tags:(x OR herg)`: true, `NOT tags:x`: true, `title:blockers`: true,
		`organization:tox*`: true, `metadata_modified:[2024-01-01T00:00:00Z TO *]`: true, `metadata_modified:[* TO 2023-01-01T00:00:00Z]`: false,
		`herg`: true, `tags:*`: true, `extras_x:*`: false,
	}
	for q, want := range cases {
		n, err := Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := n.match(d); got != want {
			t.Errorf("%s: got %v want %v", q, got, want)
		}
	}
	for _, bad := range []string{`tags:"open`, `(tags:x`, `tags:[a b]`} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestMinimumMatch(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 2, 3: 2, 5: 4, 6: 4, 10: 8} {
		if got := minimumMatch(n); got != want {
			t.Errorf("mm(%d)=%d want %d", n, got, want)
		}
	}
}
