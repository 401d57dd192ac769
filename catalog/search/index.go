package search

import (
	"cmp"
	"math"
	bits64 "math/bits"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
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
	// Public marks a document anyone may see: Query.Allow is not asked
	// about it (Allow must accept it anyway). Searches then test a bit per
	// match instead of calling Allow.
	Public bool

	// slot is the document's position in Index.slots while indexed.
	slot int32
	// vals holds, per interned field number, the ids of the field's values.
	vals [][]int32
	// sortv holds the values of the sortable fields, by sortIndex.
	sortv [len(sortFields)]string
}

// posting lists the documents holding a token, by ascending slot, with the
// token's weight in each.
type posting struct {
	slots []int32
	w     []float64
}

func (p *posting) find(slot int32) (int, bool) {
	i, found := slices.BinarySearch(p.slots, slot)
	return i, found
}

// dict interns the values of one field; ids of values no document holds
// any more are reused.
type dict struct {
	ids   map[string]int32
	names []string
	refs  []int32
	free  []int32
	// one holds, by slot, the id of a document's only value of the field,
	// noValue, or manyValues when the ids are in many[slot]. Slots past
	// the end hold no value. Facets count through these dense arrays
	// rather than through each document.
	one  []int32
	many [][]int32
	// bits holds, by value id, the slots holding the value, while the field
	// has at most bitsMax distinct values (bitsOn); facets then count a
	// value as the bits it shares with the matches. Turned off above
	// bitsMax values, rebuilt when they drop to bitsMin.
	bits   [][]uint64
	bitsOn bool
}

const (
	noValue    = -1
	manyValues = -2
)

// Limits of per-value bitsets (variables for tests).
var bitsMax, bitsMin = 256, 128

func newDict() *dict { return &dict{ids: map[string]int32{}, bitsOn: true} }

// slotIDs returns the value ids recorded for slot.
func (dc *dict) slotIDs(slot int32) []int32 {
	if int(slot) >= len(dc.one) {
		return nil
	}
	switch id := dc.one[slot]; {
	case id >= 0:
		return dc.one[slot : slot+1]
	case id == manyValues:
		return dc.many[slot]
	}
	return nil
}

// setSlot records the value ids of the document in slot (nil: none).
func (dc *dict) setSlot(slot int32, ids []int32) {
	if dc.bitsOn {
		for _, id := range dc.slotIDs(slot) {
			dc.bits[id][slot>>6] &^= 1 << (slot & 63)
		}
		for _, id := range ids {
			dc.setBit(id, slot)
		}
	}
	for int(slot) >= len(dc.one) {
		dc.one = append(dc.one, noValue)
	}
	switch len(ids) {
	case 0:
		dc.one[slot] = noValue
	case 1:
		dc.one[slot] = ids[0]
	default:
		dc.one[slot] = manyValues
		for int(slot) >= len(dc.many) {
			dc.many = append(dc.many, nil)
		}
		dc.many[slot] = ids
	}
	if len(ids) < 2 && int(slot) < len(dc.many) {
		dc.many[slot] = nil
	}
}

func (dc *dict) setBit(id, slot int32) {
	for int(id) >= len(dc.bits) {
		dc.bits = append(dc.bits, nil)
	}
	b := dc.bits[id]
	for int(slot>>6) >= len(b) {
		b = append(b, 0)
	}
	b[slot>>6] |= 1 << (slot & 63)
	dc.bits[id] = b
}

func (dc *dict) add(v string) int32 {
	if id, ok := dc.ids[v]; ok {
		dc.refs[id]++
		return id
	}
	var id int32
	if n := len(dc.free); n > 0 {
		id = dc.free[n-1]
		dc.free = dc.free[:n-1]
		dc.names[id], dc.refs[id] = v, 1
	} else {
		id = int32(len(dc.names))
		dc.names = append(dc.names, v)
		dc.refs = append(dc.refs, 1)
	}
	dc.ids[v] = id
	if dc.bitsOn && len(dc.ids) > bitsMax {
		dc.bitsOn, dc.bits = false, nil
	}
	return id
}

