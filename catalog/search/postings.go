package search

import (
	"slices"
)

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
