package search

import (
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// filterBitmap returns the documents a bound filter matches as a bitmap,
// when it is made of exact values of fields with value bitmaps and of
// free-text terms, joined by AND, OR and NOT; ok is false for anything
// else (ranges, wildcards, text fields' terms), which is then matched
// document by document. The bitmap may be one of the index's own: the
// caller must not change it.
func (ix *Index) filterBitmap(n node) (b *roaring.Bitmap, ok bool) {
	switch x := n.(type) {
	case andNode:
		parts, ok := ix.filterBitmaps(x)
		if !ok {
			return nil, false
		}
		switch len(parts) {
		case 0:
			return ix.live, true
		case 1:
			return parts[0], true
		}
		return roaring.FastAnd(parts...), true
	case orNode:
		parts, ok := ix.filterBitmaps(x)
		if !ok {
			return nil, false
		}
		return roaring.FastOr(parts...), true
	case notNode:
		p, ok := ix.filterBitmap(x.n)
		if !ok {
			return nil, false
		}
		return roaring.AndNot(ix.live, p), true
	case boundTerm:
		return ix.termBitmap(x.termNode)
	}
	return nil, false
}

// termBitmap is filterBitmap for one term, as bindTerm matches it.
func (ix *Index) termBitmap(t termNode) (*roaring.Bitmap, bool) {
	if t.isRange || (t.value == "*" && !t.phrase) || (!t.phrase && strings.ContainsAny(t.value, "*?")) {
		return nil, false
	}
	if t.field == "" || t.field == "text" {
		var parts []*roaring.Bitmap
		toks := Tokens(t.value)
		for _, tok := range toks {
			p := ix.posting(tok)
			if p == nil {
				return roaring.New(), true
			}
			parts = append(parts, p.bits())
		}
		switch len(parts) {
		case 0:
			return roaring.New(), true
		case 1:
			return parts[0], true
		}
		return roaring.FastAnd(parts...), true
	}
	if TextFields[t.field] {
		return nil, false
	}
	num, ok := ix.fieldNum[t.field]
	if !ok {
		return roaring.New(), true
	}
	dc := ix.dicts[num]
	id, ok := dc.ids[t.value]
	if !ok {
		return roaring.New(), true
	}
	if !dc.bitsOn {
		return nil, false
	}
	return dc.bm[id], true
}

// filterBitmaps is filterBitmap of each of nodes; ok is false when one of
// them has none.
func (ix *Index) filterBitmaps(nodes []node) ([]*roaring.Bitmap, bool) {
	parts := make([]*roaring.Bitmap, 0, len(nodes))
	for _, c := range nodes {
		p, ok := ix.filterBitmap(c)
		if !ok {
			return nil, false
		}
		parts = append(parts, p)
	}
	return parts, true
}
