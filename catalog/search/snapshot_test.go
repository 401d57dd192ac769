package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// snapDoc is a random document for the snapshot tests, with the fields
// the catalog gives (text fields, interned fields with one and many
// values, sort values).
func snapDoc(r *rand.Rand, i int) *Doc {
	words := []string{"herg", "ahr", "pbpk", "assay", "rat", "rats", "human", "vitro", "vivo", "kinetics", "liver", "heart"}
	var text []string
	tx := map[string]float64{}
	for range 1 + r.IntN(6) {
		w := words[r.IntN(len(words))]
		text = append(text, w)
		tx[w] += float64(1 + r.IntN(4))
	}
	if i%17 == 0 {
		tx["odd"] = 0.1 * float64(i) // many distinct weights
	}
	if i%2 == 0 { // a token of one document, or of two
		tx[fmt.Sprintf("one%d", i/4)] = float64(1 + i%3)
	}
	var tags []string
	for range r.IntN(4) {
		tags = append(tags, words[r.IntN(len(words))])
	}
	mod := fmt.Sprintf("2024-01-%02dT00:00:00.%06dZ", 1+r.IntN(5), r.IntN(3))
	f := map[string][]string{"tags": tags, "organization": {fmt.Sprintf("org-%d", r.IntN(3))}, "text": text,
		"title": {strings.Join(text, " ")}, "notes": {words[r.IntN(len(words))] + " " + words[r.IntN(len(words))], "second note"},
		"metadata_modified": {mod}, "name": {fmt.Sprintf("d-%d", i)}, "empty": {""}}
	return &Doc{ID: fmt.Sprintf("id-%03d", i), Fields: f, Text: tx, Ref: i, Public: i%3 == 0,
		Sort: map[string]string{"name": f["name"][0], "metadata_modified": mod, "title_string": f["title"][0]}}
}

// snapIndex is an index after puts and deletes (so that slots, tokens
// and values are freed and reused).
func snapIndex(r *rand.Rand) *Index {
	ix := New()
	for i := range 200 {
		ix.Put(snapDoc(r, i))
	}
	for range 150 {
		i := r.IntN(250)
		if r.IntN(3) == 0 {
			ix.Delete(fmt.Sprintf("id-%03d", i))
		} else {
			ix.Put(snapDoc(r, i))
		}
	}
	return ix
}

var snapQueries = []string{"", "herg", "herg assay", "rats kinetics human", "+herg -assay", "-liver", "tags:herg", "title:assay",
	"text:herg*", "name:d-1?", "metadata_modified:[2024-01-03T00:00:00Z TO *]", `notes:"second note"`, "notes:herg", "empty:*", "odd", "one3", "one4 herg", "+one5 -herg", "text:one1*"}

// sameSearches fails unless a and b answer every query alike.
func sameSearches(t *testing.T, a, b *Index) {
	t.Helper()
	for _, q := range snapQueries {
		for _, srt := range []string{"", "name asc", "metadata_modified desc"} {
			query := Query{Q: q, Sort: srt, Rows: 1000, FacetFields: []string{"tags", "organization", "title", "name"}, FacetLimit: -1,
				Filters: []string{"-organization:org-2"}, Allow: func(d *Doc) bool { return d.Ref.(int)%5 != 0 }}
			got, err := b.Search(query)
			want, werr := a.Search(query)
			if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
				t.Fatalf("q=%q sort=%q:\n got %+v %v\nwant %+v %v", q, srt, got, err, want, werr)
			}
		}
	}
}

