package search

import (
	"slices"
)

// topK orders the first k elements of hits (the rest stay unordered): a
// full sort when k is large, otherwise a bounded selection through a heap
// of the k best so far, the worst on top. With scoreDesc (the order starts
// with score descending), a hit scoring below the worst kept is passed
// over without calling less.
func topK(hits []hit, k int, less func(a, b hit) bool, scoreDesc bool) {
	order := func(a, b hit) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	}
	if k >= len(hits)/4 {
		slices.SortFunc(hits, order)
		return
	}
	if k == 0 {
		return
	}
	top := hits[:k]
	down := func(i int) {
		for {
			w := i
			if l := 2*i + 1; l < k && less(top[w], top[l]) {
				w = l
			}
			if r := 2*i + 2; r < k && less(top[w], top[r]) {
				w = r
			}
			if w == i {
				return
			}
			top[i], top[w] = top[w], top[i]
			i = w
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for i := k; i < len(hits); i++ {
		if scoreDesc && hits[i].score < top[0].score || !less(hits[i], top[0]) {
			continue
		}
		hits[i], top[0] = top[0], hits[i]
		down(0)
	}
	slices.SortFunc(top, order)
}
