package chemindex

import "sort"

// maxCompareRunes bounds the names compared by edit distance (longer text
// is cut), so a suggestion costs at most maxCompareRunes² steps per name.
const maxCompareRunes = 64

// maxCandidates is how many names sharing the most trigrams with the query
// are compared by edit distance.
const maxCandidates = 200

// trigramsOf appends to out the distinct trigrams of " "+s+" " (s
// normalized, cut to maxCompareRunes runes), each as three 21-bit runes.
func trigramsOf(s string, out []uint64) []uint64 {
	r := []rune(" " + s + " ")
	if len(r) > maxCompareRunes+2 {
		r = r[:maxCompareRunes+2]
	}
next:
	for i := 0; i+3 <= len(r); i++ {
		t := uint64(r[i])<<42 | uint64(r[i+1])<<21 | uint64(r[i+2])
		for _, x := range out {
			if x == t {
				continue next
			}
		}
		out = append(out, t)
	}
	return out
}

// suggest returns the known names nearest to q: candidates by shared
// trigrams, ranked by edit distance.
func (s *snapshot) suggest(q string) []Suggestion {
	n := normName(q)
	type cand struct {
		l     *layer
		k     int32
		score int
	}
	var cands []cand
	tri := trigramsOf(n, nil)
	for _, l := range s.layers {
		score := map[int32]int{}
		for _, t := range tri {
			for _, k := range l.trigrams[t] {
				score[k]++
			}
		}
		for k, v := range score {
			cands = append(cands, cand{l, k, v})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return cands[i].k < cands[j].k
	})
	if len(cands) > maxCandidates {
		cands = cands[:maxCandidates]
	}
	out := make([]Suggestion, 0, len(cands))
	for _, c := range cands {
		name := c.l.names[c.k]
		out = append(out, Suggestion{Name: name, DTXSID: c.l.compounds[c.l.nameComp[c.k]].DTXSID, Distance: editDistance(n, name)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Distance < out[j].Distance })
	if len(out) > maxSuggestions {
		out = out[:maxSuggestions]
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, each cut to
// maxCompareRunes runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > maxCompareRunes {
		ra = ra[:maxCompareRunes]
	}
	if len(rb) > maxCompareRunes {
		rb = rb[:maxCompareRunes]
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := prev[j-1]
			if ra[i-1] != rb[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			cur[j] = c
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
