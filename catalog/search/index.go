package search

import (
	"slices"
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
