package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"toxgate/gateway/harness"
)

// versionRows is datastore_search's records as of version ("" now) as
// [id tox] pairs, by id.
func versionRows(t *testing.T, g *harness.Gateway, token, resID, version string) string {
	t.Helper()
	data := map[string]any{"resource_id": resID, "sort": "id"}
	if version != "" {
		data["version"] = version
	}
	code, out := ckan(t, g, "datastore_search", token, data)
	if code != 200 {
		t.Fatalf("datastore_search as of %q: %d %v", version, code, out)
	}
	s := ""
	for _, r := range out["result"].(map[string]any)["records"].([]any) {
		m := r.(map[string]any)
		s += fmt.Sprintf("[%v %v]", m["id"], m["tox"])
	}
	return s
}

// A version made through the gateway keeps its metadata, file and rows
// through a re-upload, upserts, deletes and a restart: the download with
// ?version= serves the old bytes, the searches the old rows, and the diff
// names the inserted, updated and deleted rows.
func TestDatasetVersionsThroughGateway(t *testing.T) {
	f := newFileFixture(t)
	g := f.g
	old := []byte("id,tox\n1,0.1\n2,0.2\n3,0.3\n")
	code, out := uploadAction(t, g, f.editor, "resource_create", map[string]string{"package_id": f.public, "format": "TXT"}, "hits.txt", old)
	if code != 200 {
		t.Fatalf("upload: %d %v", code, out)
	}
	rid := out["result"].(map[string]any)["id"].(string)
	if code, out := ckan(t, g, "datastore_create", f.editor, map[string]any{"resource_id": rid, "primary_key": "id",
		"fields":  []any{map[string]any{"id": "id", "type": "int"}, map[string]any{"id": "tox", "type": "float8"}},
		"records": []any{map[string]any{"id": 1, "tox": 0.1}, map[string]any{"id": 2, "tox": 0.2}, map[string]any{"id": 3, "tox": 0.3}}}); code != 200 {
		t.Fatalf("datastore_create: %d %v", code, out)
	}
	if code, _ := ckan(t, g, "dataset_version_create", f.member, map[string]any{"dataset": f.publicName, "name": "v1"}); code != 403 {
		t.Fatalf("a member made a version: %d", code)
	}
	code, out = ckan(t, g, "dataset_version_create", f.editor, map[string]any{"dataset": f.publicName, "name": "v1", "description": "as screened"})
	if code != 200 {
		t.Fatalf("dataset_version_create: %d %v", code, out)
	}
	v1 := out["result"].(map[string]any)["id"].(string)

	next := []byte("id,tox\n1,0.9\n")
	if code, out := uploadAction(t, g, f.editor, "resource_patch", map[string]string{"id": rid}, "hits.txt", next); code != 200 {
		t.Fatalf("re-upload: %d %v", code, out)
	}
	for _, call := range []struct {
		action string
		data   map[string]any
	}{
		{"datastore_upsert", map[string]any{"resource_id": rid, "records": []any{map[string]any{"id": 1, "tox": 0.15}, map[string]any{"id": 4, "tox": 0.4}}}},
		{"datastore_records_delete", map[string]any{"resource_id": rid, "filters": map[string]any{"id": 2}}},
		{"package_patch", map[string]any{"id": f.publicName, "notes": "rescreened"}},
	} {
		if code, out := ckan(t, g, call.action, f.editor, call.data); code != 200 {
			t.Fatalf("%s: %d %v", call.action, code, out)
		}
	}
	g.Restart()

	download := func(query string) []byte {
		t.Helper()
		resp, body := fetch(t, g, http.MethodGet, g.URL+"/dataset/"+f.publicName+"/resource/"+rid+"/download/hits.txt"+query, http.Header{"Authorization": {f.member}})
		if resp.StatusCode != 200 {
			t.Fatalf("download%s: %d %s", query, resp.StatusCode, body)
		}
		return body
	}
	if got := download("?version=v1"); !bytes.Equal(got, old) {
		t.Fatalf("download as of v1: %q", got)
	}
	if got := download("?version=" + v1); !bytes.Equal(got, old) {
		t.Fatalf("download as of v1 by id: %q", got)
	}
	if got := download(""); !bytes.Equal(got, next) {
		t.Fatalf("download now: %q", got)
	}
	if resp, _ := fetch(t, g, http.MethodGet, g.URL+"/dataset/"+f.publicName+"/resource/"+rid+"/download?version=v1", http.Header{"Authorization": {f.outsider}}); resp.StatusCode != 200 {
		t.Fatalf("a public dataset's version refused to a reader: %d", resp.StatusCode)
	}
	if got := versionRows(t, g, f.member, rid, "v1"); got != "[1 0.1][2 0.2][3 0.3]" {
		t.Fatalf("rows as of v1: %s", got)
	}
	if got := versionRows(t, g, f.member, rid, ""); got != "[1 0.15][3 0.3][4 0.4]" {
		t.Fatalf("rows now: %s", got)
	}
	code, out = ckan(t, g, "datastore_search_sql", f.member, map[string]any{"sql": `SELECT COUNT(*) AS n FROM "` + rid + `"`, "version": v1})
	if code != 200 || out["result"].(map[string]any)["records"].([]any)[0].(map[string]any)["n"] != float64(3) {
		t.Fatalf("datastore_search_sql as of v1: %d %v", code, out)
	}
	code, out = ckan(t, g, "package_show", f.member, map[string]any{"id": f.publicName, "version": "v1"})
	if code != 200 || out["result"].(map[string]any)["notes"] == "rescreened" {
		t.Fatalf("package_show as of v1: %d %v", code, out)
	}
	code, out = ckan(t, g, "dataset_version_diff", f.member, map[string]any{"dataset": f.publicName, "from": "v1"})
	if code != 200 {
		t.Fatalf("dataset_version_diff: %d %v", code, out)
	}
	rows := out["result"].(map[string]any)["tables"].(map[string]any)[rid].(map[string]any)["rows"].(map[string]any)
	for kind, want := range map[string]float64{"added": 1, "removed": 1, "changed": 1} {
		if got := rows[kind].(map[string]any)["count"]; got != want {
			t.Fatalf("diff: %s %v, want %v (%v)", kind, got, want, rows)
		}
	}
	// the dataset page lists the version and links its diff
	resp, body := fetch(t, g, http.MethodGet, g.URL+"/dataset/"+f.publicName, http.Header{"Authorization": {f.member}})
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("v1")) || !bytes.Contains(body, []byte("/dataset/"+f.publicName+"/versions/diff?from=")) {
		t.Fatalf("dataset page without its versions: %d", resp.StatusCode)
	}
	resp, body = fetch(t, g, http.MethodGet, g.URL+"/dataset/"+f.publicName+"/versions/diff?from="+v1, http.Header{"Authorization": {f.member}})
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("rescreened")) {
		t.Fatalf("diff page: %d %s", resp.StatusCode, body)
	}
}

