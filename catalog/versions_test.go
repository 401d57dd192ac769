package catalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
)

// newVersionFixture is a fixture whose catalog has a DataStore (embedded
// SQLite in a temporary directory).
func newVersionFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ds, err := datastore.Open(context.Background(), datastore.Config{Dir: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	f.withOptions(Options{DataStore: ds})
	return f
}

// upload stores b in the catalog's file store and runs action (a
// resource_create or resource_patch) with it, as the gateway does.
func (f *fixture) upload(user, action string, data map[string]any, name string, b []byte) map[string]any {
	f.t.Helper()
	ctx := context.Background()
	w, err := f.svc.Files().Create(ctx, name, 1<<20)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		f.t.Fatal(err)
	}
	info, err := w.Commit()
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := f.svc.Do(ctx, Request{Action: action, Caller: f.users[user], Data: data, SiteURL: site,
		Upload: &FileRef{FileID: info.ID, Filename: name, Mimetype: "text/csv", SHA256: info.SHA256, Size: info.Size}})
	if err != nil {
		f.t.Fatalf("%s: %v", action, err)
	}
	raw, _ := ckan.Marshal(res)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// fileBytes reads the file resource_file names for a resource (as of a
// version when version is not "").
func (f *fixture) fileBytes(user, resID, version string) []byte {
	f.t.Helper()
	data := map[string]any{"id": resID}
	if version != "" {
		data["version"] = version
	}
	ref := f.ok(user, "resource_file", data)
	ctx := context.Background()
	info, err := f.svc.Files().Stat(ctx, ref["file_id"].(string))
	if err != nil {
		f.t.Fatalf("file of %s as of %q: %v", resID, version, err)
	}
	r, err := f.svc.Files().Open(ctx, info, 0, -1)
	if err != nil {
		f.t.Fatal(err)
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return b
}

// rowsOf is datastore_search's records (as of version) as "id=value" text,
// by the primary key order.
func (f *fixture) rowsOf(user, resID, version string) string {
	f.t.Helper()
	data := map[string]any{"resource_id": resID, "sort": "id"}
	if version != "" {
		data["version"] = version
	}
	out := f.ok(user, "datastore_search", data)
	var parts []string
	for _, r := range out["records"].([]any) {
		m := r.(map[string]any)
		b, _ := json.Marshal([]any{m["id"], m["tox"]})
		parts = append(parts, string(b))
	}
	return strings.Join(parts, " ")
}

// A version keeps the dataset's metadata, the file and the table rows it
// had when it was made, through later edits, a re-upload, upserts,
// deletes, the resource's deletion, a sweep and a reopened catalog; the
// diff names what changed.
func TestVersionsSurviveLaterWrites(t *testing.T) {
	f := newVersionFixture(t)
	f.ok("editor", "package_create", map[string]any{"name": "screen", "owner_org": "tox-lab", "notes": "first screen"})
	old := []byte("id,tox\n1,0.1\n2,0.2\n")
	res := f.upload("editor", "resource_create", map[string]any{"package_id": "screen", "name": "hits"}, "hits.csv", old)
	resID := res["id"].(string)
	f.ok("editor", "datastore_create", map[string]any{"resource_id": resID, "primary_key": "id",
		"fields":  []any{map[string]any{"id": "id", "type": "int"}, map[string]any{"id": "tox", "type": "float8"}},
		"records": []any{map[string]any{"id": 1, "tox": 0.1}, map[string]any{"id": 2, "tox": 0.2}, map[string]any{"id": 3, "tox": 0.3}}})

	f.fail("member", "dataset_version_create", map[string]any{"dataset": "screen", "name": "v1"}, 403)
	v1 := f.ok("editor", "dataset_version_create", map[string]any{"dataset": "screen", "name": "v1", "description": "as screened"})
	v1ID := v1["id"].(string)
	if v1["package_id"] == nil || v1["creator_user_id"] != f.users["editor"].UserID || v1["created"] == "" {
		t.Fatalf("version dict: %v", v1)
	}
	f.fail("editor", "dataset_version_create", map[string]any{"dataset": "screen", "name": "v1"}, 409)
	rowsV1 := f.rowsOf("member", resID, "v1")

	// later writes of every kind
	f.ok("editor", "package_patch", map[string]any{"id": "screen", "notes": "second screen"})
	next := []byte("id,tox\n1,0.9\n")
	f.upload("editor", "resource_patch", map[string]any{"id": resID}, "hits.csv", next)
	f.ok("editor", "datastore_upsert", map[string]any{"resource_id": resID, "method": "upsert",
		"records": []any{map[string]any{"id": 1, "tox": 0.15}, map[string]any{"id": 4, "tox": 0.4}}})
	f.ok("editor", "datastore_records_delete", map[string]any{"resource_id": resID, "filters": map[string]any{"id": 2}})
	if _, err := f.svc.SweepFiles(context.Background(), 0); err != nil {
		t.Fatal(err)
	}

	check := func(who string) {
		t.Helper()
		if got := f.ok(who, "package_show", map[string]any{"id": "screen", "version": "v1"})["notes"]; got != "first screen" {
			t.Fatalf("package_show as of v1: notes %v", got)
		}
		if got := f.ok(who, "package_show", map[string]any{"id": "screen", "version": v1ID})["notes"]; got != "first screen" {
			t.Fatalf("package_show as of v1 by id: notes %v", got)
		}
		if got := f.ok(who, "package_show", map[string]any{"id": "screen"})["notes"]; got != "second screen" {
			t.Fatalf("package_show now: notes %v", got)
		}
		if got := f.fileBytes(who, resID, "v1"); !bytes.Equal(got, old) {
			t.Fatalf("file as of v1: %q", got)
		}
		if got := f.rowsOf(who, resID, "v1"); got != rowsV1 || got != `[1,0.1] [2,0.2] [3,0.3]` {
			t.Fatalf("rows as of v1: %s (made: %s)", got, rowsV1)
		}
		sql := f.ok(who, "datastore_search_sql", map[string]any{"sql": `SELECT tox FROM "` + resID + `" WHERE id = 2`, "version": v1ID})
		if recs := sql["records"].([]any); len(recs) != 1 || recs[0].(map[string]any)["tox"] != 0.2 {
			t.Fatalf("datastore_search_sql as of v1: %v", sql)
		}
		rs := f.ok(who, "resource_show", map[string]any{"id": resID, "version": "v1"})
		if rs["hash"] != "sha256:"+sha256Hex(old) {
			t.Fatalf("resource_show as of v1: %v", rs)
		}
	}
	check("member")
	if got := f.fileBytes("member", resID, ""); !bytes.Equal(got, next) {
		t.Fatalf("file now: %q", got)
	}

	// the diff from v1 to now
	d := f.ok("member", "dataset_version_diff", map[string]any{"dataset": "screen", "from": "v1"})
	if !strings.Contains(d["metadata"].(string), `-  "notes": "first screen"`) || !strings.Contains(d["metadata"].(string), `+  "notes": "second screen"`) {
		t.Fatalf("metadata diff:\n%s", d["metadata"])
	}
	files := d["files"].(map[string]any)
	if ch := files["changed"].([]any); len(ch) != 1 || ch[0].(map[string]any)["from"] != sha256Hex(old) || ch[0].(map[string]any)["to"] != sha256Hex(next) {
		t.Fatalf("file diff: %v", files)
	}
	tbl := d["tables"].(map[string]any)[resID].(map[string]any)
	rows := tbl["rows"].(map[string]any)
	count := func(kind string) float64 { return rows[kind].(map[string]any)["count"].(float64) }
	if tbl["by"] != "primary_key" || count("added") != 1 || count("removed") != 1 || count("changed") != 1 {
		t.Fatalf("table diff: %v", tbl)
	}
	ch := rows["changed"].(map[string]any)["records"].([]any)[0].(map[string]any)
	if ch["from"].(map[string]any)["tox"] != 0.1 || ch["to"].(map[string]any)["tox"] != 0.15 {
		t.Fatalf("changed row: %v", ch)
	}
	// bounded: limit 0 lists no rows and keeps the counts
	d0 := f.ok("member", "dataset_version_diff", map[string]any{"dataset": "screen", "from": "v1", "limit": 0})
	r0 := d0["tables"].(map[string]any)[resID].(map[string]any)["rows"].(map[string]any)["added"].(map[string]any)
	if r0["count"].(float64) != 1 || len(r0["records"].([]any)) != 0 {
		t.Fatalf("diff with limit 0: %v", r0)
	}

	// a second version, and the diff between the two
	f.ok("editor", "dataset_version_create", map[string]any{"dataset": "screen", "name": "v2"})
	d12 := f.ok("member", "dataset_version_diff", map[string]any{"dataset": "screen", "from": "v1", "to": "v2"})
	if d12["to"].(map[string]any)["name"] != "v2" {
		t.Fatalf("diff v1..v2: %v", d12["to"])
	}
	// the resource deleted, the catalog reopened: v1 still answers
	f.ok("editor", "resource_delete", map[string]any{"id": resID})
	if _, err := f.svc.SweepFiles(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	f.withOptions(Options{DataStore: f.svc.ds})
	check("member")
	f.fail("outsider", "dataset_version_list", map[string]any{"dataset": "nope"}, 404)

	// list, rename, delete
	list := f.list("", "dataset_version_list", map[string]any{"dataset": "screen"})
	if len(list) != 2 || list[0].(map[string]any)["name"] != "v2" {
		t.Fatalf("list: %v", list)
	}
	f.fail("member", "dataset_version_update", map[string]any{"id": v1ID, "name": "v1.0"}, 403)
	f.fail("editor", "dataset_version_update", map[string]any{"id": v1ID, "name": "v2"}, 409)
	if got := f.ok("editor", "dataset_version_update", map[string]any{"id": v1ID, "name": "v1.0"}); got["name"] != "v1.0" {
		t.Fatalf("update: %v", got)
	}
	f.fail("editor", "dataset_version_delete", map[string]any{"id": v1ID}, 403)
	f.ok("sysadmin", "dataset_version_delete", map[string]any{"id": v1ID})
	f.fail("member", "dataset_version_show", map[string]any{"id": v1ID}, 404)
	// deleted, not purged: its file stays
	if _, err := f.svc.SweepFiles(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Files().Stat(context.Background(), f.versionFile(v1ID)); err != nil {
		t.Fatalf("a deleted version's file was freed: %v", err)
	}
	f.ok("sysadmin", "dataset_version_delete", map[string]any{"id": v1ID, "purge": true})
}

// versionFile is the first file a version holds.
func (f *fixture) versionFile(id string) string {
	v, err := f.svc.vs.get(context.Background(), id)
	if err != nil || v == nil || len(v.Files) == 0 {
		f.t.Fatalf("version %s: %v %v", id, v, err)
	}
	return v.Files[0]
}

// A table without a primary key is compared by content; added and
// removed columns are reported.
func TestVersionDiffByContentAndColumns(t *testing.T) {
	f := newVersionFixture(t)
	f.ok("editor", "package_create", map[string]any{"name": "plain", "owner_org": "tox-lab",
		"resources": []any{map[string]any{"url": "http://example.org/a.csv"}}})
	resID := f.ok("member", "package_show", map[string]any{"id": "plain"})["resources"].([]any)[0].(map[string]any)["id"].(string)
	f.ok("editor", "datastore_create", map[string]any{"resource_id": resID,
		"fields":  []any{map[string]any{"id": "smiles", "type": "text"}},
		"records": []any{map[string]any{"smiles": "CCO"}, map[string]any{"smiles": "CCN"}}})
	f.ok("editor", "dataset_version_create", map[string]any{"dataset": "plain", "name": "base"})
	f.ok("editor", "datastore_create", map[string]any{"resource_id": resID,
		"fields": []any{map[string]any{"id": "smiles", "type": "text"}, map[string]any{"id": "mw", "type": "float8"}}})
	f.ok("editor", "datastore_upsert", map[string]any{"resource_id": resID, "method": "insert",
		"records": []any{map[string]any{"smiles": "c1ccccc1", "mw": 78.1}}})
	f.ok("editor", "datastore_records_delete", map[string]any{"resource_id": resID, "filters": map[string]any{"smiles": "CCN"}})
	d := f.ok("member", "dataset_version_diff", map[string]any{"dataset": "plain", "from": "base"})
	tbl := d["tables"].(map[string]any)[resID].(map[string]any)
	rows := tbl["rows"].(map[string]any)
	if tbl["by"] != "content" || rows["added"].(map[string]any)["count"].(float64) != 1 || rows["removed"].(map[string]any)["count"].(float64) != 1 {
		t.Fatalf("diff by content: %v", tbl)
	}
	if added := tbl["fields"].(map[string]any)["added"].([]any); len(added) != 1 || added[0].(map[string]any)["id"] != "mw" {
		t.Fatalf("added columns: %v", tbl["fields"])
	}
}

// A version whose making was cut short (a pending record, a snapshot
// table copied) is never shown, and the sweep removes what it left.
func TestPendingVersionSwept(t *testing.T) {
	f := newVersionFixture(t)
	f.ok("editor", "package_create", map[string]any{"name": "cut", "owner_org": "tox-lab",
		"resources": []any{map[string]any{"url": "http://example.org/a.csv"}}})
	resID := f.ok("member", "package_show", map[string]any{"id": "cut"})["resources"].([]any)[0].(map[string]any)["id"].(string)
	f.ok("editor", "datastore_create", map[string]any{"resource_id": resID, "records": []any{map[string]any{"a": 1}}})
	ctx := context.Background()
	at := now().Add(-time.Hour)
	v := &Version{ID: newID(), DatasetID: f.ok("member", "package_show", map[string]any{"id": "cut"})["id"].(string), Name: "half",
		Created: at, Touched: at, State: VersionPending, Resources: []VersionResource{{ID: resID, Table: datastore.SnapshotName("x", resID)}}}
	v.Resources[0].Table = datastore.SnapshotName(v.ID, resID)
	if err := f.svc.vs.insert(ctx, v); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.ds.Snapshot(ctx, resID, v.Resources[0].Table); err != nil {
		t.Fatal(err)
	}
	orphan := datastore.SnapshotName(newID(), resID)
	if _, err := f.svc.ds.Snapshot(ctx, resID, orphan); err != nil {
		t.Fatal(err)
	}
	f.fail("member", "dataset_version_show", map[string]any{"id": v.ID}, 404)
	f.fail("member", "package_show", map[string]any{"id": "cut", "version": "half"}, 404)
	if l := f.list("member", "dataset_version_list", map[string]any{"dataset": "cut"}); len(l) != 0 {
		t.Fatalf("a pending version is listed: %v", l)
	}
	if _, err := f.svc.SweepFiles(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	snaps, err := f.svc.ds.Snapshots(ctx)
	if err != nil || len(snaps) != 0 {
		t.Fatalf("snapshots left: %v %v", snaps, err)
	}
	if got, _ := f.svc.vs.get(ctx, v.ID); got != nil {
		t.Fatal("the pending record is left")
	}
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// A version's DOI (recorded by the gateway after DataCite registered it)
// is shown with the version, stays once recorded and is refused when
// malformed.
func TestVersionDOISet(t *testing.T) {
	f := newVersionFixture(t)
	f.ok("editor", "package_create", map[string]any{"name": "doi-ds", "owner_org": "tox-lab"})
	v := f.ok("editor", "dataset_version_create", map[string]any{"dataset": "doi-ds", "name": "v1"})
	id := v["id"].(string)
	f.fail("editor", "dataset_version_doi_set", map[string]any{"id": id, "doi": "not a doi"}, 409)
	got := f.ok("editor", "dataset_version_doi_set", map[string]any{"id": id, "doi": "10.5072/toxgate-a"})
	if got["doi"] != "10.5072/toxgate-a" {
		t.Fatalf("doi_set: %v", got)
	}
	f.ok("editor", "dataset_version_doi_set", map[string]any{"id": id, "doi": "10.5072/toxgate-a"})
	f.fail("editor", "dataset_version_doi_set", map[string]any{"id": id, "doi": "10.5072/other"}, 409)
	if shown := f.ok("member", "dataset_version_show", map[string]any{"dataset": "doi-ds", "version": "v1"}); shown["doi"] != "10.5072/toxgate-a" {
		t.Fatalf("version_show: %v", shown)
	}
}

// A version made while the sweep runs often, with a grace short enough
// that the heartbeat ticks during the table copy, is either refused (the
// sweep took it) or active and found: never acknowledged and then lost.
// The store applies an update as a read and a write of the whole record,
// so a heartbeat running beside the activation wrote "pending" back, and
// the sweep then removed an acknowledged version.
func TestVersionMadeWhileTheSweepRuns(t *testing.T) {
	f := newVersionFixture(t)
	f.ok("editor", "package_create", map[string]any{"name": "busy", "owner_org": "tox-lab",
		"resources": []any{map[string]any{"url": "http://example.org/a.csv"}}})
	resID := f.ok("member", "package_show", map[string]any{"id": "busy"})["resources"].([]any)[0].(map[string]any)["id"].(string)
	recs := make([]any, 20000)
	for i := range recs {
		recs[i] = map[string]any{"id": i, "tox": float64(i) / 7}
	}
	f.ok("editor", "datastore_create", map[string]any{"resource_id": resID, "records": recs})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const grace = 150 * time.Millisecond // the heartbeat ticks every 37.5 ms
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		for ctx.Err() == nil {
			if _, err := f.svc.SweepFiles(ctx, grace); err != nil && ctx.Err() == nil {
				t.Errorf("sweep: %v", err)
				return
			}
		}
	}()
	made := 0
	for i := 0; i < 12; i++ {
		name := "v" + strings.Repeat("i", i+1)
		got, cerr := f.call("editor", "dataset_version_create", map[string]any{"dataset": "busy", "name": name})
		if cerr != nil {
			if !strings.Contains(cerr.Message, "longer than the sweep allows") {
				t.Fatalf("dataset_version_create: %v", cerr)
			}
			continue
		}
		made++
		id := got.(map[string]any)["id"].(string)
		v, err := f.svc.vs.get(ctx, id)
		if err != nil || v == nil || v.State != VersionActive {
			t.Fatalf("version %s acknowledged, then: %+v %v", name, v, err)
		}
		if shown := f.ok("member", "dataset_version_show", map[string]any{"dataset": "busy", "version": name}); shown["id"] != id {
			t.Fatalf("dataset_version_show %s: %v", name, shown)
		}
	}
	cancel()
	<-swept
	// a few sweeps more find every acknowledged version still there
	for i := 0; i < 3; i++ {
		if _, err := f.svc.SweepFiles(context.Background(), grace); err != nil {
			t.Fatal(err)
		}
	}
	if l := f.list("member", "dataset_version_list", map[string]any{"dataset": "busy"}); len(l) != made {
		t.Fatalf("%d versions acknowledged, %d listed", made, len(l))
	}
	t.Logf("%d of 12 versions made, the others refused as taken by the sweep", made)
}
