package search

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// posting lists the documents holding a token: their slots as a compressed
// bitmap and, by rank in it, the code of the token's weight in each (see
// Index.weight).
//
// Most tokens of a large catalog are held by one document (names, numbers,
// identifiers in titles): such a posting keeps no bitmap and no weight
// list, only the slot (last) and its code (base). It turns into the full
// form when a second document is added (see single).
type posting struct {
	// slots holds the slots, ascending (nil while single).
	slots *roaring.Bitmap
	// w holds the weight codes by rank in slots (nil while single).
	w []uint16
	// last is the largest slot held (-1: none), so that the usual add, of
	// a new last slot, appends without a search.
	last int32
	// base is the weight code of the first document added (while single,
	// of the only one); the documents of another code are in x.
	base uint16
	// x holds what few postings need (nil when not needed).
	x *postingExtra
}

// postingExtra is the rarely needed part of a posting.
type postingExtra struct {
	// wide holds the weights, by slot, whose code is wideCode (the index's
	// table of weights was full).
	wide map[int32]float64
	// codes lists the weight codes present other than base, each with its
	// slots in cbm, so that the documents of one weight are a bitmap (see
	// classes.go): those of base are slots without the members of cbm.
	codes []uint16
	cbm   []*roaring.Bitmap
}

// wideCode marks a weight kept in posting.x.wide.
const wideCode = math.MaxUint16

func newPosting() *posting { return &posting{last: -1} }

// single reports whether p holds one document and keeps it without a
// bitmap (its slot is last, its code base).
func (p *posting) single() bool { return p.slots == nil && p.last >= 0 }

// n is the number of documents holding the token.
func (p *posting) n() int {
	if p.slots == nil {
		if p.last >= 0 {
			return 1
		}
		return 0
	}
	return len(p.w)
}

// bits is p's slots as a bitmap, which the caller must not change (a new
// one while p is single).
func (p *posting) bits() *roaring.Bitmap {
	if p.slots != nil {
		return p.slots
	}
	if p.last >= 0 {
		return roaring.BitmapOf(uint32(p.last))
	}
	return roaring.New()
}

// wide is the map of p's wide weights (nil when none).
func (p *posting) wide() map[int32]float64 {
	if p.x == nil {
		return nil
	}
	return p.x.wide
}

// codes are the weight codes present other than base, and cbm their
// documents.
func (p *posting) codes() ([]uint16, []*roaring.Bitmap) {
	if p.x == nil {
		return nil, nil
	}
	return p.x.codes, p.x.cbm
}

func (p *posting) extra() *postingExtra {
	if p.x == nil {
		p.x = &postingExtra{}
	}
	return p.x
}

// dropExtra forgets x once it holds nothing.
func (p *posting) dropExtra() {
	if p.x != nil && len(p.x.wide) == 0 && len(p.x.codes) == 0 {
		p.x = nil
	}
}

// add records slot (not yet present) with weight w.
func (ix *Index) addPosting(p *posting, slot int32, w float64) {
	code := ix.weightCode(w)
	if code == wideCode {
		x := p.extra()
		if x.wide == nil {
			x.wide = map[int32]float64{}
		}
		x.wide[slot] = w
	}
	if p.slots == nil && p.last < 0 {
		p.base, p.last = code, slot
		return
	}
	if p.slots == nil { // a second document: the full form
		p.slots = roaring.BitmapOf(uint32(p.last))
		p.w = []uint16{p.base}
	}
	p.addCode(code, slot)
	if slot > p.last {
		p.w = append(p.w, code)
		p.last = slot
	} else {
		p.w = slices.Insert(p.w, int(p.slots.Rank(uint32(slot))), code)
	}
	p.slots.Add(uint32(slot))
}

