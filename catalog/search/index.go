package search

import (
	"math"
	"sort"
	"strings"
)

// Doc is one indexed document.
type Doc struct {
	// ID identifies the document.
	ID string
	// Fields are the exact values per field, used by field queries, filters
	// and facets (e.g. "tags", "organization", "res_format").
	Fields map[string][]string
	// Text maps each token to its weight (sum of the boosts of the fields it
	// occurs in); it drives relevance.
	Text map[string]float64
	// Sort holds the values of sortable fields (e.g. "name",
	// "metadata_modified" as a sortable string).
	Sort map[string]string
	// Ref is the caller's own record, handed back to Query.Allow.
	Ref any
}

// Index is a set of documents with document frequencies. It is not safe for
// concurrent use; callers hold their own lock.
type Index struct {
	docs map[string]*Doc
	post map[string]map[*Doc]struct{}
}

// New returns an empty index.
func New() *Index {
	return &Index{docs: map[string]*Doc{}, post: map[string]map[*Doc]struct{}{}}
}

// df is the number of documents holding token t.
func (ix *Index) df(t string) int { return len(ix.post[t]) }

// Len is the number of documents.
func (ix *Index) Len() int { return len(ix.docs) }

// Put adds or replaces a document. Repeated values of a field are kept once.
func (ix *Index) Put(d *Doc) {
	for f, vals := range d.Fields {
		d.Fields[f] = unique(vals)
	}
	ix.Delete(d.ID)
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

// Delete removes a document if present.
func (ix *Index) Delete(id string) {
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

// Get returns the document with id.
func (ix *Index) Get(id string) *Doc { return ix.docs[id] }

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

type hit struct {
	doc   *Doc
	score float64
}

// Search runs q. A malformed query or sort gives an *Error.
func (ix *Index) Search(q Query) (Result, error) {
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
	match, candidates, err := ix.matcher(q.Q)
	if err != nil {
		return Result{}, err
	}
	hits := make([]hit, 0, 64)
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
		hits = append(hits, hit{doc: d, score: s})
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
		res.Facets = facets(hits, q.FacetFields, q.FacetLimit, q.FacetMinCount)
	}
	topK(hits, max(q.Start, 0)+max(q.Rows, 0), func(a, b hit) bool { return less(keys, a, b) })
	start := min(max(q.Start, 0), len(hits))
	end := min(start+max(q.Rows, 0), len(hits))
	for _, h := range hits[start:end] {
		res.IDs = append(res.IDs, h.doc.ID)
	}
	return res, nil
}

// matcher builds the scoring function of the main query and, for free
// text, the candidate documents from the postings (nil means all).
func (ix *Index) matcher(q string) (func(*Doc) (float64, bool), map[*Doc]struct{}, error) {
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
			return ix.score(d, terms) + 1, true
		}, nil, nil
	}
	m, cand := ix.dismax(q)
	return m, cand, nil
}

// dismax matches free text as CKAN's Solr handler does: each term is looked
// up in every weighted field; mm "2<-1 5<80%" sets how many terms must match;
// "-term" excludes, "+term" is required.
func (ix *Index) dismax(q string) (func(*Doc) (float64, bool), map[*Doc]struct{}) {
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
			idfs[t] = math.Log(1 + float64(len(ix.docs)+1)/float64(ix.df(t)+1))
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
		if _, ok := d.Text[t]; !ok {
			return false
		}
	}
	return true
}

func (ix *Index) score(d *Doc, terms []string) float64 {
	s := 0.0
	for _, t := range terms {
		if w, ok := d.Text[t]; ok {
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

type sortKey struct {
	field string
	desc  bool
}

var sortable = map[string]bool{"score": true, "metadata_modified": true, "metadata_created": true, "name": true, "title": true, "title_string": true, "id": true}

func parseSort(s string) ([]sortKey, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "rank" {
		s = "score desc, metadata_modified desc"
	}
	var keys []sortKey
	for _, part := range strings.Split(s, ",") {
		f := strings.Fields(part)
		if len(f) == 0 {
			continue
		}
		k := sortKey{field: f[0]}
		if len(f) > 2 || (len(f) == 2 && f[1] != "asc" && f[1] != "desc") {
			return nil, &Error{Message: "Can't determine a Sort Order (asc or desc) in sort spec '" + strings.TrimSpace(part) + "'"}
		}
		if len(f) == 1 {
			return nil, &Error{Message: "Can't determine a Sort Order (asc or desc) in sort spec '" + strings.TrimSpace(part) + "'"}
		}
		k.desc = f[1] == "desc"
		if k.field == "title" {
			k.field = "title_string"
		}
		if !sortable[k.field] {
			return nil, &Error{Message: "sort param field can't be found: " + f[0]}
		}
		keys = append(keys, k)
	}
	// A stable final order: id ascending.
	keys = append(keys, sortKey{field: "id"})
	return keys, nil
}

func less(keys []sortKey, a, b hit) bool {
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

func facets(hits []hit, fields []string, limit, mincount int) map[string][]Facet {
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

// topK orders the first k elements of hits (the rest stay unordered): a
// full sort when k is large, otherwise a bounded selection.
func topK(hits []hit, k int, less func(a, b hit) bool) {
	if k >= len(hits)/4 {
		sort.Slice(hits, func(i, j int) bool { return less(hits[i], hits[j]) })
		return
	}
	if k == 0 {
		return
	}
	// keep hits[:k] sorted; insert better elements from the rest
	sort.Slice(hits[:k], func(i, j int) bool { return less(hits[i], hits[j]) })
	for i := k; i < len(hits); i++ {
		if !less(hits[i], hits[k-1]) {
			continue
		}
		h := hits[i]
		j := k - 1
		for j > 0 && less(h, hits[j-1]) {
			j--
		}
		hits[i] = hits[k-1]
		copy(hits[j+1:k], hits[j:k-1])
		hits[j] = h
	}
}
