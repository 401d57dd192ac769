package search

import (
	"cmp"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// maxClasses bounds the weight classes a free-text query is ranked
// through; a query with more is scored document by document.
const maxClasses = 256

// classPlan ranks the matches of a conjunctive free-text query (every
// match holds every token of its groups) without scoring them one by
// one: a document's score depends only on the weight of each query token
// in it, and a token has a few distinct weights (sums of field boosts),
// each a bitmap of its posting (posting.codes). A class is one weight per
// token; its documents all have its score.
type classPlan struct {
	classes []scoreClass
	// cbms holds, per distinct token, the bitmaps of its documents of
	// each of its weights (nil for its posting's base, see baseWithin);
	// posts holds the tokens' postings.
	cbms  [][]*roaring.Bitmap
	posts []*posting
}

type scoreClass struct {
	score float64
	// pick holds, per distinct token, the index in cbms of the class's
	// weight.
	pick []int
}

// codeBitmaps lists p's weight codes with their documents, the first
// code's as nil when it is p's base (its documents are p's less those of
// the others, see baseWithin); ok is false when a weight is kept per
// document (wide).
func (p *posting) codeBitmaps() (codes []uint16, bms []*roaring.Bitmap, ok bool) {
	if len(p.wide()) > 0 {
		return nil, nil, false
	}
	others, cbm := p.codes()
	inOthers := uint64(0)
	for _, b := range cbm {
		inOthers += b.GetCardinality()
	}
	if uint64(p.n()) > inOthers {
		codes, bms = append(codes, p.base), append(bms, nil)
	}
	return append(codes, others...), append(bms, cbm...), true
}

// baseWithin returns the members of set (a subset of p's documents) whose
// weight is p's base code. It may return set itself.
func (p *posting) baseWithin(set *roaring.Bitmap) *roaring.Bitmap {
	_, cbm := p.codes()
	switch len(cbm) {
	case 0:
		return set
	case 1:
		return roaring.AndNot(set, cbm[0])
	}
	return roaring.AndNot(set, roaring.FastOr(cbm...))
}

// conjunctive reports whether every match of p holds every token of its
// required and optional groups (mm asks for all of them), so that its
// matches are an intersection of postings.
func (p *dismaxPlan) conjunctive() bool {
	return len(p.should)+len(p.must) > 0 && p.need == len(p.should)
}

// candidates returns the matches of a conjunctive plan as a bitmap and
// the classes ranking them; cls is nil when there are too many classes
// (the matches are still right).
func (p *dismaxPlan) candidates(ix *Index) (*roaring.Bitmap, *classPlan) {
	// the tokens scored, in the order run adds them up
	var seq []int
	for _, g := range p.must {
		if len(g) == 0 {
			return roaring.New(), &classPlan{} // matches nothing, as in run
		}
		seq = append(seq, g...)
	}
	for _, g := range p.should {
		seq = append(seq, g...)
	}
	toks := slices.Clone(seq)
	slices.Sort(toks)
	toks = slices.Compact(toks)
	bms := make([]*roaring.Bitmap, 0, len(toks))
	for _, n := range toks {
		if p.post[n] == nil {
			return roaring.New(), &classPlan{}
		}
		bms = append(bms, p.post[n].bits())
	}
	var cand *roaring.Bitmap
	if len(bms) == 1 {
		cand = bms[0].Clone()
	} else {
		cand = roaring.FastAnd(bms...)
	}
	for _, g := range p.not {
		ex := make([]*roaring.Bitmap, 0, len(g))
		for _, n := range g {
			if p.post[n] == nil {
				ex = nil
				break
			}
			ex = append(ex, p.post[n].bits())
		}
		switch len(ex) {
		case 0:
		case 1:
			cand.AndNot(ex[0])
		default:
			cand.AndNot(roaring.FastAnd(ex...))
		}
	}
	// the classes: every combination of the tokens' weights
	codes := make([][]uint16, len(toks))
	cbms := make([][]*roaring.Bitmap, len(toks))
	total := 1
	for i, n := range toks {
		c, b, ok := p.post[n].codeBitmaps()
		if !ok {
			return cand, nil
		}
		codes[i], cbms[i] = c, b
		total *= len(c)
		if total > maxClasses {
			return cand, nil
		}
	}
	pos := make([]int, len(seq)) // index in toks of each scored token
	for i, n := range seq {
		pos[i], _ = slices.BinarySearch(toks, n)
	}
	cp := &classPlan{classes: make([]scoreClass, 0, total), cbms: cbms}
	for _, n := range toks {
		cp.posts = append(cp.posts, p.post[n])
	}
	choice := make([]int, len(toks))
	for {
		score := 0.0
		for i, n := range seq {
			score += ix.wtab[codes[pos[i]][choice[pos[i]]]] * p.idf[n]
		}
		cp.classes = append(cp.classes, scoreClass{score: score, pick: slices.Clone(choice)})
		k := 0
		for ; k < len(choice); k++ {
			choice[k]++
			if choice[k] < len(codes[k]) {
				break
			}
			choice[k] = 0
		}
		if k == len(choice) {
			break
		}
	}
	return cand, cp
}

// rank returns the slots of set (a subset of the plan's candidates)
// ordered by keys, whose first is the score, from skip to skip+take: it
// takes the classes by score, each class's members being the set's
// members of its weights, and orders within the classes of one score by
// the other keys.
func (cp *classPlan) rank(ix *Index, set *roaring.Bitmap, skip, take int, keys []sortKey) []int32 {
	classes := slices.Clone(cp.classes)
	desc := keys[0].desc
	slices.SortStableFunc(classes, func(a, b scoreClass) int {
		if desc {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.score, b.score)
	})
	// the set's members of each token's weights, made when first needed
	in := make([][]*roaring.Bitmap, len(cp.cbms))
	for i, b := range cp.cbms {
		in[i] = make([]*roaring.Bitmap, len(b))
	}
	member := func(tok, code int) *roaring.Bitmap {
		if in[tok][code] == nil {
			if b := cp.cbms[tok][code]; b != nil {
				in[tok][code] = roaring.And(set, b)
			} else {
				// set holds only documents of every token
				in[tok][code] = cp.posts[tok].baseWithin(set)
			}
		}
		return in[tok][code]
	}
	var out []int32
	seen := 0 // members of the classes before
	parts := make([]*roaring.Bitmap, len(cp.cbms))
	for i := 0; i < len(classes) && take > 0; {
		j := i + 1
		for j < len(classes) && classes[j].score == classes[i].score {
			j++
		}
		group := roaring.New()
	class:
		for _, c := range classes[i:j] {
			for tok, code := range c.pick {
				parts[tok] = member(tok, code)
				if parts[tok].IsEmpty() {
					continue class
				}
			}
			if len(parts) == 1 {
				group.Or(parts[0])
			} else {
				group.Or(roaring.FastAnd(parts...))
			}
		}
		n := int(group.GetCardinality())
		if seen+n > skip {
			from := max(skip-seen, 0)
			got := ix.firstOf(group, n, from, min(take, n-from), keys[1:], classes[i].score)
			out = append(out, got...)
			take -= len(got)
		}
		seen += n
		i = j
	}
	return out
}

// firstOf returns the slots of set (n members, all scoring score) ordered
// by keys, from skip to skip+take: through the ordering of the first key
// when that is cheap, else by selecting among all members.
func (ix *Index) firstOf(set *roaring.Bitmap, n, skip, take int, keys []sortKey, score float64) []int32 {
	if take <= 0 {
		return nil
	}
	if slots, ok := ix.firstByField(set, n, skip, take, keys, score); ok {
		return slots
	}
	hits := make([]hit, 0, n)
	eachSlot(set, func(slot int32) { hits = append(hits, hit{score: score, slot: slot}) })
	end := min(skip+take, len(hits))
	topK(hits, end, func(a, b hit) bool { return ix.less(keys, a, b) }, false)
	out := make([]int32, 0, end-skip)
	for _, h := range hits[skip:end] {
		out = append(out, h.slot)
	}
	return out
}