// pendingVersions counts the version records not yet complete.
func pendingVersions(t *testing.T, g *harness.Gateway) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(g.StoreURI()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	n, err := c.Database("toxgate").Collection("dataset_versions").CountDocuments(ctx, bson.M{"state": "pending"})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// kill -9 of the catalog plugin while a version of a large table is made
// leaves no half version: afterwards the version is either absent or
// whole, and the sweep removes what the cut left.
func TestDatasetVersionSurvivesPluginKill(t *testing.T) {
	f := newFileFixture(t, harness.WithEnv("TOXGATE_CATALOG_UPLOAD_GRACE=2s", "TOXGATE_CATALOG_SWEEP_INTERVAL=250ms"))
	g := f.g
	code, out := ckan(t, g, "resource_create", f.editor, map[string]any{"package_id": f.public, "url": "http://example.org/big.bin", "format": "BIN"})
	if code != 200 {
		t.Fatalf("resource_create: %d %v", code, out)
	}
	rid := out["result"].(map[string]any)["id"].(string)
	const batches, per = 4, 50000
	for b := 0; b < batches; b++ {
		recs := make([]any, per)
		for i := range recs {
			recs[i] = map[string]any{"id": b*per + i, "tox": float64(i) / 7}
		}
		data := map[string]any{"resource_id": rid, "records": recs}
		if b == 0 {
			data["primary_key"] = "id"
			data["fields"] = []any{map[string]any{"id": "id", "type": "int"}, map[string]any{"id": "tox", "type": "float8"}}
		}
		action := "datastore_create"
		if b > 0 {
			action, data["method"] = "datastore_upsert", "insert"
		}
		if code, out := ckan(t, g, action, f.editor, data); code != 200 {
			t.Fatalf("%s: %d %v", action, code, out)
		}
	}
	pid, ok := pluginPID(t, g, f.admin)
	if !ok {
		t.Fatal("no plugin pid")
	}
	done := make(chan int, 1)
	go func() {
		_, _, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/dataset_version_create",
			http.Header{"Authorization": {f.editor}, "Content-Type": {"application/json"}}, []byte(`{"dataset": "`+f.public+`", "name": "big"}`))
		if err != nil {
			done <- 0
			return
		}
		done <- 1
	}()
	killed, didKill := false, false
	for !killed {
		select {
		case <-done:
			t.Log("the version was made before the plugin could be killed mid-way")
			killed = true
			continue
		default:
		}
		if pendingVersions(t, g) > 0 {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed, didKill = true, true
			<-done
		}
	}
	waitFor(t, 60*time.Second, "the plugin to be back", func() bool {
		p, ok := pluginPID(t, g, f.admin)
		return ok && (p != pid || !didKill)
	})
	waitFor(t, 60*time.Second, "the sweep to remove the pending version", func() bool { return pendingVersions(t, g) == 0 })
	code, out = ckan(t, g, "dataset_version_list", f.member, map[string]any{"dataset": f.public})
	if code != 200 {
		t.Fatalf("dataset_version_list: %d %v", code, out)
	}
	list := out["result"].([]any)
	switch len(list) {
	case 0:
		t.Log("no version after the kill")
	case 1:
		code, out := ckan(t, g, "datastore_search", f.member, map[string]any{"resource_id": rid, "version": "big", "limit": 1})
		if code != 200 || out["result"].(map[string]any)["total"] != float64(batches*per) {
			t.Fatalf("the version after the kill is not whole: %d %v", code, out)
		}
	default:
		t.Fatalf("versions after the kill: %v", list)
	}
	// a version made now is whole
	code, made := ckan(t, g, "dataset_version_create", f.editor, map[string]any{"dataset": f.public, "name": "after"})
	if code != 200 {
		t.Fatalf("dataset_version_create after the kill: %d %v", code, made)
	}
	code, out = ckan(t, g, "datastore_search", f.member, map[string]any{"resource_id": rid, "version": "after", "limit": 1})
	if code != 200 || out["result"].(map[string]any)["total"] != float64(batches*per) {
		_, pkg := ckan(t, g, "package_show", f.member, map[string]any{"id": f.public})
		t.Fatalf("version after: %d %v\nthe version made: %v\nthe dataset now: %v\ncatalog log:\n%s", code, out, made, pkg, catalogLog(g))
	}
}

