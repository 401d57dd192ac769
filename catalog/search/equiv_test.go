package search

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestSearchMatchesReference checks, over random documents, writes and
// queries, that Search gives what the plain map-based search gave: the same
// count, page, order and facets.
func TestSearchMatchesReference(t *testing.T) {
	// the second run also has a document whose title's tokens are not
	// all in its Text, and fields whose value bitmaps come and go; the
	// third counts every facet through the values' bitmaps and merges the
	// orderings' side lists often
	defer func(s int, b int64) { byValues, sideMax, bitsSlack = false, s, b }(sideMax, bitsSlack)
	for i, incomplete := range []bool{false, true, false} {
		if i == 1 {
			bitsSlack = 0 // fields switch their bitmaps off and on
		}
		if i == 2 {
			byValues, sideMax, bitsSlack = true, 8, 4096
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { searchMatchesReference(t, incomplete) })
	}
}

func searchMatchesReference(t *testing.T, incomplete bool) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"herg", "ahr", "pbpk", "assay", "rat", "rats", "human", "vitro", "vivo", "kinetics", "liver", "heart"}
	tags := []string{"herg", "in vitro", "in vivo", "pbpk", "rat"}
	orgs := []string{"liver-lab", "heart-lab", "kidney-lab"}
	doc := func(i int) *Doc {
		var text []string
		tx := map[string]float64{}
		for range 1 + r.IntN(6) {
			w := words[r.IntN(len(words))]
			text = append(text, w)
			for _, tok := range Tokens(w) {
				tx[tok] += float64(1 + r.IntN(4))
			}
		}
		// a rare word, held by one document or a few, so that postings
		// go between one document and several
		if rare := fmt.Sprintf("rare%d", r.IntN(600)); r.IntN(2) == 0 {
			text = append(text, rare)
			tx[rare] += float64(1 + r.IntN(4))
		}
		var tg []string
		for range r.IntN(4) {
			tg = append(tg, tags[r.IntN(len(tags))])
		}
		mod := fmt.Sprintf("2024-01-%02dT00:00:00Z", 1+r.IntN(5))
		if r.IntN(2) == 0 { // a timestamp sorted as a number
			mod = fmt.Sprintf("2024-01-%02dT00:00:00.%06dZ", 1+r.IntN(5), r.IntN(3))
		}
		var notes []string // a text field with several values
		for range r.IntN(3) {
			notes = append(notes, words[r.IntN(len(words))]+" "+words[r.IntN(len(words))])
		}
		f := map[string][]string{"notes": notes, "tags": tg, "organization": {orgs[r.IntN(len(orgs))]}, "text": text,
			"title": {strings.Join(text, " ")}, "metadata_modified": {mod}, "name": {fmt.Sprintf("d-%d", r.IntN(50))}}
		return &Doc{ID: fmt.Sprintf("id-%03d", i), Fields: f, Text: tx, Ref: i, Public: i%5 == 0,
			Sort: map[string]string{"name": f["name"][0], "metadata_modified": mod, "title_string": f["title"][0]}}
	}
	clone := func(d *Doc) *Doc {
		c := *d
		c.Fields = map[string][]string{}
		for k, v := range d.Fields {
			c.Fields[k] = append([]string(nil), v...)
		}
		return &c
	}
	ix, ref := New(), refNew()
	for i := range 400 {
		d := doc(i)
		ref.refPut(clone(d)) // before Put, which takes d.Text
		ix.Put(d)
	}
	// updates and deletes, so that slots and value ids are reused
	write := func() {
		i := r.IntN(500)
		if r.IntN(3) == 0 {
			id := fmt.Sprintf("id-%03d", i)
			ix.Delete(id)
			ref.refDelete(id)
			return
		}
		d := doc(i)
		ref.refPut(clone(d)) // before Put, which takes d.Text
		ix.Put(d)
	}
	for range 300 {
		write()
	}
	if incomplete {
		d := &Doc{ID: "odd", Fields: map[string][]string{"title": {"assay zebra"}, "tags": {"rat"}}, Text: map[string]float64{"assay": 1}, Ref: 1,
			Sort: map[string]string{"name": "odd"}}
		ref.refPut(clone(d))
		ix.Put(d)
	}
	if ix.Len() != len(ref.docs) {
		t.Fatalf("len %d want %d", ix.Len(), len(ref.docs))
	}
	qs := []string{"", "*:*", "herg", "herg assay", "rats kinetics human", "herg ahr pbpk assay rat vitro", "+herg -assay",
		"-liver", "+nothing herg", "human \"in vitro\"", "herg herg -\"in vivo\"", "+\"in vitro\" +rat herg ahr", "-herg -rat", "tags:herg", "tags:herg OR organization:liver-lab", "title:assay", "zzz", "+ -",
		"text:herg*", "tags:in*", `tags:"in vitro" AND -organization:heart-lab`, "name:d-1?", "text:rat", "organization:nope", "nothing:here",
		"title:*", "tags:*", "metadata_modified:[2024-01-03T00:00:00Z TO *]", `title:"assay rat"`, "title:zzz", "text:vi*o OR name:d-4*", "title:zebra",
		`notes:"assay rat"`, "notes:herg", `notes:"rats human"`, "notes:*",
		"rare7", "rare12 herg", "+rare3 -herg", "rare5 rare6 rare8", "text:rare1*", "title:rare9", "rare2 rare2",
		"rare3 herg assay", "rare10 rat liver", "rare4 rare11 human vitro"}
	sorts := []string{"", "score desc, metadata_modified desc", "name asc", "title asc, name desc", "metadata_modified asc", "score asc, name desc", "name desc, score desc"}
	fqs := [][]string{nil, {"organization:liver-lab"}, {"-tags:rat"}, {`tags:"in vivo" OR title:rat`, "-text:herg"}}
	nonEmpty := 0
	compare := func(qs []string) {
		for _, q := range qs {
			for _, srt := range sorts {
				for _, fq := range fqs {
					for _, page := range [][2]int{{0, 10}, {5, 3}, {0, 1000}, {390, 20}} {
						query := Query{Q: q, Filters: fq, Sort: srt, Start: page[0], Rows: page[1],
							FacetFields: []string{"tags", "organization", "title", "nope", "name"}, FacetLimit: 3, FacetMinCount: 1,
							Allow: func(d *Doc) bool { return d.Ref.(int)%7 != 0 }}
						if page[0] == 5 {
							query.FacetLimit, query.FacetMinCount = -1, 0
						}
						got, err := ix.Search(query)
						// Public documents are allowed without asking Allow
						refQuery := query
						refQuery.Allow = func(d *Doc) bool { return d.Public || query.Allow(d) }
						if page[0] == 390 {
							// a caller who may read the Public documents alone
							query.PublicOnly, query.Allow = true, func(*Doc) bool { return false }
							got, err = ix.Search(query)
							refQuery.Allow = func(d *Doc) bool { return d.Public }
						}
						want, werr := ref.refSearch(refQuery)
						if (err == nil) != (werr == nil) {
							t.Fatalf("q=%q: err %v want %v", q, err, werr)
						}
						if len(want.IDs) > 1 {
							nonEmpty++
						}
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("q=%q sort=%q fq=%v page=%v:\n got %+v\nwant %+v", q, srt, fq, page, got, want)
						}
					}
				}
			}
		}
	}
	compare(qs)
	// writes once the orderings are built, then the searches again
	for range 300 {
		write()
	}
	compare(qs[:12])
	compare(qs[len(qs)-10:])
	if nonEmpty < 300 {
		t.Fatalf("only %d searches gave more than one result", nonEmpty)
	}
}
