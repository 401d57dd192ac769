package search

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// ordering lists the documents by one sort field's value, ascending, so
// that the first rows of a sort by that field are found by walking it
// instead of ordering every hit. main is sorted once and then only merged
// into; side holds, sorted, the documents put since, so that a write
// costs a search and a copy of side rather than of main. An entry is the
// document in its slot only while the slot's stamp is the entry's (a
// document put again, or deleted, leaves a stale entry in main, skipped
// by walks and dropped at the next merge).
type ordering struct {
	idx  int
	main []ordEntry
	side []ordEntry
}

type ordEntry struct {
	slot  int32
	stamp uint32
}

// cmpField compares slots a and b by sort field idx as less does.
func (ix *Index) cmpField(idx int, a, b int32) int {
	if ta, tb := ix.sortTime[idx][a], ix.sortTime[idx][b]; ta != noTime && tb != noTime {
		return cmp.Compare(ta, tb)
	}
	col := ix.sortCol[idx]
	return strings.Compare(col[a], col[b])
}

// valid reports whether e is the entry of the document in its slot.
func (ix *Index) valid(e ordEntry) bool { return ix.stamp[e.slot] == e.stamp }

// newStamp stamps slot for a document being put.
func (ix *Index) newStamp(slot int32) {
	for int(slot) >= len(ix.stamp) {
		ix.stamp = append(ix.stamp, 0)
	}
	if ix.nextStamp == math.MaxUint32 {
		// stamps are about to be reused: start the orderings afresh
		ix.nextStamp = 0
		for s := range ix.stamp {
			if ix.stamp[s] != 0 {
				ix.nextStamp++
				ix.stamp[s] = ix.nextStamp
			}
		}
		ix.ord = [len(sortFields)]*ordering{}
	}
	ix.nextStamp++
	ix.stamp[slot] = ix.nextStamp
}

// ordered notes the document just put in slot in the orderings built.
func (ix *Index) ordered(slot int32) {
	for _, o := range ix.ord {
		if o == nil {
			continue
		}
		e := ordEntry{slot, ix.stamp[slot]}
		i, _ := slices.BinarySearchFunc(o.side, e, func(a, b ordEntry) int { return ix.cmpField(o.idx, a.slot, b.slot) })
		o.side = slices.Insert(o.side, i, e)
		if len(o.side) > sideMax+len(o.main)/32 {
			o.merge(ix)
		}
	}
}

// unordered drops the document in slot, about to be deleted, from the
// orderings' side lists (main's entry goes stale with the slot's stamp).
func (ix *Index) unordered(slot int32) {
	for _, o := range ix.ord {
		if o == nil {
			continue
		}
		o.side = slices.DeleteFunc(o.side, func(e ordEntry) bool { return e.slot == slot })
	}
}

// sideMax is the length of a side list beyond which (plus 1/32 of main)
// it is merged into main (a variable for tests).
var sideMax = 1024

// merge moves side into main, dropping main's stale entries.
func (o *ordering) merge(ix *Index) {
	out := make([]ordEntry, 0, len(o.main)+len(o.side))
	i, j := 0, 0
	for i < len(o.main) || j < len(o.side) {
		if i < len(o.main) && !ix.valid(o.main[i]) {
			i++
			continue
		}
		if j >= len(o.side) || (i < len(o.main) && ix.cmpField(o.idx, o.main[i].slot, o.side[j].slot) <= 0) {
			out = append(out, o.main[i])
			i++
		} else {
			out = append(out, o.side[j])
			j++
		}
	}
	o.main, o.side = out, nil
}

// ordering returns the ordering of sort field idx, building it on first
// use. Searches may call it at once; writes hold the caller's lock.
func (ix *Index) ordering(idx int) *ordering {
	ix.ordMu.Lock()
	defer ix.ordMu.Unlock()
	if o := ix.ord[idx]; o != nil {
		return o
	}
	o := &ordering{idx: idx, main: make([]ordEntry, 0, len(ix.docs))}
	for slot, d := range ix.slots {
		if d != nil {
			o.main = append(o.main, ordEntry{int32(slot), ix.stamp[slot]})
		}
	}
	slices.SortFunc(o.main, func(a, b ordEntry) int { return ix.cmpField(idx, a.slot, b.slot) })
	ix.ord[idx] = o
	return o
}

// walk calls fn with the slots of o's valid entries in order (descending
// with desc) until fn returns false.
func (o *ordering) walk(ix *Index, desc bool, fn func(slot int32) bool) {
	m, s := o.main, o.side
	for len(m) > 0 || len(s) > 0 {
		if len(m) > 0 && !ix.valid(m[pick(len(m), desc)]) {
			m = drop(m, desc)
			continue
		}
		var e ordEntry
		useMain := len(s) == 0
		if !useMain && len(m) > 0 {
			c := ix.cmpField(o.idx, m[pick(len(m), desc)].slot, s[pick(len(s), desc)].slot)
			useMain = (c <= 0) != desc || c == 0
		}
		if useMain {
			e, m = m[pick(len(m), desc)], drop(m, desc)
		} else {
			e, s = s[pick(len(s), desc)], drop(s, desc)
		}
		if !fn(e.slot) {
			return
		}
	}
}

// pick is the index of the next entry of a list of n: the first, or the
// last when walking down.
func pick(n int, desc bool) int {
	if desc {
		return n - 1
	}
	return 0
}

func drop(l []ordEntry, desc bool) []ordEntry {
	if desc {
		return l[:len(l)-1]
	}
	return l[1:]
}

// firstByField returns the slots of set (n members), ordered by keys,
// from skip to skip+take, by walking the ordering of keys[0] (a sort
// field): it collects the first skip+take members and those tied with
// the last of them on keys[0], then orders those by keys. ok is false
// when the walk would visit many more entries than set has members
// (ordering set's members is then cheaper).
func (ix *Index) firstByField(set *roaring.Bitmap, n, skip, take int, keys []sortKey, score float64) (slots []int32, ok bool) {
	need := skip + take
	if keys[0].idx < 0 || n == 0 || need*len(ix.docs)/n > n/4 {
		return nil, false
	}
	o := ix.ordering(keys[0].idx)
	got := make([]hit, 0, need+8)
	o.walk(ix, keys[0].desc, func(slot int32) bool {
		if len(got) >= need && ix.cmpField(keys[0].idx, slot, got[len(got)-1].slot) != 0 {
			return false
		}
		if set.Contains(uint32(slot)) {
			got = append(got, hit{score: score, slot: slot})
		}
		return true
	})
	slices.SortFunc(got, func(a, b hit) int {
		if ix.less(keys, a, b) {
			return -1
		}
		if ix.less(keys, b, a) {
			return 1
		}
		return 0
	})
	skip = min(skip, len(got))
	for _, h := range got[skip:min(need, len(got))] {
		slots = append(slots, h.slot)
	}
	return slots, true
}