// A scoring job records the dataset version of its input (made when the
// file changed since the last version) in its status and its result's
// provenance; POST /jobs/{id}/rerun scores that version again, even after
// the file was replaced, and answers the row-by-row differences.
func TestScoringJobVersionAndRerun(t *testing.T) {
	f := newJobFixture(t, []string{"herg"})
	g := f.g
	rid := f.upload(t, "library.csv", library(t, 40))
	first := waitJob(t, g, f.editor, f.submit(t, g, rid), 3*time.Minute, "succeeded", state("succeeded"))
	ver, _ := first["input_version"].(string)
	if ver == "" || first["input_version_name"] == "" {
		t.Fatalf("the job recorded no input version: %v", first)
	}
	res, _ := f.resultTable(t, first)
	if res["input_version"] != ver {
		t.Fatalf("the result's provenance does not name the version: %v", res)
	}
	// the same file again: the same version
	again := waitJob(t, g, f.editor, f.submit(t, g, rid), 3*time.Minute, "succeeded", state("succeeded"))
	if again["input_version"] != ver {
		t.Fatalf("an unchanged input got a new version: %v vs %v", again["input_version"], ver)
	}
	// a changed file: a new version for the next job
	if code, out := uploadAction(t, g, f.editor, "resource_patch", map[string]string{"id": rid}, "library.csv", library(t, 10)); code != 200 {
		t.Fatalf("re-upload: %d %v", code, out)
	}
	changed := waitJob(t, g, f.editor, f.submit(t, g, rid), 3*time.Minute, "succeeded", state("succeeded"))
	if changed["input_version"] == ver || changed["total"] != float64(10) {
		t.Fatalf("a changed input kept its version: %v", changed)
	}
	// the rerun scores the first version (40 rows), not today's file
	code, out := jobCall(t, g, http.MethodPost, "/jobs/"+first["id"].(string)+"/rerun", f.editor, nil)
	if code != http.StatusAccepted || out["rerun_of"] != first["id"] || out["input_version"] != ver {
		t.Fatalf("rerun: %d %v", code, out)
	}
	rerun := waitJob(t, g, f.editor, out["id"].(string), 3*time.Minute, "succeeded with differences", func(m map[string]any) bool {
		return m["state"] == "succeeded" && m["differences"] != nil
	})
	d := rerun["differences"].(map[string]any)
	if rerun["total"] != float64(40) || d["rows_compared"] != float64(40) || d["rows_changed"] != float64(0) || d["against"] != first["id"] {
		t.Fatalf("rerun differences: %v", rerun)
	}
	if code, out := jobCall(t, g, http.MethodPost, "/jobs/"+first["id"].(string)+"/rerun", f.outsider, nil); code != http.StatusNotFound {
		t.Fatalf("another user's rerun: %d %v", code, out)
	}
}

// catalogLog is the catalog's lines of the gateway's log.
func catalogLog(g *harness.Gateway) string {
	var b strings.Builder
	for _, l := range strings.Split(g.Logs(), "\n") {
		if strings.Contains(l, "catalog") && !strings.Contains(l, "access") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
