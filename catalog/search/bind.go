package search

import (
	"path"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// boundTerm is a term prepared for one index and one search: what it
// needs is looked up once (value ids, query tokens, postings as bitsets)
// instead of for every document. It matches exactly what its termNode
// matches and has the same terms.
type boundTerm struct {
	termNode
	fn func(d *Doc) bool
}

func (b boundTerm) match(d *Doc) bool { return b.fn(d) }

func matchNothing(*Doc) bool { return false }

// bind prepares n's terms for searching ix. Callers hold the index's read
// lock for as long as they use the result.
func (ix *Index) bind(n node) node {
	switch x := n.(type) {
	case andNode:
		out := make(andNode, len(x))
		for i, c := range x {
			out[i] = ix.bind(c)
		}
		return out
	case orNode:
		out := make(orNode, len(x))
		for i, c := range x {
			out[i] = ix.bind(c)
		}
		return out
	case notNode:
		return notNode{ix.bind(x.n)}
	case termNode:
		return ix.bindTerm(x)
	}
	return n
}

func (ix *Index) bindTerm(t termNode) node {
	if t.isRange || (t.value == "*" && !t.phrase) {
		return t
	}
	wild := !t.phrase && strings.ContainsAny(t.value, "*?")
	words := (len(ix.slots) + 63) / 64
	if (t.field == "" || t.field == "text") && !wild {
		bits := ix.holdersOfAll(Tokens(t.value))
		if bits == nil {
			return boundTerm{t, matchNothing}
		}
		return boundTerm{t, func(d *Doc) bool { return bits[d.slot>>6]&(1<<(d.slot&63)) != 0 }}
	}
	if t.field == "" || t.field == "text" {
		var bits []uint64
		if wild {
			// the tokens of the index that fit the pattern, by their postings
			pattern := strings.ToLower(t.value)
			bits = make([]uint64, words)
			for tok, id := range ix.tokID {
				if ok, _ := path.Match(pattern, tok); ok {
					ix.posts[id].orInto(bits)
				}
			}
		}
		return boundTerm{t, func(d *Doc) bool { return bits[d.slot>>6]&(1<<(d.slot&63)) != 0 }}
	}
	if TextFields[t.field] {
		want := Tokens(t.value)
		if len(want) == 0 {
			return boundTerm{t, matchNothing}
		}
		// documents whose values of the field hold every token; with one
		// value (or one token) that is the answer, else the tokens must
		// also be in one value
		field := t.field
		bits := ix.fieldHoldersOfAll(field, want)
		if bits == nil {
			return boundTerm{t, matchNothing}
		}
		return boundTerm{t, func(d *Doc) bool {
			if bits[d.slot>>6]&(1<<(d.slot&63)) == 0 {
				return false
			}
			if len(want) == 1 {
				return true
			}
			vals := d.values(field)
			if len(vals) == 1 {
				return true
			}
			for _, v := range vals {
				if containsAll(Tokens(v), want) {
					return true
				}
			}
			return false
		}}
	}
	if wild {
		return t
	}
	n, ok := ix.fieldNum[t.field]
	if !ok {
		return boundTerm{t, matchNothing}
	}
	dc := ix.dicts[n]
	id, ok := dc.ids[t.value]
	if !ok {
		return boundTerm{t, matchNothing}
	}
	return boundTerm{t, func(d *Doc) bool {
		for _, v := range dc.slotIDs(d.slot) {
			if v == id {
				return true
			}
		}
		return false
	}}
}

// holdersOfAll is the set of documents whose Text holds every token of
// toks, as a bitset by slot; nil when that is no document (or toks is
// empty).
func (ix *Index) holdersOfAll(toks []string) []uint64 {
	if len(toks) == 0 {
		return nil
	}
	words := (len(ix.slots) + 63) / 64
	var bits, tb []uint64
	for i, tok := range toks {
		p := ix.posting(tok)
		if p == nil {
			return nil
		}
		if i == 0 {
			bits = make([]uint64, words)
			p.orInto(bits)
			continue
		}
		if tb == nil {
			tb = make([]uint64, words)
		} else {
			clear(tb)
		}
		p.orInto(tb)
		for w := range bits {
			bits[w] &= tb[w]
		}
	}
	return bits
}

// fieldHoldersOfAll is the set of documents whose values of text field f
// hold every token of toks (not necessarily in one value), as a bitset by
// slot; nil when that is no document.
func (ix *Index) fieldHoldersOfAll(f string, toks []string) []uint64 {
	words := (len(ix.slots) + 63) / 64
	var bits, tb []uint64
	for i, tok := range toks {
		p, ok := ix.fpost[f+"\x00"+tok]
		if !ok {
			return nil
		}
		if i == 0 {
			bits = make([]uint64, words)
			p.into(bits)
			continue
		}
		if tb == nil {
			tb = make([]uint64, words)
		} else {
			clear(tb)
		}
		p.into(tb)
		for w := range bits {
			bits[w] &= tb[w]
		}
	}
	return bits
}

// bitmapInto sets the bits of b's members in bits.
func bitmapInto(b *roaring.Bitmap, bits []uint64) {
	var buf [256]uint32
	it := b.ManyIterator()
	for {
		n := it.NextMany(buf[:])
		if n == 0 {
			return
		}
		for _, s := range buf[:n] {
			bits[s>>6] |= 1 << (s & 63)
		}
	}
}
