package search

import "github.com/RoaringBitmap/roaring/v2"

// slotSet is a set of slots (Index.fpost's entries). Most of a large
// catalog's field tokens are held by one document (a number in a title,
// a name), so a set of one keeps its slot without a bitmap; the bitmap is
// made when a second slot joins and kept while the set is not empty.
type slotSet struct {
	bm  *roaring.Bitmap // nil: the set is {one}
	one int32
}

// with is s with slot added.
func (s slotSet) with(slot int32) slotSet {
	if s.bm == nil {
		if s.one == slot {
			return s
		}
		s.bm, s.one = roaring.BitmapOf(uint32(s.one)), -1
	}
	s.bm.Add(uint32(slot))
	return s
}

// without is s with slot removed, and whether it is then empty.
func (s slotSet) without(slot int32) (slotSet, bool) {
	if s.bm == nil {
		return s, s.one == slot
	}
	s.bm.Remove(uint32(slot))
	return s, s.bm.IsEmpty()
}

// len is the number of slots in s.
func (s slotSet) len() int {
	if s.bm == nil {
		return 1
	}
	return int(s.bm.GetCardinality())
}

// into sets the bits of s's slots in bits.
func (s slotSet) into(bits []uint64) {
	if s.bm == nil {
		bits[s.one>>6] |= 1 << (s.one & 63)
		return
	}
	bitmapInto(s.bm, bits)
}

// each calls fn with each slot of s, ascending.
func (s slotSet) each(fn func(slot int32)) {
	if s.bm == nil {
		fn(s.one)
		return
	}
	it := s.bm.Iterator()
	for it.HasNext() {
		fn(int32(it.Next()))
	}
}
