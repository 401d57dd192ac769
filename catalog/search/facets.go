package search

import (
	bits64 "math/bits"
	"sort"
)

// facets counts the values of fields over hits: through interned value
// ids and counters for exact fields, through a map for text fields.
func (ix *Index) facets(sc *scratch, all []hit, fields []string, limit, mincount int) map[string][]Facet {
	out := make(map[string][]Facet, len(fields))
	var hitBits []uint64
	for _, f := range fields {
		hits := all
		var items []Facet
		if TextFields[f] {
			counts := map[string]int{}
			for _, h := range hits {
				for _, v := range ix.slots[h.slot].values(f) {
					counts[v]++
				}
			}
			items = make([]Facet, 0, len(counts))
			for v, c := range counts {
				if c >= mincount {
					items = append(items, Facet{Value: v, Count: c})
				}
			}
		} else if n, ok := ix.fieldNum[f]; ok {
			dc := ix.dicts[n]
			counts := make([]int32, len(dc.names))
			one := dc.one
			words := (len(ix.slots) + 63) / 64
			// a word of a bitset costs about a quarter of a match's lookup
			if dc.bitsOn && len(dc.ids)*words < 4*len(hits) {
				// count each value as the bits it shares with the matches
				if hitBits == nil {
					hitBits = sc.hitBits(hits, words)
				}
				for id, b := range dc.bits {
					c := 0
					for w, x := range b[:min(len(b), len(hitBits))] {
						c += bits64.OnesCount64(x & hitBits[w])
					}
					counts[id] = int32(c)
				}
				hits = hits[:0]
			}
			for _, h := range hits {
				if int(h.slot) >= len(one) {
					continue
				}
				switch id := one[h.slot]; {
				case id >= 0:
					counts[id]++
				case id == manyValues:
					for _, id := range dc.many[h.slot] {
						counts[id]++
					}
				}
			}
			for id, c := range counts {
				if c > 0 && int(c) >= mincount {
					items = append(items, Facet{Value: dc.names[id], Count: int(c)})
				}
			}
		}
		if items == nil {
			items = []Facet{}
		}
		sort.Slice(items, func(i, j int) bool {
			if items[i].Count != items[j].Count {
				return items[i].Count > items[j].Count
			}
			return items[i].Value < items[j].Value
		})
		if limit >= 0 && len(items) > limit {
			items = items[:limit]
		}
		out[f] = items
	}
	return out
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
