package search

import (
	"math"
	bits64 "math/bits"
	"runtime"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// dismaxPlan is a parsed free-text query: groups of tokens, each token
// numbered, with its postings and idf.
type dismaxPlan struct {
	post              []*posting // per token; nil when no document holds it
	idf               []float64  // per token
	should, must, not [][]int    // groups of token numbers
	need              int
}

// dismax matches free text as CKAN's Solr handler does: each term is looked
// up in every weighted field; mm "2<-1 5<80%" sets how many terms must match;
// "-term" excludes, "+term" is required.
func (ix *Index) dismax(q string) *dismaxPlan {
	p := &dismaxPlan{}
	num := map[string]int{}
	group := func(toks []string) []int {
		g := make([]int, len(toks))
		for i, t := range toks {
			n, ok := num[t]
			if !ok {
				n = len(p.post)
				num[t] = n
				p.post = append(p.post, ix.posting(t))
				p.idf = append(p.idf, math.Log(1+float64(len(ix.docs)+1)/float64(ix.df(t)+1)))
			}
			g[i] = n
		}
		return g
	}
	for _, raw := range splitTerms(q) {
		switch {
		case strings.HasPrefix(raw, "-") && len(raw) > 1:
			p.not = append(p.not, group(Tokens(raw[1:])))
		case strings.HasPrefix(raw, "+") && len(raw) > 1:
			p.must = append(p.must, group(Tokens(raw[1:])))
		default:
			if t := Tokens(raw); len(t) > 0 {
				p.should = append(p.should, group(t))
			}
		}
	}
	p.need = minimumMatch(len(p.should))
	return p
}

// scratch is one search's working memory, reused through scratchPool.
type scratch struct {
	hits []hit
	// gen stamps the slots touched by the current search in acc; a slot
	// with an older stamp has score 0 and no matched groups.
	gen  uint32
	acc  []slotAcc
	cand []uint64
	not  []uint64
	// hbits holds the hits as a bitset for facets (see hitCounter).
	hbits []uint64
}

// slotAcc is one slot's running score and matched group counts.
type slotAcc struct {
	stamp  uint32
	should int32 // optional groups matched
	must   int32 // required groups matched
	score  float64
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// searching bounds the searches running at once (in arrival order): they
// only compute, so more than a few per CPU gain nothing, and each holds
// scratch memory proportional to the index.
var searching = make(chan struct{}, 2*runtime.GOMAXPROCS(0))

func getScratch() *scratch {
	searching <- struct{}{}
	return scratchPool.Get().(*scratch)
}

func putScratch(sc *scratch) {
	if cap(sc.hits) > 1<<16 {
		sc.hits = nil
	}
	scratchPool.Put(sc)
	<-searching
}

// reset prepares the per-slot arrays for n slots.
func (sc *scratch) reset(n int) {
	if len(sc.acc) < n {
		sc.acc = make([]slotAcc, n+n/8)
		sc.gen = 0
	}
	sc.gen++
	if sc.gen == 0 {
		clear(sc.acc)
		sc.gen = 1
	}
	words := (n + 63) / 64
	if cap(sc.cand) < words {
		sc.cand = make([]uint64, words)
		sc.not = make([]uint64, words)
	}
	sc.cand, sc.not = sc.cand[:words], sc.not[:words]
	clear(sc.cand)
	clear(sc.not)
}

// touch returns slot's accumulator, current for this search.
func (sc *scratch) touch(slot int32) *slotAcc {
	a := &sc.acc[slot]
	if a.stamp != sc.gen {
		*a = slotAcc{stamp: sc.gen}
		sc.cand[slot>>6] |= 1 << (slot & 63)
	}
	return a
}

// eachMatch calls fn for every document holding all tokens of group g, by
// ascending slot, with the tokens' weights in that document (in g's order).
func (p *dismaxPlan) eachMatch(ix *Index, g []int, fn func(slot int32, w []float64)) {
	if len(g) == 0 {
		return
	}
	for _, n := range g {
		if p.post[n] == nil {
			return
		}
	}
	first := p.post[g[0]]
	w := make([]float64, len(g))
	if len(g) == 1 {
		first.each(func(r int, slot int32) {
			w[0] = ix.weightAt(first, r, slot)
			fn(slot, w)
		})
		return
	}
	// the other postings are walked beside the first, each with its rank
	its := make([]roaring.IntPeekable, len(g))
	ranks := make([]int, len(g))
	for k := 1; k < len(g); k++ {
		its[k] = p.post[g[k]].bits().Iterator()
	}
	first.each(func(r int, slot int32) {
		for k := 1; k < len(g); k++ {
			it := its[k]
			for it.HasNext() && int32(it.PeekNext()) < slot {
				it.Next()
				ranks[k]++
			}
			if !it.HasNext() || int32(it.PeekNext()) != slot {
				return
			}
		}
		w[0] = ix.weightAt(first, r, slot)
		for k := 1; k < len(g); k++ {
			w[k] = ix.weightAt(p.post[g[k]], ranks[k], slot)
		}
		fn(slot, w)
	})
}

// run appends the matching documents with their scores to hits, by
// ascending slot. It works term at a time: each group's matches add the
// group's score to their slot and count the group; then the touched slots
// are checked. A document's score is the sum, in query order, of its
// matched required and optional groups' token weights times idf.
func (p *dismaxPlan) run(ix *Index, sc *scratch, hits []hit) []hit {
	if len(p.should) == 0 && len(p.must) == 0 && len(p.not) == 0 {
		return hits
	}
	for _, g := range p.must {
		if len(g) == 0 {
			return hits // an empty required group matches nothing
		}
	}
	if len(p.should) == 1 && len(p.should[0]) == 1 && len(p.must) == 0 && len(p.not) == 0 {
		// one word: its postings are the matches
		n := p.should[0][0]
		ps := p.post[n]
		if ps == nil {
			return hits
		}
		idf := p.idf[n]
		ps.each(func(r int, slot int32) {
			score := 0.0
			score += ix.weightAt(ps, r, slot) * idf
			hits = append(hits, hit{score: score, slot: slot})
		})
		return hits
	}
	sc.reset(len(ix.slots))
	for _, g := range p.not {
		p.eachMatch(ix, g, func(slot int32, _ []float64) { sc.not[slot>>6] |= 1 << (slot & 63) })
	}
	// add adds group g's score to each document holding it and counts the
	// group (in must or should).
	add := func(g []int, must bool) {
		if len(g) == 1 { // one token: no intersection
			ps := p.post[g[0]]
			if ps == nil {
				return
			}
			idf := p.idf[g[0]]
			ps.each(func(r int, slot int32) {
				a := sc.touch(slot)
				a.score += ix.weightAt(ps, r, slot) * idf
				if must {
					a.must++
				} else {
					a.should++
				}
			})
			return
		}
		p.eachMatch(ix, g, func(slot int32, w []float64) {
			a := sc.touch(slot)
			s := a.score
			for k, n := range g {
				s += w[k] * p.idf[n]
			}
			a.score = s
			if must {
				a.must++
			} else {
				a.should++
			}
		})
	}
	for _, g := range p.must {
		add(g, true)
	}
	for _, g := range p.should {
		add(g, false)
	}
	need, musts := int32(p.need), int32(len(p.must))
	if musts == 0 && need == 0 {
		// only excluded groups: every other document matches, score 0
		for slot, d := range ix.slots {
			if d != nil && sc.not[slot>>6]&(1<<(slot&63)) == 0 {
				hits = append(hits, hit{slot: int32(slot)})
			}
		}
		return hits
	}
	// a match holds a required or an optional group, so it was touched
	for w, word := range sc.cand {
		word &^= sc.not[w]
		for word != 0 {
			slot := int32(w<<6 | bits64.TrailingZeros64(word))
			word &= word - 1
			if a := &sc.acc[slot]; a.must >= musts && a.should >= need {
				hits = append(hits, hit{score: a.score, slot: slot})
			}
		}
	}
	return hits
}

// minimumMatch is Solr's mm "2<-1 5<80%": up to 2 terms all must match, up
// to 5 all but one, beyond that 80% (rounded down).
func minimumMatch(n int) int {
	switch {
	case n <= 2:
		return n
	case n <= 5:
		return n - 1
	default:
		return n * 80 / 100
	}
}

func hasAll(d *Doc, tokens []string) bool {
	if len(tokens) == 0 {
		return false
	}
	for _, t := range tokens {
		if !d.hasToken(t) {
			return false
		}
	}
	return true
}

// hasToken reports whether d's Text holds t (once indexed, its token ids).
func (d *Doc) hasToken(t string) bool {
	if d.ix == nil {
		_, ok := d.Text[t]
		return ok
	}
	_, found := d.ix.weightOf(d.ix.posting(t), d.slot)
	return found
}

// eachToken calls fn with each token of d's Text until fn returns true.
func (d *Doc) eachToken(fn func(t string) bool) bool {
	if d.ix == nil {
		for t := range d.Text {
			if fn(t) {
				return true
			}
		}
		return false
	}
	return eachTok(d.toks, func(id int32) bool { return fn(d.ix.tokName[id]) })
}

func (ix *Index) score(d *Doc, terms []string) float64 {
	s := 0.0
	for _, t := range terms {
		if w, ok := ix.weightOf(ix.posting(t), d.slot); ok {
			s += w * math.Log(1+float64(len(ix.docs)+1)/float64(ix.df(t)+1))
		}
	}
	return s
}

// splitTerms splits free text on spaces, keeping quoted phrases whole.
func splitTerms(q string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range q {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
