package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
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
			c.Fields[f] = d.textOf(i)
		}
		for f := range ix.fieldNum {
			c.Fields[f] = d.values(f)
		}
		eachTok(d.toks, func(id int32) bool {
			w, _ := ix.weightOf(ix.posts[id], d.slot)
			c.Text[ix.tokName[id]] = w
			return false
		})
		for i, f := range sortFields {
			c.Sort[f] = ix.sortCol[i][d.slot]
		}
		fresh.Put(c)
	}
	sameSearches(t, fresh, ix)
}

// TestSearchesRaceWrites runs searches at once (each building or walking
// the orderings and the facet order) between writes, under a read-write
// lock as the catalog's read model holds it; run with -race.
func TestSearchesRaceWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ix := New()
	for i := range 300 {
		ix.Put(snapDoc(r, i))
	}
	var mu sync.RWMutex
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				mu.RLock()
				_, err := ix.Search(Query{Q: snapQueries[(g+i)%len(snapQueries)], Sort: []string{"", "name asc", "metadata_modified desc"}[i%3],
					Rows: 5, FacetFields: []string{"tags", "organization"}, FacetLimit: 2, FacetMinCount: 1, PublicOnly: i%2 == 0,
					Allow: func(d *Doc) bool { return d.Public }})
				mu.RUnlock()
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range 100 {
		mu.Lock()
		ix.Put(snapDoc(r, 300+i%50))
		mu.Unlock()
	}
	wg.Wait()
}
