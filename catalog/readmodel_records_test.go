package catalog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// openWithRecords opens a catalog on f's store keeping its records file
// at path (and no index snapshot) and returns it with its log, once its
// records file is written; the catalog is closed at the end of the test.
func (f *fixture) openWithRecords(path string) (*Service, *lockedBuffer) {
	f.t.Helper()
	svc, log := f.openLogged(Options{RecordsFile: path})
	f.t.Cleanup(svc.Close)
	<-svc.recordsFirst
	return svc, log
}

// fromRecords is openWithRecords for a catalog that must start from the
// records file at path, its log naming each of also too.
func (f *fixture) fromRecords(path string, also ...string) *Service {
	f.t.Helper()
	svc, log := f.openWithRecords(path)
	for _, want := range append([]string{"loaded from its records file"}, also...) {
		if !strings.Contains(log.String(), want) {
			f.t.Fatalf("records file not used as expected (no %q):\n%s", want, log)
		}
	}
	return svc
}

// sameCatalogAs fails unless got holds the datasets want holds, as
// package_show answers them to a sysadmin, and answers every search as
// want does.
func (f *fixture) sameCatalogAs(got, want *Service) {
	f.t.Helper()
	names := func(s *Service) []any {
		res, err := callSvc(f.t, s, f.users["sysadmin"], "package_search", map[string]any{"q": "*:*", "include_private": true, "include_drafts": true, "rows": 1000, "sort": "name asc"})
		if err != nil {
			f.t.Fatal(err)
		}
		var out []any
		for _, r := range res.(map[string]any)["results"].([]any) {
			out = append(out, r.(map[string]any)["name"])
		}
		return out
	}
	gn, wn := names(got), names(want)
	if !reflect.DeepEqual(gn, wn) {
		f.t.Fatalf("datasets differ:\n got %v\nwant %v", gn, wn)
	}
	for _, n := range wn {
		a, aerr := callSvc(f.t, got, f.users["sysadmin"], "package_show", map[string]any{"id": n})
		b, berr := callSvc(f.t, want, f.users["sysadmin"], "package_show", map[string]any{"id": n})
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(aerr, berr) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			f.t.Fatalf("package_show %v:\n got %.800s\nwant %.800s", n, ja, jb)
		}
	}
	f.sameSearchesAs(got, want)
}

// TestRecordsFileRestartsWithTheProcessWrites checks that a catalog
// starts from the records file another process wrote, with the changes
// that process made after writing its base (a create, a change, a
// delete, a purge), and answers as a catalog that read every dataset
// from the store; and that it catches up with what others wrote since.
func TestRecordsFileRestartsWithTheProcessWrites(t *testing.T) {
	f := snapFixture(t, 20)
	path := filepath.Join(t.TempDir(), "catalog.records")
	a, _ := f.openWithRecords(path)
	as := func(action string, data map[string]any) {
		t.Helper()
		if _, err := callSvc(t, a, f.users["sysadmin"], action, data); err != nil {
			t.Fatalf("%s: %v", action, err)
		}
	}
	as("package_create", snapDataset(20))
	as("package_patch", map[string]any{"id": "snap-03", "title": "Renamed herg screen", "tags": []any{map[string]any{"name": "herg"}}})
	as("package_delete", map[string]any{"id": "snap-05"})
	as("dataset_purge", map[string]any{"id": "snap-06"})
	a.Close()

	b := f.fromRecords(path, "datasets=20")
	f.sameCatalogAs(b, f.open(Options{}))

	// what another process writes while this one is down: more changes
	// than the marker lists, so the claims tell which
	b.Close()
	for i := 21; i < 40; i++ {
		f.ok("sysadmin", "package_create", snapDataset(i))
	}
	f.ok("sysadmin", "package_patch", map[string]any{"id": "snap-07", "notes": "kinetics again"})
	f.ok("sysadmin", "dataset_purge", map[string]any{"id": "snap-08"})
	f.sameCatalogAs(f.fromRecords(path, "caught up from claims"), f.open(Options{}))
}