func (dc *dict) release(id int32) {
	dc.refs[id]--
	if dc.refs[id] == 0 {
		delete(dc.ids, dc.names[id])
		dc.names[id] = ""
		dc.free = append(dc.free, id)
		if !dc.bitsOn && len(dc.ids) <= bitsMin {
			dc.rebuildBits()
		}
	}
}

// rebuildBits turns the per-value bitsets on and fills them from the slots.
func (dc *dict) rebuildBits() {
	dc.bitsOn, dc.bits = true, make([][]uint64, len(dc.names))
	for slot := range dc.one {
		for _, id := range dc.slotIDs(int32(slot)) {
			dc.setBit(id, int32(slot))
		}
	}
}

// Index is a set of documents with document frequencies. It is not safe for
// concurrent writes; callers hold their own lock. Searches only read it.
type Index struct {
	docs  map[string]*Doc
	slots []*Doc // by slot; nil when free
	free  []int32
	post  map[string]*posting
	// public has the bit of each slot whose document is Public.
	public []uint64
	// fpost lists, per text field and token (key field+"\x00"+token), the
	// slots whose values of the field hold the token, ascending: field
	// terms (title:x) look their documents up here.
	fpost map[string][]int32
	// sortCol holds the sortable fields' values by field index and slot,
	// so that ordering reads them without visiting each document.
	sortCol [len(sortFields)][]string
	// sortTime holds, beside sortCol, the value as Unix microseconds when it
	// is a timestamp in timeLayout (which orders as its text does), else
	// noTime; two such values compare as numbers.
	sortTime [len(sortFields)][]int64
	// fieldNum numbers the interned (non-text) fields; dicts is by number.
	fieldNum map[string]int
	dicts    []*dict
}

// New returns an empty index.
func New() *Index {
	return &Index{docs: map[string]*Doc{}, post: map[string]*posting{}, fieldNum: map[string]int{}, fpost: map[string][]int32{}}
}

// df is the number of documents holding token t.
func (ix *Index) df(t string) int {
	if p := ix.post[t]; p != nil {
		return len(p.slots)
	}
	return 0
}

// Len is the number of documents.
func (ix *Index) Len() int { return len(ix.docs) }

// Put adds or replaces a document. Repeated values of a field are kept once.
func (ix *Index) Put(d *Doc) {
	for f, vals := range d.Fields {
		d.Fields[f] = unique(vals)
	}
	ix.Delete(d.ID)
	if n := len(ix.free); n > 0 {
		d.slot = ix.free[n-1]
		ix.free = ix.free[:n-1]
		ix.slots[d.slot] = d
	} else {
		d.slot = int32(len(ix.slots))
		ix.slots = append(ix.slots, d)
	}
	ix.docs[d.ID] = d
	for _, key := range fieldTokens(d) {
		p := ix.fpost[key]
		i, _ := slices.BinarySearch(p, d.slot)
		ix.fpost[key] = slices.Insert(p, i, d.slot)
	}
	for t, w := range d.Text {
		p := ix.post[t]
		if p == nil {
			p = &posting{}
			ix.post[t] = p
		}
		i, _ := p.find(d.slot)
		p.slots = slices.Insert(p.slots, i, d.slot)
		p.w = slices.Insert(p.w, i, w)
	}
	d.vals = nil
	for f, vals := range d.Fields {
		if TextFields[f] || len(vals) == 0 {
			continue
		}
		n, ok := ix.fieldNum[f]
		if !ok {
			n = len(ix.dicts)
			ix.fieldNum[f] = n
			ix.dicts = append(ix.dicts, newDict())
		}
		if n >= len(d.vals) {
			d.vals = append(d.vals, make([][]int32, n+1-len(d.vals))...)
		}
		ids := make([]int32, len(vals))
		for i, v := range vals {
			ids[i] = ix.dicts[n].add(v)
		}
		d.vals[n] = ids
		ix.dicts[n].setSlot(d.slot, ids)
	}
	for int(d.slot>>6) >= len(ix.public) {
		ix.public = append(ix.public, 0)
	}
	if d.Public {
		ix.public[d.slot>>6] |= 1 << (d.slot & 63)
	}
	for i, f := range sortFields {
		d.sortv[i] = d.Sort[f]
		for int(d.slot) >= len(ix.sortCol[i]) {
			ix.sortCol[i] = append(ix.sortCol[i], "")
			ix.sortTime[i] = append(ix.sortTime[i], noTime)
		}
		ix.sortCol[i][d.slot] = d.sortv[i]
		ix.sortTime[i][d.slot] = sortTime(d.sortv[i])
	}
}

