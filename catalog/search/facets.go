package search

import (
	"cmp"
	"container/heap"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// facets counts the values of fields over the hits hb (n of them).
// Exact fields are counted from their per-value bitmaps (valueFacet);
// text fields, and exact fields when the hits are few, by walking the
// hits' values.
func (ix *Index) facets(hb *roaring.Bitmap, n int, fields []string, limit, mincount int) map[string][]Facet {
	out := make(map[string][]Facet, len(fields))
	for _, f := range fields {
		var items []Facet
		if TextFields[f] {
			counts := map[string]int{}
			eachSlot(hb, func(slot int32) {
				for _, v := range ix.slots[slot].values(f) {
					counts[v]++
				}
			})
			items = make([]Facet, 0, len(counts))
			for v, c := range counts {
				if c >= mincount {
					items = append(items, Facet{Value: v, Count: c})
				}
			}
		} else if num, ok := ix.fieldNum[f]; ok {
			dc := ix.dicts[num]
			if n <= walkFacetHits || (limit < 0 && n*8 < len(ix.docs)) {
				items = dc.walkFacet(hb, len(dc.names), mincount)
			} else {
				items = dc.valueFacet(hb, limit, mincount)
			}
		}
		if items == nil {
			items = []Facet{}
		}
		sortFacets(items)
		if limit >= 0 && len(items) > limit {
			items = items[:limit]
		}
		out[f] = items
	}
	return out
}

// walkFacetHits is the number of hits up to which a facet is counted by
// walking the hits' values rather than through the values' bitmaps.
var walkFacetHits = 2048

// sortFacets orders items by count descending, then value ascending.
func sortFacets(items []Facet) {
	slices.SortFunc(items, func(a, b Facet) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return strings.Compare(a.Value, b.Value)
	})
}

// walkFacet counts the values of the hits by visiting each hit.
func (dc *dict) walkFacet(hb *roaring.Bitmap, nValues, mincount int) []Facet {
	counts := make([]int32, nValues)
	one := dc.one
	eachSlot(hb, func(slot int32) {
		if int(slot) >= len(one) {
			return
		}
		switch id := one[slot]; {
		case id >= 0:
			counts[id]++
		case id == manyValues:
			for _, id := range dc.many[slot] {
				counts[id]++
			}
		}
	})
	var items []Facet
	for id, c := range counts {
		if c > 0 && int(c) >= mincount {
			items = append(items, Facet{Value: dc.names[id], Count: int(c)})
		}
	}
	return items
}

// valueFacet counts each value as the size of its bitmap's intersection
// with the hits, visiting the values by descending number of documents
// (an upper bound of their count). With a limit it stops once that bound
// falls below the limit-th best count so far (or below mincount): no value
// left can enter the first limit. The result is unordered.
func (dc *dict) valueFacet(hb *roaring.Bitmap, limit, mincount int) []Facet {
	if limit == 0 {
		return nil
	}
	floor := max(mincount, 1)
	var best facetHeap // the limit best so far, the worst on top
	var items []Facet
	for _, id := range dc.freqOrder() {
		bound := int(dc.refs[id])
		if bound < floor || (limit > 0 && len(best) == limit && bound < best[0].Count) {
			break
		}
		c := int(hb.AndCardinality(dc.bm[id]))
		if c < floor {
			continue
		}
		f := Facet{Value: dc.names[id], Count: c}
		switch {
		case limit < 0:
			items = append(items, f)
		case len(best) < limit:
			heap.Push(&best, f)
		case facetBefore(f, best[0]):
			best[0] = f
			heap.Fix(&best, 0)
		}
	}
	if limit < 0 {
		return items
	}
	return best
}

// facetBefore reports whether a comes before b in a facet's order.
func facetBefore(a, b Facet) bool {
	if a.Count != b.Count {
		return a.Count > b.Count
	}
	return a.Value < b.Value
}

// facetHeap is a heap of facet items, the last in facet order on top.
type facetHeap []Facet

func (h facetHeap) Len() int           { return len(h) }
func (h facetHeap) Less(i, j int) bool { return facetBefore(h[j], h[i]) }
func (h facetHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *facetHeap) Push(x any)        { *h = append(*h, x.(Facet)) }
func (h *facetHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// eachSlot calls fn with every member of b, ascending.
func eachSlot(b *roaring.Bitmap, fn func(slot int32)) {
	var buf [256]uint32
	it := b.ManyIterator()
	for {
		n := it.NextMany(buf[:])
		if n == 0 {
			return
		}
		for _, s := range buf[:n] {
			fn(int32(s))
		}
	}
}

// unique drops repeated values, keeping the first of each.
func unique(vals []string) []string {
	if len(vals) < 2 {
		return vals
	}
	out := vals[:0:0]
	for i, v := range vals {
		dup := false
		for _, w := range vals[:i] {
			if w == v {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}