// TestRecordsFileSeesAWriteWhoseProcessDied checks that a dataset written
// to the store by a process that died before raising the change marker
// (so no marker names it) is read after a start from the records file,
// as a full load reads it.
func TestRecordsFileSeesAWriteWhoseProcessDied(t *testing.T) {
	f := snapFixture(t, 5)
	path := filepath.Join(t.TempDir(), "catalog.records")
	a, _ := f.openWithRecords(path)
	a.Close()
	// the steps of a create up to its record, without the marker raise
	ctx := context.Background()
	w := f.open(Options{})
	orphan := snapDataset(9)
	res, cerr := callSvc(t, w, f.users["sysadmin"], "package_create", orphan)
	if cerr != nil {
		t.Fatal(cerr)
	}
	var d Dataset
	if err := w.c.datasets.FindOne(ctx, bson.M{"_id": res.(map[string]any)["id"]}).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.datasets.DeleteOne(ctx, bson.M{"_id": d.ID}); err != nil {
		t.Fatal(err)
	}
	seqBefore, _, err := w.c.readSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d.ID, d.Name = "0000aaaa-0000-4000-8000-000000000009", "orphan-set"
	if err := w.c.note(ctx, kindDataset, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.datasets.InsertOne(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if seq, _, _ := w.c.readSeq(ctx); seq != seqBefore {
		t.Fatalf("the marker moved: %d → %d", seqBefore, seq)
	}
	b := f.fromRecords(path)
	if _, err := callSvc(t, b, f.users["sysadmin"], "package_show", map[string]any{"id": "orphan-set"}); err != nil {
		t.Fatalf("the orphan write is not read: %v", err)
	}
	f.sameCatalogAs(b, f.open(Options{}))
}

// TestRecordsFileTornOrUnusable checks that a records file cut inside its
// journal is used up to its last whole mark, and that one cut inside its
// base, damaged there, of another store or ahead of the store's marker is
// not used: the catalog reads every dataset from the store. Either way it
// answers as a catalog that read every dataset from the store.
func TestRecordsFileTornOrUnusable(t *testing.T) {
	f := snapFixture(t, 12)
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.records")
	a, _ := f.openWithRecords(path)
	base, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 12; i < 15; i++ {
		if _, err := callSvc(t, a, f.users["sysadmin"], "package_create", snapDataset(i)); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(full) <= len(base) {
		t.Fatalf("no journal appended: %d bytes, base %d", len(full), len(base))
	}
	variant := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := f.open(Options{})
	for name, p := range map[string]string{
		"torn journal":    variant("torn", full[:len(full)-5]),
		"journal garbage": variant("garbage", append(bytes.Clone(full), 0xff, 0, 0, 0, 1, 2, 3)),
	} {
		t.Log(name)
		f.sameCatalogAs(f.fromRecords(p), want)
	}
	damaged := bytes.Clone(base)
	damaged[len(base)/2] ^= 1
	otherStore := bytes.Replace(bytes.Clone(full), []byte(a.storeID), []byte(strings.Repeat("0", len(a.storeID))), 1)
	ahead := recordsWithHeader(t, base, func(h *recordsHeader) { h.Seq += 1000 })
	version := recordsWithHeader(t, full, func(h *recordsHeader) { h.Version++ })
	for name, p := range map[string]string{
		"cut in the base": variant("cut", base[:len(base)-40]),
		"damaged base":    variant("damaged", damaged),
		"empty":           variant("empty", nil),
		"other store":     variant("other", otherStore),
		"marker ahead":    variant("ahead", ahead),
		"other version":   variant("version", version),
	} {
		svc, log := f.openWithRecords(p)
		if !strings.Contains(log.String(), "records file not used") {
			t.Fatalf("%s: records file used:\n%s", name, log)
		}
		f.sameCatalogAs(svc, want)
	}
}

// recordsWithHeader is file with its header changed by edit.
func recordsWithHeader(t *testing.T, file []byte, edit func(*recordsHeader)) []byte {
	t.Helper()
	r := bytes.NewReader(file[len(recordsMagic):])
	br := bufio.NewReader(r)
	kind, body, err := readFrame(br, nil)
	if err != nil || kind != frameHeader {
		t.Fatal("no header", err)
	}
	var h recordsHeader
	if err := json.Unmarshal(body[1:], &h); err != nil {
		t.Fatal(err)
	}
	edit(&h)
	hb, _ := json.Marshal(h)
	rest := file[len(file)-r.Len()-br.Buffered():]
	out := append([]byte(recordsMagic), appendFrame(nil, frameHeader, hb)...)
	return append(out, rest...)
}

// FuzzRestoreRecords checks that any bytes given as a records file are
// refused or read without a panic, and that what is read is whole.
func FuzzRestoreRecords(f *testing.F) {
	rm := genModel(f, 6)
	rm.applied = 7
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.records")
	rf, err := rm.startRecords(path, "s")
	if err != nil {
		f.Fatal(err)
	}
	for id := range rm.datasets {
		rm.mu.Lock()
		rm.removeDataset(id)
		rm.applied++
		rm.mu.Unlock()
		break
	}
	if err := rf.flush(rm); err != nil {
		f.Fatal(err)
	}
	rf.close(rm)
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte(recordsMagic))
	f.Add(append([]byte(recordsMagic), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "r")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fresh := newReadModel()
		fresh.deferIndex = true
		got, err := fresh.restoreRecords(p, "s", 2)
		if err != nil {
			return
		}
		if got.datasets != len(fresh.datasets) {
			t.Fatalf("read %d datasets, hold %d", got.datasets, len(fresh.datasets))
		}
		for id, d := range fresh.datasets {
			if id != d.ID || id == "" {
				t.Fatalf("dataset %q held as %q", d.ID, id)
			}
		}
	})
}

// TestStaleTempsRemoved checks that a temporary file left beside a
// records file by a killed writer is removed once stale, and that one
// being written is kept.
func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.records")
	old, fresh := path+".tmp111", path+".tmp222"
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * staleTemp)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	removeStaleTemps(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("stale temporary file kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("temporary file being written removed: %v", err)
	}
}