func writeSnap(t testing.TB, ix *Index, meta string) []byte {
	var buf bytes.Buffer
	if err := ix.WriteSnapshot(&buf, []byte(meta)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func refsOf(ix *Index) func(string) (any, bool) {
	return func(id string) (any, bool) {
		d := ix.Get(id)
		if d == nil {
			return nil, false
		}
		return d.Ref, true
	}
}

// TestSnapshotRoundTrip checks that an index read from its snapshot
// answers as the index written (hits, order, facet counts), and still
// does after the same writes to both.
func TestSnapshotRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ix := snapIndex(r)
	data := writeSnap(t, ix, "seq=42")
	got, meta, err := ReadSnapshot(data, refsOf(ix))
	if err != nil {
		t.Fatal(err)
	}
	if string(meta) != "seq=42" {
		t.Fatalf("meta %q", meta)
	}
	if m, err := SnapshotMeta(data); err != nil || string(m) != "seq=42" {
		t.Fatalf("SnapshotMeta %q %v", m, err)
	}
	if got.Len() != ix.Len() {
		t.Fatalf("len %d want %d", got.Len(), ix.Len())
	}
	sameSearches(t, ix, got)
	for range 100 {
		i := r.IntN(260)
		if r.IntN(3) == 0 {
			id := fmt.Sprintf("id-%03d", i)
			ix.Delete(id)
			got.Delete(id)
			continue
		}
		seed := r.Uint64()
		ix.Put(snapDoc(rand.New(rand.NewPCG(seed, 1)), i))
		got.Put(snapDoc(rand.New(rand.NewPCG(seed, 1)), i))
	}
	sameSearches(t, ix, got)
	// and a snapshot of the read index reads back the same again
	again, _, err := ReadSnapshot(writeSnap(t, got, ""), refsOf(got))
	if err != nil {
		t.Fatal(err)
	}
	sameSearches(t, ix, again)
}

// reseal gives body (a snapshot less its checksum) a right checksum.
func reseal(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, crcTable))
}

// TestSnapshotRefusesDamage checks that a truncated, altered, foreign or
// other-version snapshot, and one naming a document the caller does not
// hold, is refused with an error.
func TestSnapshotRefusesDamage(t *testing.T) {
	ix := snapIndex(rand.New(rand.NewPCG(5, 6)))
	data := writeSnap(t, ix, "m")
	refs := refsOf(ix)
	for _, n := range []int{0, 5, 12, 13, len(data) / 2, len(data) - 5, len(data) - 1} {
		if _, _, err := ReadSnapshot(data[:n], refs); !errors.Is(err, ErrSnapshot) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	for _, at := range []int{3, 20, len(data) / 3, len(data) - 2} {
		bad := bytes.Clone(data)
		bad[at] ^= 0x40
		if _, _, err := ReadSnapshot(bad, refs); !errors.Is(err, ErrSnapshot) {
			t.Fatalf("byte %d altered: %v", at, err)
		}
	}
	other := bytes.Clone(data[:len(data)-4])
	binary.LittleEndian.PutUint32(other[8:], SnapshotVersion+1)
	if _, _, err := ReadSnapshot(reseal(other), refs); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("other version: %v", err)
	}
	if _, _, err := ReadSnapshot(reseal(append(bytes.Clone(data[:len(data)-4]), 0)), refs); !errors.Is(err, ErrSnapshot) {
		t.Fatalf("trailing byte: %v", err)
	}
	missing := func(id string) (any, bool) {
		if id == ix.slots[len(ix.slots)-1].ID {
			return nil, false
		}
		return refs(id)
	}
	if _, _, err := ReadSnapshot(data, missing); err == nil || !strings.Contains(err.Error(), "not held") {
		t.Fatalf("unknown document: %v", err)
	}
}

// FuzzReadSnapshot decodes arbitrary snapshot bodies, sealed with a right
// checksum so that the decoder itself is reached: it must give an error
// or an index that searches without panicking, never a panic.
func FuzzReadSnapshot(f *testing.F) {
	ix := snapIndex(rand.New(rand.NewPCG(7, 8)))
	data := writeSnap(f, ix, "m")
	small := New()
	small.Put(&Doc{ID: "a", Fields: map[string][]string{"tags": {"x", "y"}, "title": {"a b"}}, Text: map[string]float64{"a": 4, "b": 2},
		Sort: map[string]string{"name": "a"}, Public: true})
	small.Put(&Doc{ID: "b", Fields: map[string][]string{"tags": {"y"}}, Text: map[string]float64{"b": 1}})
	small.Delete("a")
	smallData := writeSnap(f, small, "")
	f.Add(data[:len(data)-4])
	f.Add(smallData[:len(smallData)-4])
	f.Add(smallData[:len(smallData)/2])
	f.Add(data[:12])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 1<<20 {
			return
		}
		full := body
		if len(body) >= 12 {
			full = reseal(body)
		}
		got, _, err := ReadSnapshot(full, func(string) (any, bool) { return 1, true })
		if err != nil {
			return
		}
		for _, q := range snapQueries {
			if _, err := got.Search(Query{Q: q, Rows: 10, FacetFields: []string{"tags", "title"}, FacetLimit: 5}); err != nil {
				t.Fatalf("q=%q: %v", q, err)
			}
		}
		got.Put(&Doc{ID: "new", Fields: map[string][]string{"tags": {"x"}}, Text: map[string]float64{"b": 1}})
		got.Delete("a")
		got.Delete("b")
	})
}