// remove drops slot if present.
func (p *posting) remove(slot int32) {
	if p.slots == nil {
		if p.last == slot {
			p.last = -1
			if p.x != nil {
				delete(p.x.wide, slot)
				p.dropExtra()
			}
		}
		return
	}
	if !p.slots.Contains(uint32(slot)) {
		return
	}
	r := int(p.slots.Rank(uint32(slot))) - 1
	p.removeCode(p.w[r], slot)
	p.w = slices.Delete(p.w, r, r+1)
	p.slots.Remove(uint32(slot))
	if p.x != nil {
		delete(p.x.wide, slot)
		p.dropExtra()
	}
	if slot == p.last {
		p.last = -1
		if !p.slots.IsEmpty() {
			p.last = int32(p.slots.Maximum())
		}
	}
}

// addCode records that slot's weight code is code.
func (p *posting) addCode(code uint16, slot int32) {
	if code == p.base {
		return
	}
	x := p.extra()
	i := slices.Index(x.codes, code)
	if i < 0 {
		i = len(x.codes)
		x.codes = append(x.codes, code)
		x.cbm = append(x.cbm, roaring.New())
	}
	x.cbm[i].Add(uint32(slot))
}

// removeCode forgets that slot's weight code is code.
func (p *posting) removeCode(code uint16, slot int32) {
	if code == p.base || p.x == nil {
		return
	}
	x := p.x
	i := slices.Index(x.codes, code)
	if i < 0 {
		return
	}
	x.cbm[i].Remove(uint32(slot))
	if x.cbm[i].IsEmpty() {
		x.codes = slices.Delete(x.codes, i, i+1)
		x.cbm = slices.Delete(x.cbm, i, i+1)
	}
	p.dropExtra()
}

// codeAt is the weight code of the document at rank r.
func (p *posting) codeAt(r int) uint16 {
	if p.slots == nil {
		return p.base
	}
	return p.w[r]
}

// weightAt is the weight of the document at rank r, in slot.
func (ix *Index) weightAt(p *posting, r int, slot int32) float64 {
	if c := p.codeAt(r); c != wideCode {
		return ix.wtab[c]
	}
	return p.wide()[slot]
}

// weightOf is the token's weight in slot, and whether slot holds it.
func (ix *Index) weightOf(p *posting, slot int32) (float64, bool) {
	if p == nil {
		return 0, false
	}
	if p.slots == nil {
		if p.last < 0 || p.last != slot {
			return 0, false
		}
		return ix.weightAt(p, 0, slot), true
	}
	if !p.slots.Contains(uint32(slot)) {
		return 0, false
	}
	return ix.weightAt(p, int(p.slots.Rank(uint32(slot)))-1, slot), true
}

// weightCode interns w in the index's table of weights; wideCode when the
// table is full. Weights are sums of a few field boosts, so a catalog has
// a handful of distinct ones and each posting entry costs two bytes.
func (ix *Index) weightCode(w float64) uint16 {
	if c, ok := ix.wcode[w]; ok {
		return c
	}
	if len(ix.wtab) >= wideCode || w != w {
		return wideCode
	}
	c := uint16(len(ix.wtab))
	ix.wtab = append(ix.wtab, w)
	ix.wcode[w] = c
	return c
}

// each calls fn with every slot of p, ascending, and its rank.
func (p *posting) each(fn func(r int, slot int32)) {
	if p.slots == nil {
		if p.last >= 0 {
			fn(0, p.last)
		}
		return
	}
	var buf [256]uint32
	it := p.slots.ManyIterator()
	r := 0
	for {
		n := it.NextMany(buf[:])
		if n == 0 {
			return
		}
		for _, s := range buf[:n] {
			fn(r, int32(s))
			r++
		}
	}
}

// orInto sets the bits of p's slots in bits.
func (p *posting) orInto(bits []uint64) {
	if p.slots == nil {
		if p.last >= 0 {
			bits[p.last>>6] |= 1 << (p.last & 63)
		}
		return
	}
	bitmapInto(p.slots, bits)
}

