package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func TestTopKMatchesFullSort(t *testing.T) {
	for trial := range 50 {
		n := 1 + rand.IntN(200)
		hits := make([]hit, n)
		for i := range hits {
			hits[i] = hit{slot: int32(i), score: float64(rand.IntN(20))}
		}
		less := func(a, b hit) bool {
			if a.score != b.score {
				return a.score > b.score
			}
			return a.slot < b.slot
		}
		want := slices.Clone(hits)
		slices.SortFunc(want, func(a, b hit) int {
			if less(a, b) {
				return -1
			}
			return 1
		})
		k := rand.IntN(n + 1)
		topK(hits, k, less, trial%2 == 0) // the order starts with score descending
		for i := 0; i < k; i++ {
			if hits[i].slot != want[i].slot {
				t.Fatalf("trial %d n=%d k=%d: position %d: %d want %d", trial, n, k, i, hits[i].slot, want[i].slot)
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
		`+(tags:herg)`: true, `+tags:herg`: true, `+(tags:x OR organization:tox-lab) +tags:herg`: true, `+(tags:x) tags:herg`: false,
		`-(tags:herg)`: false, `+(organization:tox-lab) AND metadata_modified:[2024-01-01T00:00:00Z TO *]`: true,
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

// TestFacetBitsFollowValues switches a field's per-value bitmaps off (too
// many values) and on again (values gone), checking facet counts through
// the bitmaps and through the hits all along.
func TestFacetBitsFollowValues(t *testing.T) {
	defer func(s int64) { bitsSlack = s }(bitsSlack)
	bitsSlack = 30 // on at first, off with many values, on when they go
	ix := New()
	put := func(i int, v ...string) {
		ix.Put(&Doc{ID: fmt.Sprint(i), Fields: map[string][]string{"f": v}, Text: map[string]float64{"x": 1}})
	}
	check := func(step string, wantOn bool, want map[string]int) {
		t.Helper()
		dc := ix.dicts[ix.fieldNum["f"]]
		if dc.bitsOn != wantOn {
			t.Fatalf("%s: bitsOn %v", step, dc.bitsOn)
		}
		multi := 0
		for slot := range dc.one {
			if len(dc.slotIDs(int32(slot))) > 1 {
				multi++
			}
		}
		if dc.multi != multi {
			t.Fatalf("%s: multi %d want %d", step, dc.multi, multi)
		}
		hb := ix.live
		ways := [][]Facet{dc.walkFacet(hb, len(dc.names), 1)}
		if wantOn {
			ways = append(ways, valueFacet(dc, hb, -1), valueFacet(dc, hb, 2))
		}
		for _, got := range ways {
			m := map[string]int{}
			for _, f := range got {
				m[f.Value] = f.Count
			}
			if len(got) == 2 {
				// the two first of want
				items := []Facet{}
				for v, c := range want {
					items = append(items, Facet{v, c})
				}
				sortFacets(items)
				w := map[string]int{}
				for _, f := range items[:2] {
					w[f.Value] = f.Count
				}
				if fmt.Sprint(m) != fmt.Sprint(w) {
					t.Fatalf("%s: limit 2: %v want %v", step, m, w)
				}
				continue
			}
			if fmt.Sprint(m) != fmt.Sprint(want) {
				t.Fatalf("%s: %v want %v", step, m, want)
			}
		}
		res, err := ix.Search(Query{Q: "x", FacetFields: []string{"f"}, FacetLimit: -1, FacetMinCount: 1})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, f := range res.Facets["f"] {
			got[f.Value] = f.Count
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: %v want %v", step, got, want)
		}
	}
	for i := range 3 {
		put(i, "a", "b")
	}
	put(3, "a")
	check("few values", true, map[string]int{"a": 4, "b": 3})
	for i := 4; i < 9; i++ {
		put(i, fmt.Sprint("v", i), "a")
	}
	check("many values", false, map[string]int{"a": 9, "b": 3, "v4": 1, "v5": 1, "v6": 1, "v7": 1, "v8": 1})
	for i := 4; i < 9; i++ {
		ix.Delete(fmt.Sprint(i))
	}
	put(0, "b")
	check("values gone", true, map[string]int{"a": 3, "b": 3})
	for i := 20; i < 80; i++ {
		put(i, "a", "c")
	}
	check("more slots", true, map[string]int{"a": 63, "b": 3, "c": 60})
}

func valueFacet(dc *dict, hb *roaring.Bitmap, limit int) []Facet {
	items, ok := dc.valueFacet(&hitCounter{hb: hb, sc: new(scratch)}, limit, 1, math.MaxInt)
	if !ok {
		panic("over an unbounded budget")
	}
	return items
}

func TestSortTimeOrdersAsText(t *testing.T) {
	vals := []string{"0999-12-31T23:59:59.999999Z", "2024-01-02T03:04:05.000000Z", "2024-01-02T03:04:05.000006Z", "2024-01-10T00:00:00.000000Z", "2025-01-01T00:00:00.000000Z"}
	for i := 1; i < len(vals); i++ {
		a, b := sortTime(vals[i-1]), sortTime(vals[i])
		if a == noTime || b == noTime || a >= b {
			t.Fatalf("%s %d, %s %d", vals[i-1], a, vals[i], b)
		}
	}
	for _, v := range []string{"", "2024-01-02T03:04:05Z", "2024-13-02T03:04:05.000006Z", "2024-01-02T03:04:05.000006+", "2024-01-02 03:04:05.000006Z"} {
		if sortTime(v) != noTime {
			t.Errorf("%q is not a timestamp in the layout", v)
		}
	}
}

// TestTextFieldNamesAreTextFields checks that the numbered text fields a
// document keeps are exactly TextFields.
func TestTextFieldNamesAreTextFields(t *testing.T) {
	if len(textFieldNames) != len(TextFields) {
		t.Fatalf("%d numbered text fields, %d in TextFields", len(textFieldNames), len(TextFields))
	}
	for _, f := range textFieldNames {
		if !TextFields[f] {
			t.Fatalf("%s is not in TextFields", f)
		}
	}
}
