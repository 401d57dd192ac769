package search

import (
	"encoding/binary"
	"slices"
)

// A document's token ids (Doc.toks) are kept ascending as uvarint
// deltas: a document holds tens of tokens whose ids, sorted, lie a few
// thousand apart, so an id costs about two bytes instead of four. They
// are read whole, to take the document out of the postings or to walk
// its tokens; whether it holds a token is asked of the token's posting.

// encodeToks encodes ids (ascending, distinct) as uvarint deltas.
func encodeToks(ids []int32) []byte {
	out := make([]byte, 0, len(ids)*2)
	prev := int32(-1)
	for _, id := range ids {
		out = binary.AppendUvarint(out, uint64(id-prev))
		prev = id
	}
	return slices.Clip(out)
}

// appendTok adds id, larger than every id in toks, to toks.
func appendTok(toks []byte, last, id int32) []byte {
	return binary.AppendUvarint(toks, uint64(id-last))
}

// eachTok calls fn with each id of toks, ascending, until fn returns true.
func eachTok(toks []byte, fn func(id int32) bool) bool {
	id := int32(-1)
	for len(toks) > 0 {
		d, n := binary.Uvarint(toks)
		if n <= 0 {
			return false
		}
		toks = toks[n:]
		id += int32(d)
		if fn(id) {
			return true
		}
	}
	return false
}
