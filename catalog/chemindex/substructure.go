package chemindex

import (
	"encoding/binary"

	"toxgate/sdk/chem"
)

// SubstructureSteps is the step budget of one substructure search over the
// whole index (candidate atoms tried by sdk/chem's matcher, over every
// row): about a second of one core. A pattern that needs more is refused
// with chem.ErrStepBudget rather than left running.
const SubstructureSteps = 200_000_000

// featWords is chem.NumFeatures counts packed 8 to a word.
const featWords = (chem.NumFeatures + 7) / 8

// highBits is the top bit of every byte.
const highBits = 0x8080808080808080

// appendFeatureWords appends f packed into featWords little-endian words.
func appendFeatureWords(dst []uint64, f *chem.Features) []uint64 {
	var b [featWords * 8]byte
	copy(b[:], f[:])
	for i := 0; i < featWords; i++ {
		dst = append(dst, binary.LittleEndian.Uint64(b[i*8:]))
	}
	return dst
}

// covers reports whether every byte of row is at least that of pat, all
// bytes at most 127: setting each row byte's top bit and subtracting
// leaves that bit set exactly where row ≥ pat, with no borrow across
// bytes.
func covers(row, pat []uint64) bool {
	for i := range pat {
		if ((row[i]|highBits)-pat[i])&highBits != highBits {
			return false
		}
	}
	return true
}

// worker is the scratch of one goroutine of a search: the matcher with its
// share of the step budget, the molecule being read, the pattern's screen
// words and the first error.
type worker struct {
	mt  *chem.Matcher
	tg  chem.Target
	pat []uint64
	err error
}

func newWorker(q *Query, steps int64) *worker {
	w := &worker{}
	if q.Mode == ModeSubstructure && q.Pattern != nil {
		w.mt = chem.NewMatcher(steps)
		f := q.Pattern.Features()
		w.pat = appendFeatureWords(nil, &f)
	}
	return w
}

// searchSub adds the segment's rows holding q.Pattern to h and returns how
// many matched: rows whose counts do not cover the pattern's are skipped
// without reading their molecule (unless q.NoPrefilter); the others are
// matched. A search out of
// steps stops and records the error.
func (s *segment) searchSub(q *Query, h *hitHeap, w *worker) int {
	if w.mt == nil || w.err != nil {
		return 0
	}
	var qfp *[fpWords]uint64
	if q.Structure != nil {
		qfp = (*[fpWords]uint64)(&q.Structure.FP)
	}
	total := 0
	for i := range s.rowIDs {
		if !q.NoPrefilter && !covers(s.feats[i*featWords:(i+1)*featWords], w.pat) {
			continue
		}
		if err := w.tg.UnmarshalBinary(s.graphs[s.goff[i]:s.goff[i+1]]); err != nil {
			continue // not written by SetTable: cannot happen
		}
		ok, err := w.mt.Match(q.Pattern, &w.tg)
		if err != nil {
			w.err = err
			return total
		}
		if !ok {
			continue
		}
		sim := 0.0
		if qfp != nil {
			and, or := andOr(qfp, (*[fpWords]uint64)(s.fps[i*fpWords:]))
			sim = 1
			if or > 0 {
				sim = float64(and) / float64(or)
			}
		}
		total++
		h.offerLazy(Hit{Resource: s.resource, Column: s.column, RowID: s.rowIDs[i], Similarity: sim}, q.Limit, s.smiles[i])
	}
	return total
}