// dict interns the values of one field; ids of values no document holds
// any more are reused.
type dict struct {
	ids   map[string]int32
	names []string
	// refs counts, by value id, the documents holding the value; total
	// is their sum.
	refs  []int32
	total int64
	free  []int32
	// one holds, by slot, the id of a document's only value of the field,
	// noValue, or manyValues when the ids are in many[slot]. Slots past
	// the end hold no value. A document's values are read from here.
	one  []int32
	many [][]int32
	// multi counts the slots holding several values.
	multi int
	// bm holds, by value id, the slots holding the value (nil when free),
	// while the field's values are held by several documents each on
	// average (bitsOn; see manyValues): facets then count a value as the
	// size of its intersection with the hits. A field of values mostly
	// held once (ids, names, urls) keeps none: a bitmap per document would
	// cost more than the document's other postings.
	bm     []*roaring.Bitmap
	bitsOn bool
	// gen changes with every change of the values; byFreq caches the
	// value ids by descending refs for gen (see freqOrder).
	gen    uint64
	freqMu sync.Mutex
	byFreq []int32
	freqAt uint64
}

const (
	noValue    = -1
	manyValues = -2
)

func newDict() *dict { return &dict{ids: map[string]int32{}, freqAt: ^uint64(0), bitsOn: true} }

// bitsSlack lets a small field keep its bitmaps however its values are
// spread (a variable for tests).
var bitsSlack = int64(4096)

// tooManyValues reports whether the values are too many for bitmaps: fewer
// than 8 documents per value on average. fewValues, 16 or more, turns them
// on again, so that a field near the line does not switch at every write.
func (dc *dict) tooManyValues() bool { return int64(len(dc.ids))*8 > dc.total+bitsSlack }
func (dc *dict) fewValues() bool     { return int64(len(dc.ids))*16 <= dc.total+bitsSlack }

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
	dc.gen++
	if dc.bitsOn {
		for _, id := range dc.slotIDs(slot) {
			dc.bm[id].Remove(uint32(slot))
		}
		for _, id := range ids {
			dc.setBit(id, slot)
		}
	}
	for int(slot) >= len(dc.one) {
		dc.one = append(dc.one, noValue)
	}
	if dc.one[slot] == manyValues {
		dc.multi--
	}
	if len(ids) > 1 {
		dc.multi++
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
	for int(id) >= len(dc.bm) {
		dc.bm = append(dc.bm, nil)
	}
	if dc.bm[id] == nil {
		dc.bm[id] = roaring.New()
	}
	dc.bm[id].Add(uint32(slot))
}

func (dc *dict) add(v string) int32 {
	dc.gen++
	dc.total++
	if id, ok := dc.ids[v]; ok {
		dc.refs[id]++
		if !dc.bitsOn && dc.fewValues() {
			dc.rebuildBits()
		}
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
	if dc.bitsOn && dc.tooManyValues() {
		dc.bitsOn, dc.bm = false, nil
	}
	return id
}

func (dc *dict) release(id int32) {
	dc.gen++
	dc.total--
	dc.refs[id]--
	if dc.refs[id] == 0 {
		delete(dc.ids, dc.names[id])
		dc.names[id] = ""
		dc.free = append(dc.free, id)
		if int(id) < len(dc.bm) {
			dc.bm[id] = nil
		}
	}
	if !dc.bitsOn && dc.fewValues() {
		dc.rebuildBits()
	}
}

// rebuildBits turns the per-value bitmaps on and fills them from the slots.
func (dc *dict) rebuildBits() {
	dc.gen++
	dc.bitsOn, dc.bm = true, make([]*roaring.Bitmap, len(dc.names))
	for slot := range dc.one {
		for _, id := range dc.slotIDs(int32(slot)) {
			dc.setBit(id, int32(slot))
		}
	}
}

// freqOrder is the ids of the values held by some document, by descending
// refs (ties by id). It is computed once per state of the values; searches
// running at once share it.
func (dc *dict) freqOrder() []int32 {
	dc.freqMu.Lock()
	defer dc.freqMu.Unlock()
	if dc.freqAt == dc.gen {
		return dc.byFreq
	}
	order := make([]int32, 0, len(dc.ids))
	for _, id := range dc.ids {
		order = append(order, id)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(dc.refs[b], dc.refs[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	dc.byFreq, dc.freqAt = order, dc.gen
	return order
}
