package ml

import (
	"math/rand"
	"sort"
)

// RandomFolds assigns each of the labelled rows to one of k folds at random,
// stratified by class, deterministically for a seed.
func RandomFolds(y []bool, k int, seed int64) []int {
	r := rand.New(rand.NewSource(seed))
	fold := make([]int, len(y))
	for _, cls := range []bool{true, false} {
		var idx []int
		for i, v := range y {
			if v == cls {
				idx = append(idx, i)
			}
		}
		r.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		for j, i := range idx {
			fold[i] = j % k
		}
	}
	return fold
}

// ScaffoldFolds assigns rows to k folds so that rows sharing a scaffold key
// stay in one fold: scaffold groups, largest first (ties in seeded random
// order), each go to the fold holding the fewest rows so far.
func ScaffoldFolds(keys []string, k int, seed int64) []int {
	groups, names := ScaffoldGroups(keys, seed)
	size := make([]int, k)
	fold := make([]int, len(keys))
	for _, s := range names {
		f := 0
		for j := 1; j < k; j++ {
			if size[j] < size[f] {
				f = j
			}
		}
		for _, i := range groups[s] {
			fold[i] = f
		}
		size[f] += len(groups[s])
	}
	return fold
}

// ScaffoldGroups groups the rows by scaffold key: groups maps each key to
// its rows, and names lists the keys largest group first, groups of equal
// size in an order shuffled by seed (not file order, which some sources
// sort by label).
func ScaffoldGroups(keys []string, seed int64) (groups map[string][]int, names []string) {
	groups = map[string][]int{}
	for i, s := range keys {
		if _, ok := groups[s]; !ok {
			names = append(names, s)
		}
		groups[s] = append(groups[s], i)
	}
	r := rand.New(rand.NewSource(seed))
	r.Shuffle(len(names), func(a, b int) { names[a], names[b] = names[b], names[a] })
	sort.SliceStable(names, func(a, b int) bool { return len(groups[names[a]]) > len(groups[names[b]]) })
	return groups, names
}
