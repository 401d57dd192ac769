package search

import (
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// Doc is one indexed document.
type Doc struct {
	// ID identifies the document.
	ID string
	// Fields are the exact values per field, used by field queries, filters
	// and facets (e.g. "tags", "organization", "res_format"). Put moves
	// them into the index (see Doc.values) and sets Fields to nil.
	Fields map[string][]string
	// Text maps each token to its weight (sum of the boosts of the fields it
	// occurs in); it drives relevance. Put moves it into the postings and
	// sets it to nil: a document is Put once.
	Text map[string]float64
	// Sort holds the values of sortable fields (e.g. "name",
	// "metadata_modified" as a sortable string). Put moves them into the
	// index's sort columns and sets Sort to nil.
	Sort map[string]string
	// Ref is the caller's own record, handed back to Query.Allow.
	Ref any
	// Public marks a document anyone may see: Query.Allow is not asked
	// about it (Allow must accept it anyway). Searches then test a bit per
	// match instead of calling Allow.
	Public bool

	// slot is the document's position in Index.slots while indexed.
	slot int32
	// toks holds the ids of the tokens of Text, ascending (see doctoks.go).
	toks []byte
	// ix is the index holding the document (nil before Put); the values of
	// its fields other than the text fields are in ix's dictionaries.
	ix *Index
	// text holds the values of the text fields in one slice, field after
	// field in textFieldNames' order; textEnd[i] is where field i's end.
	text    []string
	textEnd [len(textFieldNames)]int32
}

// textOf is d's values of text field i.
func (d *Doc) textOf(i int) []string {
	start := int32(0)
	if i > 0 {
		start = d.textEnd[i-1]
	}
	return d.text[start:d.textEnd[i]:d.textEnd[i]]
}

// setText keeps vals, the values of each text field by textFieldNum, in
// one slice of their own.
func (d *Doc) setText(vals *[len(textFieldNames)][]string) {
	n := 0
	for _, v := range vals {
		n += len(v)
	}
	d.text = make([]string, 0, n)
	for i, v := range vals {
		d.text = append(d.text, v...)
		d.textEnd[i] = int32(len(d.text))
	}
}

// textFieldNames are the fields of TextFields, numbered for Doc.text.
var textFieldNames = [...]string{"text", "title", "notes", "res_name", "res_description"}

func textFieldNum(f string) int {
	for i, n := range textFieldNames {
		if n == f {
			return i
		}
	}
	return -1
}

// values are the document's values of field f, in the order given; the
// caller must not change them.
func (d *Doc) values(f string) []string {
	if d.ix == nil {
		return d.Fields[f]
	}
	if i := textFieldNum(f); i >= 0 {
		return d.textOf(i)
	}
	n, ok := d.ix.fieldNum[f]
	if !ok {
		return nil
	}
	dc := d.ix.dicts[n]
	ids := dc.slotIDs(d.slot)
	switch len(ids) {
	case 0:
		return nil
	case 1:
		return dc.names[ids[0] : ids[0]+1]
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = dc.names[id]
	}
	return out
}

// Index is a set of documents with document frequencies. It is not safe for
// concurrent writes; callers hold their own lock. Searches only read it.
type Index struct {
	docs  map[string]*Doc
	slots []*Doc // by slot; nil when free
	free  []int32
	// tokID numbers the tokens of the documents' Text; posts holds each
	// token's posting by number (nil when free).
	tokID   map[string]int32
	tokName []string
	posts   []*posting
	tokFree []int32
	// wtab holds the distinct weights of tokens, by code; wcode is its
	// reverse (see weightCode).
	wtab  []float64
	wcode map[float64]uint16
	// public has the bit of each slot whose document is Public.
	public []uint64
	// fpost lists, per text field and token (key field+"\x00"+token), the
	// slots whose values of the field hold the token, ascending: field
	// terms (title:x) look their documents up here.
	fpost map[string]slotSet
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
	// live holds the slots holding a document, pubBM those whose document
	// is Public: searches intersect them with their matches.
	live, pubBM *roaring.Bitmap
	// stamp tells, by slot, which put of a document an ordering entry
	// belongs to (0: free); nextStamp is the last given.
	stamp     []uint32
	nextStamp uint32
	// ord holds, by sort field, the documents ordered by it (nil until a
	// search first walks it; see order.go); ordMu guards building them.
	ordMu sync.Mutex
	ord   [len(sortFields)]*ordering
}

// New returns an empty index.
func New() *Index {
	return &Index{docs: map[string]*Doc{}, tokID: map[string]int32{}, wcode: map[float64]uint16{}, fieldNum: map[string]int{}, fpost: map[string]slotSet{},
		live: roaring.New(), pubBM: roaring.New()}
}

// posting is the posting of token t; nil when no document holds it.
func (ix *Index) posting(t string) *posting {
	if id, ok := ix.tokID[t]; ok {
		return ix.posts[id]
	}
	return nil
}

// df is the number of documents holding token t.
func (ix *Index) df(t string) int {
	if p := ix.posting(t); p != nil {
		return p.n()
	}
	return 0
}

// tokenPosting returns t's number and posting, making them if new.
func (ix *Index) tokenPosting(t string) (int32, *posting) {
	if id, ok := ix.tokID[t]; ok {
		return id, ix.posts[id]
	}
	var id int32
	if n := len(ix.tokFree); n > 0 {
		id = ix.tokFree[n-1]
		ix.tokFree = ix.tokFree[:n-1]
	} else {
		id = int32(len(ix.posts))
		ix.posts = append(ix.posts, nil)
		ix.tokName = append(ix.tokName, "")
	}
	p := newPosting()
	ix.posts[id] = p
	ix.tokID[t] = id
	ix.tokName[id] = t
	return id, p
}

// Len is the number of documents.
func (ix *Index) Len() int { return len(ix.docs) }

// Put adds or replaces a document. Repeated values of a field are kept once.
// The index takes d's Fields, Text and Sort (and sets them to nil); putting
// a document already held changes nothing.
func (ix *Index) Put(d *Doc) {
	if d.ix != nil {
		return
	}
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
	var text [len(textFieldNames)][]string
	for i, f := range textFieldNames {
		text[i] = d.Fields[f]
	}
	d.setText(&text)
	for _, key := range fieldTokens(d) {
		s, ok := ix.fpost[key]
		if !ok {
			s = slotSet{one: d.slot}
		}
		ix.fpost[key] = s.with(d.slot)
	}
	ids := make([]int32, 0, len(d.Text))
	for t, w := range d.Text {
		id, p := ix.tokenPosting(t)
		ix.addPosting(p, d.slot, w)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	d.toks = encodeToks(ids)
	d.Text = nil
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
		ids := make([]int32, len(vals))
		for i, v := range vals {
			ids[i] = ix.dicts[n].add(v)
		}
		ix.dicts[n].setSlot(d.slot, ids)
	}
	d.Fields = nil
	for int(d.slot>>6) >= len(ix.public) {
		ix.public = append(ix.public, 0)
	}
	if d.Public {
		ix.public[d.slot>>6] |= 1 << (d.slot & 63)
		ix.pubBM.Add(uint32(d.slot))
	}
	ix.live.Add(uint32(d.slot))
	for i, f := range sortFields {
		v := d.Sort[f]
		for int(d.slot) >= len(ix.sortCol[i]) {
			ix.sortCol[i] = append(ix.sortCol[i], "")
			ix.sortTime[i] = append(ix.sortTime[i], noTime)
		}
		ix.sortCol[i][d.slot] = v
		ix.sortTime[i][d.slot] = sortTime(v)
	}
	d.Sort = nil
	d.ix = ix
	ix.newStamp(d.slot)
	ix.ordered(d.slot)
}

// fieldTokens lists the keys of d's entries in Index.fpost: each text
// field with each distinct token of its values.
func fieldTokens(d *Doc) []string {
	var keys []string
	for i, f := range textFieldNames {
		if f == "text" { // text terms use the postings of Doc.Text
			continue
		}
		start := len(keys)
		for _, v := range d.textOf(i) {
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
	eachTok(old.toks, func(id int32) bool {
		p := ix.posts[id]
		p.remove(old.slot)
		if p.n() == 0 {
			delete(ix.tokID, ix.tokName[id])
			ix.posts[id], ix.tokName[id] = nil, ""
			ix.tokFree = append(ix.tokFree, id)
		}
		return false
	})
	old.toks = nil
	for _, key := range fieldTokens(old) {
		if s, ok := ix.fpost[key]; ok {
			if s, empty := s.without(old.slot); empty {
				delete(ix.fpost, key)
			} else {
				ix.fpost[key] = s
			}
		}
	}
	for _, dc := range ix.dicts {
		ids := dc.slotIDs(old.slot)
		if len(ids) == 0 {
			continue
		}
		ids = slices.Clone(ids)
		dc.setSlot(old.slot, nil)
		for _, v := range ids {
			dc.release(v)
		}
	}
	old.ix = nil
	ix.unordered(old.slot)
	ix.stamp[old.slot] = 0
	ix.public[old.slot>>6] &^= 1 << (old.slot & 63)
	ix.pubBM.Remove(uint32(old.slot))
	ix.live.Remove(uint32(old.slot))
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