// BenchmarkRecordsRestore reads a records file of 20,000 generated
// datasets into a fresh read model (the records part of a start from
// it), beside decoding the same records alone on one core, with the
// records file's decoder and with the driver's bson.Unmarshal, in the same
// run.
//
//	go test -run '^$' -bench RecordsRestore -benchtime 5x ./catalog/
func BenchmarkRecordsRestore(b *testing.B) {
	const n = 20000
	rm := genModel(b, n)
	path := filepath.Join(b.TempDir(), "catalog.records")
	rf, err := rm.startRecords(path, "bench")
	if err != nil {
		b.Fatal(err)
	}
	rf.close(rm)
	raws := make([][]byte, 0, n)
	for _, d := range rm.datasets {
		raw, err := bson.Marshal(d)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	b.Run("restore", func(b *testing.B) {
		for b.Loop() {
			fresh := newReadModel()
			fresh.deferIndex = true
			if _, err := fresh.restoreRecords(path, "bench", runtime.GOMAXPROCS(0)); err != nil || len(fresh.datasets) != n {
				b.Fatal(err, len(fresh.datasets))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/dataset")
	})
	b.Run("decode-one-core", func(b *testing.B) {
		for b.Loop() {
			for _, raw := range raws {
				if _, err := decodeDataset(raw); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/dataset")
	})
	b.Run("bson-decode-one-core", func(b *testing.B) {
		for b.Loop() {
			for _, raw := range raws {
				var d Dataset
				if err := bson.Unmarshal(raw, &d); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/dataset")
	})
}
