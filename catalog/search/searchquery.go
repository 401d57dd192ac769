package search

import (
	"slices"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// Query is one search.
type Query struct {
	// Q is the main query: "" or "*:*" for all, a Lucene query when it has
	// a field ("name:x"), otherwise dismax terms.
	Q string
	// Filters are fq strings, all of which must match.
	Filters []string
	// Sort is e.g. "score desc, metadata_modified desc".
	Sort string
	// Start and Rows page through the results.
	Start, Rows int
	// FacetFields are the fields to count.
	FacetFields []string
	// FacetLimit caps items per facet (negative: unlimited).
	FacetLimit int
	// FacetMinCount drops items with fewer documents.
	FacetMinCount int
	// Allow, if set, is applied to every match (permissions).
	Allow func(d *Doc) bool
	// Only, if set, is applied to every match, Public ones included (a
	// restriction found outside the index, such as a structure filter).
	Only func(d *Doc) bool
	// PublicOnly says that Allow accepts exactly the Public documents
	// (an anonymous caller): matches are then kept by their public bit,
	// without asking Allow.
	PublicOnly bool
}

// Facet is one counted value.
type Facet struct {
	// Value is the field value.
	Value string
	// Count is the number of matching documents.
	Count int
}

// Result is a search outcome.
type Result struct {
	// Count is the number of matches before paging.
	Count int
	// IDs are the ids of the page, in order.
	IDs []string
	// Facets holds, per requested field, the counted values by count
	// descending.
	Facets map[string][]Facet
}

// hit is a match: its slot and score (no pointer, so that moving hits
// costs no write barriers and pooled hits hold no documents).
type hit struct {
	score float64
	slot  int32
}

// Search runs q. A malformed query or sort, or one past the bounds in
// limits.go, gives an *Error. It only reads the index, so searches may run
// concurrently under a read lock.
func (ix *Index) Search(q Query) (Result, error) {
	if err := checkLength("query", q.Q); err != nil {
		return Result{}, err
	}
	if len(q.FacetFields) > MaxFacetFields {
		return Result{}, &Error{Message: "too many facet fields: " + strconv.Itoa(len(q.FacetFields)) + ", at most " + strconv.Itoa(MaxFacetFields)}
	}
	facetFields := unique(q.FacetFields)
	left := newBudget()
	filters := make([]node, 0, min(len(q.Filters), MaxClauses))
	for _, f := range q.Filters {
		if strings.TrimSpace(f) == "" {
			continue
		}
		n, err := parse(f, left)
		if err != nil {
			return Result{}, err
		}
		filters = append(filters, ix.bind(n))
	}
	keys, err := parseSort(q.Sort)
	if err != nil {
		return Result{}, err
	}
	m, err := ix.matcher(q.Q, left)
	if err != nil {
		return Result{}, err
	}
	sc := getScratch()
	defer putScratch(sc)
	// the matches as a bitmap, ranked by classes of equal score, when
	// the main query allows it; else as scored hits
	var cand *roaring.Bitmap
	var cls *classPlan
	switch {
	case m.all:
		cand = ix.live
	case m.dismax != nil && m.dismax.conjunctive():
		cand, cls = m.dismax.candidates(ix)
	}
	scoreAt := slices.IndexFunc(keys, func(k sortKey) bool { return k.idx == keyScore })
	if cand != nil && (m.all || scoreAt < 0 || scoreAt == 0 && cls != nil) {
		res := Result{}
		hb := ix.admit(cand, q, filters)
		res.Count = int(hb.GetCardinality())
		if len(facetFields) > 0 {
			res.Facets = ix.facets(sc, hb, res.Count, facetFields, q.FacetLimit, q.FacetMinCount)
		}
		start := min(max(q.Start, 0), res.Count)
		take := min(max(q.Rows, 0), res.Count-start)
		var slots []int32
		switch {
		case scoreAt < 0: // sorted by stored fields alone
			slots = ix.firstOf(hb, res.Count, start, take, keys, 0)
		case m.all: // every match scores 1: the score orders nothing
			rest := slices.Delete(slices.Clone(keys), scoreAt, scoreAt+1)
			slots = ix.firstOf(hb, res.Count, start, take, rest, 1)
		default:
			slots = cls.rank(ix, hb, start, take, keys)
		}
		for _, slot := range slots {
			res.IDs = append(res.IDs, ix.slots[slot].ID)
		}
		return res, nil
	}
	hits := sc.hits[:0]
	if m.dismax != nil {
		hits = m.dismax.run(ix, sc, hits)
	} else {
		for slot, d := range ix.slots {
			if d == nil {
				continue
			}
			if s, ok := m.fn(d); ok {
				hits = append(hits, hit{score: s, slot: int32(slot)})
			}
		}
	}
	if len(filters) > 0 || q.Allow != nil || q.Only != nil {
		kept := hits[:0]
	next:
		for _, h := range hits {
			d := ix.slots[h.slot]
			for _, f := range filters {
				if !f.match(d) {
					continue next
				}
			}
			if !ix.allowed(q, h.slot, d) {
				continue
			}
			kept = append(kept, h)
		}
		hits = kept
	}
	sc.hits = hits
	res := Result{Count: len(hits)}
	if len(facetFields) > 0 {
		hb := roaring.New()
		buf := make([]uint32, 0, min(len(hits), 4096))
		for i, h := range hits {
			buf = append(buf, uint32(h.slot))
			if len(buf) == cap(buf) || i == len(hits)-1 {
				hb.AddMany(buf)
				buf = buf[:0]
			}
		}
		res.Facets = ix.facets(sc, hb, len(hits), facetFields, q.FacetLimit, q.FacetMinCount)
	}
	cmp := func(a, b hit) bool { return ix.less(keys, a, b) }
	scoreDesc := keys[0].idx == keyScore && keys[0].desc
	if scoreDesc {
		cmp = func(a, b hit) bool {
			if a.score != b.score {
				return a.score > b.score
			}
			return ix.less(keys[1:], a, b)
		}
	}
	// start and rows are clamped to the matches first, so that no sum of
	// them overflows
	start := min(max(q.Start, 0), len(hits))
	end := start + min(max(q.Rows, 0), len(hits)-start)
	topK(hits, end, cmp, scoreDesc)
	for _, h := range hits[start:end] {
		res.IDs = append(res.IDs, ix.slots[h.slot].ID)
	}
	return res, nil
}

// allowed applies Allow (to documents not Public) and Only to the
// document d in slot.
func (ix *Index) allowed(q Query, slot int32, d *Doc) bool {
	if q.Allow != nil && ix.public[slot>>6]&(1<<(slot&63)) == 0 {
		if q.PublicOnly || !q.Allow(d) {
			return false
		}
	}
	return q.Only == nil || q.Only(d)
}

// admit returns the members of cand that pass the filters, Allow and
// Only, as a new bitmap (cand is not changed). Filters that filterBitmap
// turns into bitmaps are intersected, the others asked per member. Public
// members pass Allow together, through the public bitmap; with
// PublicOnly, the others fail it together.
func (ix *Index) admit(cand *roaring.Bitmap, q Query, filters []node) *roaring.Bitmap {
	// filters made of exact values and free-text terms are intersections
	rest := make([]node, 0, len(filters))
	for _, f := range filters {
		if b, ok := ix.filterBitmap(f); ok {
			cand = roaring.And(cand, b)
		} else {
			rest = append(rest, f)
		}
	}
	filters = rest
	if len(filters) == 0 && q.Only == nil {
		switch {
		case q.Allow == nil:
			return cand.Clone()
		case q.PublicOnly:
			return roaring.And(cand, ix.pubBM)
		}
		out := roaring.And(cand, ix.pubBM)
		var buf []uint32
		eachSlot(roaring.AndNot(cand, ix.pubBM), func(slot int32) {
			if q.Allow(ix.slots[slot]) {
				buf = append(buf, uint32(slot))
			}
		})
		out.AddMany(buf)
		return out
	}
	var buf []uint32
	eachSlot(cand, func(slot int32) {
		d := ix.slots[slot]
		for _, f := range filters {
			if !f.match(d) {
				return
			}
		}
		if ix.allowed(q, slot, d) {
			buf = append(buf, uint32(slot))
		}
	})
	out := roaring.New()
	out.AddMany(buf)
	return out
}

// match is the main query: a plan over the postings for free text, else a
// function applied to every document.
type match struct {
	fn     func(*Doc) (float64, bool)
	dismax *dismaxPlan
	// all is set when every document matches with score 1.
	all bool
}

// matcher builds the main query's matcher, spending from left.
func (ix *Index) matcher(q string, left *budget) (match, error) {
	q = strings.TrimSpace(q)
	if q == "" || q == "*:*" || q == "*" {
		return match{fn: func(*Doc) (float64, bool) { return 1, true }, all: true}, nil
	}
	if strings.Contains(q, ":") {
		n, err := parse(q, left)
		if err != nil {
			return match{}, err
		}
		terms := n.terms(nil)
		n = ix.bind(n)
		return match{fn: func(d *Doc) (float64, bool) {
			if !n.match(d) {
				return 0, false
			}
			return ix.score(d, terms) + 1, true
		}}, nil
	}
	// free text: every token is a clause
	if err := left.spend(tokenCount(q), false); err != nil {
		return match{}, err
	}
	return match{dismax: ix.dismax(q)}, nil
}