// fieldTokens lists the keys of d's entries in Index.fpost: each text
// field with each distinct token of its values.
func fieldTokens(d *Doc) []string {
	var keys []string
	for f := range TextFields {
		if f == "text" { // text terms use the postings of Doc.Text
			continue
		}
		start := len(keys)
		for _, v := range d.Fields[f] {
			for _, t := range Tokens(v) {
				keys = append(keys, f+"\x00"+t)
			}
		}
		slices.Sort(keys[start:])
		keys = append(keys[:start], slices.Compact(keys[start:])...)
	}
	return keys
}

// Delete removes a document if present.
func (ix *Index) Delete(id string) {
	old, ok := ix.docs[id]
	if !ok {
		return
	}
	for t := range old.Text {
		if p := ix.post[t]; p != nil {
			if i, found := p.find(old.slot); found {
				p.slots = slices.Delete(p.slots, i, i+1)
				p.w = slices.Delete(p.w, i, i+1)
			}
			if len(p.slots) == 0 {
				delete(ix.post, t)
			}
		}
	}
	for _, key := range fieldTokens(old) {
		p := ix.fpost[key]
		if i, found := slices.BinarySearch(p, old.slot); found {
			p = slices.Delete(p, i, i+1)
		}
		if len(p) == 0 {
			delete(ix.fpost, key)
		} else {
			ix.fpost[key] = p
		}
	}
	for n, ids := range old.vals {
		if ids != nil {
			ix.dicts[n].setSlot(old.slot, nil)
		}
		for _, v := range ids {
			ix.dicts[n].release(v)
		}
	}
	old.vals = nil
	ix.public[old.slot>>6] &^= 1 << (old.slot & 63)
	for i := range ix.sortCol {
		ix.sortCol[i][old.slot] = ""
		ix.sortTime[i][old.slot] = noTime
	}
	ix.slots[old.slot] = nil
	ix.free = append(ix.free, old.slot)
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
	if len(filters) > 0 || q.Allow != nil {
		kept := hits[:0]
	next:
		for _, h := range hits {
			d := ix.slots[h.slot]
			for _, f := range filters {
				if !f.match(d) {
					continue next
				}
			}
			if q.Allow != nil && ix.public[h.slot>>6]&(1<<(h.slot&63)) == 0 && !q.Allow(d) {
				continue
			}
			kept = append(kept, h)
		}
		hits = kept
	}
	sc.hits = hits
	res := Result{Count: len(hits)}
	if len(facetFields) > 0 {
		res.Facets = ix.facets(sc, hits, facetFields, q.FacetLimit, q.FacetMinCount)
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

// match is the main query: a plan over the postings for free text, else a
// function applied to every document.
type match struct {
	fn     func(*Doc) (float64, bool)
	dismax *dismaxPlan
}

// matcher builds the main query's matcher, spending from left.
func (ix *Index) matcher(q string, left *budget) (match, error) {
	q = strings.TrimSpace(q)
	if q == "" || q == "*:*" || q == "*" {
		return match{fn: func(*Doc) (float64, bool) { return 1, true }}, nil
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
				p.post = append(p.post, ix.post[t])
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
	gen   uint32
	acc   []slotAcc
	cand  []uint64
	not   []uint64
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

// hitBits returns the slots of hits as a bitset of words words.
func (sc *scratch) hitBits(hits []hit, words int) []uint64 {
	if cap(sc.hbits) < words {
		sc.hbits = make([]uint64, words)
	}
	b := sc.hbits[:words]
	clear(b)
	for _, h := range hits {
		b[h.slot>>6] |= 1 << (h.slot & 63)
	}
	return b
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
func (p *dismaxPlan) eachMatch(g []int, fn func(slot int32, w []float64)) {
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
		for i, slot := range first.slots {
			w[0] = first.w[i]
			fn(slot, w)
		}
		return
	}
	cur := make([]int, len(g))
next:
	for i, slot := range first.slots {
		w[0] = first.w[i]
		for k := 1; k < len(g); k++ {
			ps := p.post[g[k]]
			c := cur[k]
			if c+8 < len(ps.slots) && ps.slots[c+8] < slot {
				j, _ := slices.BinarySearch(ps.slots[c+8:], slot)
				c += 8 + j
			}
			for c < len(ps.slots) && ps.slots[c] < slot {
				c++
			}
			cur[k] = c
			if c == len(ps.slots) || ps.slots[c] != slot {
				continue next
			}
			w[k] = ps.w[c]
		}
		fn(slot, w)
	}
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
		for i, slot := range ps.slots {
			score := 0.0
			score += ps.w[i] * idf
			hits = append(hits, hit{score: score, slot: slot})
		}
		return hits
	}
	sc.reset(len(ix.slots))
	for _, g := range p.not {
		p.eachMatch(g, func(slot int32, _ []float64) { sc.not[slot>>6] |= 1 << (slot & 63) })
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
			for i, slot := range ps.slots {
				a := sc.touch(slot)
				a.score += ps.w[i] * idf
				if must {
					a.must++
				} else {
					a.should++
				}
			}
			return
		}
		p.eachMatch(g, func(slot int32, w []float64) {
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
	// idx is the field's index in sortFields, or keyScore or keyID.
	idx int
}

const (
	keyScore = -1
	keyID    = -2
)

// timeLayout is the layout of the timestamps callers give for sorting
// (fixed width, so that the text orders as the time does).
const timeLayout = "2006-01-02T15:04:05.000000Z"

// noTime marks a sort value that is not a timestamp in timeLayout.
const noTime = math.MinInt64

// sortTime is v as Unix microseconds when v is exactly a timestamp in
// timeLayout, else noTime. Different such texts give different numbers in
// the same order.
func sortTime(v string) int64 {
	if len(v) != len(timeLayout) || v[len(v)-1] != 'Z' {
		return noTime
	}
	t, err := time.Parse(timeLayout, v)
	if err != nil || t.Format(timeLayout) != v {
		return noTime
	}
	return t.UnixMicro()
}

// sortFields are the sortable fields kept in Doc.sortv, besides score and id.
var sortFields = [...]string{"metadata_modified", "metadata_created", "name", "title_string"}

func sortIndex(field string) int {
	switch field {
	case "score":
		return keyScore
	case "id":
		return keyID
	}
	for i, f := range sortFields {
		if f == field {
			return i
		}
	}
	return keyID
}

var sortable = map[string]bool{"score": true, "metadata_modified": true, "metadata_created": true, "name": true, "title": true, "title_string": true, "id": true}

// parseSort reads a sort spec. A field named again is left out: the
// order is decided before it is reached (the same field compared equal),
// so there are at most as many keys as sortable fields.
func parseSort(s string) ([]sortKey, error) {
	if err := checkLength("sort", s); err != nil {
		return nil, err
	}
	s = strings.TrimSpace(s)
	if s == "" || s == "rank" {
		s = "score desc, metadata_modified desc"
	}
	var keys []sortKey
	for part := range strings.SplitSeq(s, ",") {
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
		k.idx = sortIndex(k.field)
		if !slices.ContainsFunc(keys, func(o sortKey) bool { return o.field == k.field }) {
			keys = append(keys, k)
		}
	}
	// A stable final order: id ascending.
	keys = append(keys, sortKey{field: "id", idx: keyID})
	return keys, nil
}

func (ix *Index) less(keys []sortKey, a, b hit) bool {
	for _, k := range keys {
		var c int
		switch k.idx {
		case keyScore:
			switch {
			case a.score < b.score:
				c = -1
			case a.score > b.score:
				c = 1
			}
		case keyID:
			c = strings.Compare(ix.slots[a.slot].ID, ix.slots[b.slot].ID)
		default:
			if ta, tb := ix.sortTime[k.idx][a.slot], ix.sortTime[k.idx][b.slot]; ta != noTime && tb != noTime {
				c = cmp.Compare(ta, tb)
			} else {
				col := ix.sortCol[k.idx]
				c = strings.Compare(col[a.slot], col[b.slot])
			}
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
				for _, v := range ix.slots[h.slot].Fields[f] {
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
