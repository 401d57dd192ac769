package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/identity"
)

// openLogged opens a catalog on f's store with opts and its log.
func (f *fixture) openLogged(opts Options) (*Service, *lockedBuffer) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log := &lockedBuffer{}
	opts.Logger, opts.Users = slog.New(slog.NewTextHandler(log, nil)), identity.NewStore(f.db)
	svc, err := New(ctx, f.db, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return svc, log
}

// openWithSnapshot opens a catalog on f's store with the index snapshot
// at path and returns it with its log.
func (f *fixture) openWithSnapshot(path string) (*Service, *lockedBuffer) {
	f.t.Helper()
	svc, log := f.openLogged(Options{IndexSnapshot: path})
	// its first snapshot is written before it serves; wait for it anyway
	<-svc.snapFirst
	return svc, log
}

// sameSearchesAs fails unless got answers package_search as want does
// (hits, order, counts and facets), for anonymous callers and a sysadmin.
func (f *fixture) sameSearchesAs(got, want *Service) {
	f.t.Helper()
	queries := []map[string]any{
		{"q": "assay", "facet.field": `["tags","organization"]`},
		{"q": "liver rat", "facet.field": `["tags","res_format"]`, "rows": 50},
		{"q": "tags:herg", "sort": "name asc"},
		{"fq": "organization:tox-lab", "facet.field": `["tags"]`, "rows": 100, "sort": "metadata_modified desc"},
		{"q": "*:*", "include_private": true, "rows": 100, "facet.field": `["organization","tags"]`},
		{"q": "Toxicology"},
	}
	for _, user := range []string{"", "sysadmin"} {
		for _, q := range queries {
			a, aerr := callSvc(f.t, got, f.users[user], "package_search", q)
			b, berr := callSvc(f.t, want, f.users[user], "package_search", q)
			if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(aerr, berr) {
				ja, _ := json.Marshal(a)
				jb, _ := json.Marshal(b)
				f.t.Fatalf("user %q q %v:\n got %.600s\nwant %.600s", user, q, ja, jb)
			}
		}
	}
}

// snapFixture is a fixture holding snapDataset(0) … snapDataset(n-1).
func snapFixture(t *testing.T, n int) *fixture {
	f := newFixture(t)
	for i := range n {
		f.ok("sysadmin", "package_create", snapDataset(i))
	}
	return f
}

func snapDataset(i int) map[string]any {
	words := []string{"assay", "liver", "rat", "herg", "kinetics"}
	return map[string]any{"name": fmt.Sprintf("snap-%02d", i), "title": fmt.Sprintf("%s study %d", words[i%5], i), "owner_org": "tox-lab",
		"notes": words[(i+1)%5] + " " + words[(i+2)%5], "private": i%4 == 0,
		"tags":      []any{map[string]any{"name": words[i%5]}, map[string]any{"name": words[(i+3)%5]}},
		"resources": []any{map[string]any{"url": "http://example.org/x.csv", "format": "CSV", "name": "table " + words[i%5]}}}
}

// TestIndexSnapshotRestoresAndCatchesUp checks that a catalog starts from
// an index snapshot made before later writes (a dataset created, one
// changed, one deleted, one purged) and answers every search as a catalog
// that indexed every dataset.
func TestIndexSnapshotRestoresAndCatchesUp(t *testing.T) {
	f := snapFixture(t, 20)
	path := filepath.Join(t.TempDir(), "index.snap")
	a, _ := f.openWithSnapshot(path)
	if err := a.st.writeSnapshot(path); err != nil {
		t.Fatal(err)
	}
	f.ok("sysadmin", "package_create", snapDataset(20))
	f.ok("sysadmin", "package_patch", map[string]any{"id": "snap-03", "title": "Renamed herg screen", "tags": []any{map[string]any{"name": "herg"}}})
	f.ok("sysadmin", "package_delete", map[string]any{"id": "snap-05"})
	f.ok("sysadmin", "dataset_purge", map[string]any{"id": "snap-06"})
	b, log := f.openWithSnapshot(path)
	if !strings.Contains(log.String(), "restored from its snapshot") || !strings.Contains(log.String(), "reindexed=3") {
		t.Fatalf("snapshot not used as expected:\n%s", log)
	}
	// 3 documents indexed again: the snapshot is not written again
	if !strings.Contains(log.String(), "current enough; not written again") || strings.Contains(log.String(), "index snapshot written") {
		t.Fatalf("a nearly current snapshot written again at start:\n%s", log)
	}
	f.sameSearchesAs(b, f.open(Options{}))
	// writes after the start reach the restored index as any other
	f.ok("sysadmin", "package_patch", map[string]any{"id": "snap-07", "title": "kinetics again"})
	f.sameSearchesAs(b, f.open(Options{}))
}

// TestIndexSnapshotIgnoredWhenUnusable checks that a snapshot that is
// truncated, damaged, of another version or ahead of the store's marker
// is not used: the catalog indexes every dataset and answers as one
// without a snapshot. One made before an organization changed is used,
// with that organization's datasets indexed again.
func TestIndexSnapshotIgnoredWhenUnusable(t *testing.T) {
	f := snapFixture(t, 12)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.snap")
	a, _ := f.openWithSnapshot(good)
	if err := a.st.writeSnapshot(good); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	variant := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	damaged := bytes.Clone(data)
	damaged[len(damaged)/2] ^= 1
	otherVersion := bytes.Clone(data)
	otherVersion[8]++
	// a snapshot ahead of the store (of another store, or one restored
	// from an older backup) and one of another document version
	meta := func(m snapshotMeta) string {
		var buf bytes.Buffer
		raw, _ := json.Marshal(m)
		a.st.mu.RLock()
		err := a.st.index.WriteSnapshot(&buf, raw)
		a.st.mu.RUnlock()
		if err != nil {
			t.Fatal(err)
		}
		return variant(fmt.Sprintf("meta-%d-%d.snap", m.Doc, m.Seq), buf.Bytes())
	}
	ctx := a.st.contextPrints()
	applied, _ := a.st.appliedMarker()
	cases := map[string]string{
		"truncated":     variant("truncated.snap", data[:len(data)-100]),
		"empty":         variant("empty.snap", nil),
		"damaged":       variant("damaged.snap", damaged),
		"other version": variant("version.snap", otherVersion),
		"marker ahead":  meta(snapshotMeta{Doc: docVersion, Seq: applied + 1, Context: ctx}),
		"doc version":   meta(snapshotMeta{Doc: docVersion + 1, Seq: applied, Context: ctx}),
	}
	want := f.open(Options{})
	for name, p := range cases {
		svc, log := f.openWithSnapshot(p)
		if !strings.Contains(log.String(), "snapshot not used") {
			t.Fatalf("%s: snapshot used:\n%s", name, log)
		}
		f.sameSearchesAs(svc, want)
	}
	// an organization renamed since: its datasets' documents carry its
	// title, so they are indexed again
	f.ok("sysadmin", "organization_patch", map[string]any{"id": "tox-lab", "title": "Renamed Lab"})
	svc, log := f.openWithSnapshot(variant("again.snap", data))
	if !strings.Contains(log.String(), "reindexed=12") {
		t.Fatalf("organization changed: its datasets not indexed again:\n%s", log)
	}
	f.sameSearchesAs(svc, f.open(Options{}))
}
