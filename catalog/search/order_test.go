package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestOrderingsSurviveStampWrap puts documents past the last stamp, with
// the orderings built, and checks that searches sorted by stored fields
// still answer as an index built afresh from the same documents.
func TestOrderingsSurviveStampWrap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ix, fresh := New(), New()
	ix.nextStamp = math.MaxUint32 - 150
	for i := range 200 {
		ix.Put(snapDoc(r, i))
	}
	// the orderings are built by the searches, then written to
	sameSearches(t, ix, ix)
	defer func(s int) { sideMax = s }(sideMax)
	sideMax = 4
	for range 150 {
		i := r.IntN(250)
		if r.IntN(3) == 0 {
			ix.Delete(fmt.Sprintf("id-%03d", i))
		} else {
			ix.Put(snapDoc(r, i))
		}
	}
	if ix.nextStamp > 1000 {
		t.Fatalf("stamps did not wrap: %d", ix.nextStamp)
	}
	for _, d := range ix.docs {
		// the same document, read back from the index
		c := &Doc{ID: d.ID, Ref: d.Ref, Public: d.Public, Fields: map[string][]string{}, Text: map[string]float64{}, Sort: map[string]string{}}
		for i, f := range textFieldNames {
			c.Fields[f] = d.text[i]
		}
		for f := range ix.fieldNum {
			c.Fields[f] = d.values(f)
		}
		for _, id := range d.toks {
			w, _ := ix.weightOf(ix.posts[id], d.slot)
			c.Text[ix.tokName[id]] = w
		}
		for i, f := range sortFields {
			c.Sort[f] = ix.sortCol[i][d.slot]
		}
		fresh.Put(c)
	}
	sameSearches(t, fresh, ix)
}
