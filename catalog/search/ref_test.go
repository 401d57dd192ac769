package search

// A plain map-based search, without postings by slot, interned facet values
// or sort values by index: the reference for TestSearchMatchesReference.

import (
	"math"
	"sort"
	"strings"
)

type refIndex struct {
	docs map[string]*Doc
	post map[string]map[*Doc]struct{}
}

func refNew() *refIndex {
	return &refIndex{docs: map[string]*Doc{}, post: map[string]map[*Doc]struct{}{}}
}

func (ix *refIndex) refDF(t string) int { return len(ix.post[t]) }

// Put adds or replaces a document. Repeated values of a field are kept once.
func (ix *refIndex) refPut(d *Doc) {
	for f, vals := range d.Fields {
		d.Fields[f] = unique(vals)
	}
	ix.refDelete(d.ID)
	ix.docs[d.ID] = d
	for t := range d.Text {
		p := ix.post[t]
		if p == nil {
			p = map[*Doc]struct{}{}
			ix.post[t] = p
		}
		p[d] = struct{}{}
	}
}

func (ix *refIndex) refDelete(id string) {
	old, ok := ix.docs[id]
	if !ok {
		return
	}
	for t := range old.Text {
		if p := ix.post[t]; p != nil {
			delete(p, old)
			if len(p) == 0 {
				delete(ix.post, t)
			}
		}
	}
	delete(ix.docs, id)
}

func (ix *refIndex) refSearch(q Query) (Result, error) {
	filters := make([]node, 0, len(q.Filters))
	for _, f := range q.Filters {
		if strings.TrimSpace(f) == "" {
			continue
		}
		n, err := Parse(f)
		if err != nil {
			return Result{}, err
		}
		filters = append(filters, n)
	}
	keys, err := parseSort(q.Sort)
	if err != nil {
		return Result{}, err
	}
	match, candidates, err := ix.refMatcher(q.Q)
	if err != nil {
		return Result{}, err
	}
	hits := make([]refHit, 0, 64)
	visit := func(d *Doc) {
		s, ok := match(d)
		if !ok {
			return
		}
		for _, f := range filters {
			if !f.match(d) {
				return
			}
		}
		if q.Allow != nil && !q.Allow(d) {
			return
		}
		hits = append(hits, refHit{doc: d, score: s})
	}
	if candidates == nil {
		for _, d := range ix.docs {
			visit(d)
		}
	} else {
		for d := range candidates {
			visit(d)
		}
	}
	res := Result{Count: len(hits)}
	if len(q.FacetFields) > 0 {
		res.Facets = refFacets(hits, q.FacetFields, q.FacetLimit, q.FacetMinCount)
	}
	sort.Slice(hits, func(i, j int) bool { return refLess(keys, hits[i], hits[j]) })
	start := min(max(q.Start, 0), len(hits))
	end := min(start+max(q.Rows, 0), len(hits))
	for _, h := range hits[start:end] {
		res.IDs = append(res.IDs, h.doc.ID)
	}
	return res, nil
}

func (ix *refIndex) refMatcher(q string) (func(*Doc) (float64, bool), map[*Doc]struct{}, error) {
	q = strings.TrimSpace(q)
	if q == "" || q == "*:*" || q == "*" {
		return func(*Doc) (float64, bool) { return 1, true }, nil, nil
	}
	if strings.Contains(q, ":") {
		n, err := Parse(q)
		if err != nil {
			return nil, nil, err
		}
		terms := n.terms(nil)
		return func(d *Doc) (float64, bool) {
			if !n.match(d) {
				return 0, false
			}
			return ix.refScore(d, terms) + 1, true
		}, nil, nil
	}
	m, cand := ix.refDismax(q)
	return m, cand, nil
}

func (ix *refIndex) refDismax(q string) (func(*Doc) (float64, bool), map[*Doc]struct{}) {
	var should, must, not [][]string
	for _, raw := range splitTerms(q) {
		switch {
		case strings.HasPrefix(raw, "-") && len(raw) > 1:
			not = append(not, Tokens(raw[1:]))
		case strings.HasPrefix(raw, "+") && len(raw) > 1:
			must = append(must, Tokens(raw[1:]))
		default:
			if t := Tokens(raw); len(t) > 0 {
				should = append(should, t)
			}
		}
	}
	need := minimumMatch(len(should))
	idfs := map[string]float64{}
	for _, g := range append(append([][]string{}, should...), must...) {
		for _, t := range g {
			idfs[t] = math.Log(1 + float64(len(ix.docs)+1)/float64(ix.refDF(t)+1))
		}
	}
	idf := func(t string) float64 { return idfs[t] }
	// candidates: a document must hold the first token of a required group,
	// or of at least one optional group
	var cand map[*Doc]struct{}
	switch {
	case len(must) > 0 && len(must[0]) > 0:
		cand = ix.post[must[0][0]]
		if cand == nil {
			cand = map[*Doc]struct{}{}
		}
	case len(should) > 0:
		cand = map[*Doc]struct{}{}
		for _, g := range should {
			for d := range ix.post[g[0]] {
				cand[d] = struct{}{}
			}
		}
	}
	return func(d *Doc) (float64, bool) {
		for _, g := range not {
			if hasAll(d, g) {
				return 0, false
			}
		}
		score := 0.0
		for _, g := range must {
			if !hasAll(d, g) {
				return 0, false
			}
			for _, t := range g {
				score += d.Text[t] * idf(t)
			}
		}
		matched := 0
		for _, g := range should {
			if hasAll(d, g) {
				matched++
				for _, t := range g {
					score += d.Text[t] * idf(t)
				}
			}
		}
		if matched < need || (len(should) == 0 && len(must) == 0) && len(not) == 0 {
			return 0, false
		}
		return score, true
	}, cand
}

func (ix *refIndex) refScore(d *Doc, terms []string) float64 {
	s := 0.0
	for _, t := range terms {
		if w, ok := d.Text[t]; ok {
			s += w * math.Log(1+float64(len(ix.docs)+1)/float64(ix.refDF(t)+1))
		}
	}
	return s
}

// refHit is a match of the reference search.
type refHit struct {
	doc   *Doc
	score float64
}

func refLess(keys []sortKey, a, b refHit) bool {
	for _, k := range keys {
		var c int
		if k.field == "score" {
			switch {
			case a.score < b.score:
				c = -1
			case a.score > b.score:
				c = 1
			}
		} else if k.field == "id" {
			c = strings.Compare(a.doc.ID, b.doc.ID)
		} else {
			c = strings.Compare(a.doc.Sort[k.field], b.doc.Sort[k.field])
		}
		if c == 0 {
			continue
		}
		if k.desc {
			return c > 0
		}
		return c < 0
	}
	return false
}

func refFacets(hits []refHit, fields []string, limit, mincount int) map[string][]Facet {
	out := make(map[string][]Facet, len(fields))
	for _, f := range fields {
		counts := map[string]int{}
		for _, h := range hits {
			for _, v := range h.doc.Fields[f] {
				counts[v]++
			}
		}
		items := make([]Facet, 0, len(counts))
		for v, c := range counts {
			if c >= mincount {
				items = append(items, Facet{Value: v, Count: c})
			}
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
