package search

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// facets counts the values of fields over the hits hb (n of them):
// exact fields as dict.facet decides, text fields by walking the hits'
// values.
func (ix *Index) facets(sc *scratch, hb *roaring.Bitmap, n int, fields []string, limit, mincount int) map[string][]Facet {
	out := make(map[string][]Facet, len(fields))
	hc := &hitCounter{hb: hb, sc: sc}
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
			items = dc.facet(hc, n, len(ix.docs), limit, mincount)
		}
		if items == nil {
			items = []Facet{}
		}
		if limit >= 0 && len(items) > limit {
			items = firstFacets(items, limit)
		}
		sortFacets(items)
		out[f] = items
	}
	return out
}

// walkFacetHits is the number of hits up to which a facet is counted by
// walking the hits' values rather than through the values' bitmaps.
const walkFacetHits = 2048

// byValues makes every facet of a field with value bitmaps count through
// them (a variable for tests).
var byValues = false

// walkCost is what a hit costs a walk, against a document of a value's
// bitmap in an intersection: about the same for a hit of one value (read
// from a dense array), walkCostMany per value for a hit of several (read
// through a slice of its own, all over the heap). Measured on generated
// catalogs (organizations, tags).
const (
	walkCost     = 1
	walkCostMany = 8
)

// walkUnits estimates the cost of walking n hits of nDocs documents.
func (dc *dict) walkUnits(n, nDocs int) int {
	nDocs = max(nDocs, 1)
	single := int64(nDocs - min(dc.multi, nDocs))
	manyVals := max(dc.total-single, 0) // values of the documents of several
	per := (walkCost*single + walkCostMany*manyVals) / int64(nDocs)
	return int(int64(n) * max(per, 1))
}

// facet counts an exact field's values over the hits hb (n of the nDocs
// documents), by the cheaper of two ways. Walking the hits costs about
// one step per value of a hit. Counting through the values' bitmaps costs
// about one step per document of each value visited; how many are visited
// depends on where valueFacet can stop, estimated from the values' sizes
// as if the hits were a sample of the documents. A count through the
// bitmaps that goes well past the estimate is left for a walk.
func (dc *dict) facet(hc *hitCounter, n, nDocs, limit, mincount int) []Facet {
	hb := hc.hb
	walk := dc.walkUnits(n, nDocs)
	if !dc.bitsOn {
		return dc.walkFacet(hb, len(dc.names), mincount)
	}
	if byValues {
		walk = math.MaxInt / 4
	} else if n <= walkFacetHits || dc.visitCost(n, nDocs, limit, mincount) > walk {
		return dc.walkFacet(hb, len(dc.names), mincount)
	}
	if items, ok := dc.valueFacet(hc, limit, mincount, 2*walk+4096); ok {
		return items
	}
	return dc.walkFacet(hb, len(dc.names), mincount)
}

// visitCost estimates the documents of the values valueFacet visits.
func (dc *dict) visitCost(n, nDocs, limit, mincount int) int {
	order := dc.freqOrder()
	floor := max(mincount, 1)
	if limit > 0 && limit <= len(order) {
		// the limit-th value's expected count among the hits
		floor = max(floor, int(int64(dc.refs[order[limit-1]])*int64(n)/int64(max(nDocs, 1))))
	}
	cost := 0
	for _, id := range order {
		if int(dc.refs[id]) < floor || limit == 0 {
			break
		}
		cost += int(dc.refs[id])
	}
	return cost
}

// sortFacets orders items by count descending, then value ascending.
func sortFacets(items []Facet) {
	slices.SortFunc(items, func(a, b Facet) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return strings.Compare(a.Value, b.Value)
	})
}

// firstFacets returns the limit first of items in facet order, unordered.
func firstFacets(items []Facet, limit int) []Facet {
	if limit == 0 {
		return items[:0]
	}
	best := facetHeap(items[:limit])
	heap.Init(&best)
	for _, f := range items[limit:] {
		if facetBefore(f, best[0]) {
			best[0] = f
			heap.Fix(&best, 0)
		}
	}
	return best
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
// It gives up (ok false) once the values visited hold more than budget
// documents.
func (dc *dict) valueFacet(hc *hitCounter, limit, mincount, budget int) (items []Facet, ok bool) {
	if limit == 0 {
		return nil, true
	}
	floor := max(mincount, 1)
	var best facetHeap // the limit best so far, the worst on top
	for _, id := range dc.freqOrder() {
		bound := int(dc.refs[id])
		if bound < floor || (limit > 0 && len(best) == limit && bound < best[0].Count) {
			break
		}
		if budget -= bound; budget < 0 {
			return nil, false
		}
		c := hc.count(dc.bm[id])
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
		return items, true
	}
	return best, true
}

// hitCounter counts the hits among a value's documents.
type hitCounter struct {
	hb *roaring.Bitmap
	sc *scratch
	// bits holds the hits as a bitset once a small value was counted
	bits []uint64
	buf  [256]uint32
}

// smallValue is the number of documents up to which a value's hits are
// counted by testing the hits' bits: an intersection of two sorted arrays
// (a value and the hits of a sparse stretch of slots) costs both lengths.
const smallValue = 2048

// count is the number of hits among v's members.
func (hc *hitCounter) count(v *roaring.Bitmap) int {
	if v.GetCardinality() > smallValue {
		return int(hc.hb.AndCardinality(v))
	}
	if hc.bits == nil {
		words := int(hc.hb.DenseSize())
		if cap(hc.sc.hbits) < words {
			hc.sc.hbits = make([]uint64, words)
		}
		hc.bits = hc.sc.hbits[:words]
		clear(hc.bits)
		hc.hb.WriteDenseTo(hc.bits)
	}
	c := 0
	it := v.ManyIterator()
	for {
		n := it.NextMany(hc.buf[:])
		if n == 0 {
			return c
		}
		for _, s := range hc.buf[:n] {
			if w := int(s >> 6); w < len(hc.bits) {
				c += int(hc.bits[w] >> (s & 63) & 1)
			}
		}
	}
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
