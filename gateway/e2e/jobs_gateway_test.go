package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"toxgate/gateway/harness"
)

// jobFixture is a gateway serving the named modules, an org with an editor
// (models role) and a public dataset, and an outsider with the models role.
type jobFixture struct {
	g                       *harness.Gateway
	admin, editor, outsider string
	pkg                     string
	modulesDir              string
}

func newJobFixture(t testing.TB, modules []string, opts ...harness.Option) *jobFixture {
	t.Helper()
	dir := t.TempDir()
	mdir := filepath.Join(dir, "modules")
	copyModules(t, mdir, modules...)
	g := harness.Start(t, append([]harness.Option{harness.WithDataDir(dir)}, opts...)...)
	f := &jobFixture{g: g, admin: adminToken(t, g), modulesDir: mdir}
	provision(t, g, f.admin, "editor", "password-editor-1", true, "models")
	provision(t, g, f.admin, "outsider", "password-outsider-1", true, "models")
	f.editor = tokenFor(t, g, f.admin, "editor", nil)
	f.outsider = tokenFor(t, g, f.admin, "outsider", nil)
	if code, out := ckan(t, g, "organization_create", f.admin, map[string]any{"name": "screening-lab", "users": []any{
		map[string]any{"name": "editor", "capacity": "editor"}}}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	code, out := ckan(t, g, "package_create", f.editor, map[string]any{"name": "library-2026", "owner_org": "screening-lab"})
	if code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}
	f.pkg = out["result"].(map[string]any)["id"].(string)
	return f
}

// library is a CSV of n rows (id, smiles, y) from the hERG data, with the
// rows at bad replaced by an invalid SMILES.
func library(t testing.TB, n int, bad ...int) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "modules", "internal", "data", "herg_karim.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	recs = recs[1:]
	isBad := map[int]bool{}
	for _, b := range bad {
		isBad[b] = true
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"compound_id", "smiles", "measured"})
	for i := 0; i < n; i++ {
		r := recs[i%len(recs)]
		s := r[0]
		if isBad[i] {
			s = "C1CC(not-a-smiles"
		}
		w.Write([]string{fmt.Sprintf("CMP-%06d", i), s, r[1]})
	}
	w.Flush()
	return buf.Bytes()
}

func (f *jobFixture) upload(t testing.TB, name string, data []byte) string {
	t.Helper()
	code, out := uploadAction(t, f.g, f.editor, "resource_create", map[string]string{"package_id": f.pkg, "name": name}, name, data)
	if code != 200 {
		t.Fatalf("upload: %d %v", code, out)
	}
	return out["result"].(map[string]any)["id"].(string)
}

func jobCall(t testing.TB, g *harness.Gateway, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	resp, out, err := g.Do(context.Background(), method, path, http.Header{"Authorization": {token}, "Content-Type": {"application/json"}}, b)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s %s: %d, not JSON: %.300s", method, path, resp.StatusCode, out)
	}
	return resp.StatusCode, m
}

func (f *jobFixture) submit(t testing.TB, g *harness.Gateway, resID string) string {
	t.Helper()
	code, out := jobCall(t, g, http.MethodPost, "/jobs", f.editor, map[string]any{"model": "herg", "resource_id": resID, "smiles_column": "smiles", "package_id": f.pkg})
	if code != http.StatusAccepted || out["state"] != "queued" || out["status_url"] != "/jobs/"+out["id"].(string) {
		t.Fatalf("POST /jobs: %d %v", code, out)
	}
	return out["id"].(string)
}

// waitJob polls the job until cond holds (or the deadline passes).
func waitJob(t testing.TB, g *harness.Gateway, token, id string, timeout time.Duration, what string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last map[string]any
	for time.Now().Before(deadline) {
		code, out := jobCall(t, g, http.MethodGet, "/jobs/"+id, token, nil)
		if code == 200 {
			last = out
			if cond(out) {
				return out
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("job %s: not %s within %v; last status %v", id, what, timeout, last)
	return nil
}

func state(s string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["state"] == s }
}

func over(m map[string]any) bool {
	return m["state"] == "succeeded" || m["state"] == "failed" || m["state"] == "cancelled"
}

// resultTable checks the job's result resource and returns its rows.
func (f *jobFixture) resultTable(t testing.TB, st map[string]any) (map[string]any, [][]string) {
	t.Helper()
	rid, _ := st["result_resource_id"].(string)
	if st["state"] != "succeeded" || rid == "" {
		t.Fatalf("job did not succeed: %v", st)
	}
	_, out := ckan(t, f.g, "resource_show", f.editor, map[string]any{"id": rid})
	res := out["result"].(map[string]any)
	body := downloadIs(t, f.g, f.editor, rid)
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("result is not CSV: %v", err)
	}
	return res, rows
}

func sha256File(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha(b)
}

// A 5,000-row library is scored into a new CSV resource beside it: every
// input row in place with the model's columns, a bad SMILES with its error,
// and the resource records the exact module and input bytes it came from.
func TestScoringJobEndToEnd(t *testing.T) {
	f := newJobFixture(t, []string{"herg"})
	bad := []int{7, 4321}
	lib := library(t, 5000, bad...)
	resID := f.upload(t, "library.csv", lib)

	// No write permission on the dataset: refused before anything runs.
	code, out := jobCall(t, f.g, http.MethodPost, "/jobs", f.outsider, map[string]any{"model": "herg", "resource_id": resID, "package_id": f.pkg})
	if code != http.StatusForbidden || out["error"].(map[string]any)["field"] != "package_id" {
		t.Fatalf("outsider job: %d %v", code, out)
	}
	code, out = jobCall(t, f.g, http.MethodPost, "/jobs", f.editor, map[string]any{"model": "herg", "resource_id": resID, "smiles_column": "structure", "package_id": f.pkg})
	if code != http.StatusUnprocessableEntity || !strings.Contains(out["error"].(map[string]any)["message"].(string), "compound_id, smiles, measured") {
		t.Fatalf("unknown column: %d %v", code, out)
	}

	id := f.submit(t, f.g, resID)
	if code, _ := jobCall(t, f.g, http.MethodGet, "/jobs/"+id, f.outsider, nil); code != http.StatusNotFound {
		t.Errorf("another user's job: %d, want 404", code)
	}
	st := waitJob(t, f.g, f.editor, id, 10*time.Minute, "over", over)
	res, rows := f.resultTable(t, st)
	if st["done"] != 5000.0 || st["failed_rows"] != float64(len(bad)) || st["total"] != 5000.0 {
		t.Errorf("status: %v", st)
	}
	if len(rows) != 5001 {
		t.Fatalf("result has %d lines, want header + 5000", len(rows))
	}
	head := rows[0]
	if strings.Join(head[:3], ",") != "compound_id,smiles,measured" || head[len(head)-1] != "error" {
		t.Fatalf("header %v", head)
	}
	pred := -1
	for i, h := range head {
		if h == "prediction" {
			pred = i
		}
	}
	if pred < 0 {
		t.Fatalf("no prediction column in %v", head)
	}
	input, _ := csv.NewReader(bytes.NewReader(lib)).ReadAll()
	for i, r := range rows[1:] {
		if strings.Join(r[:3], ",") != strings.Join(input[i+1], ",") {
			t.Fatalf("row %d is %v, input %v", i, r[:3], input[i+1])
		}
		isBad := i == bad[0] || i == bad[1]
		if isBad != (r[len(r)-1] != "") || isBad != (r[pred] == "") {
			t.Fatalf("row %d (bad %v): prediction %q error %q", i, isBad, r[pred], r[len(r)-1])
		}
	}

	// Provenance: the module's bytes and the input's bytes.
	modSHA := sha256File(t, filepath.Join(f.modulesDir, "herg.wasm"))
	want := map[string]string{"model": "herg", "module_sha256": modSHA, "input_resource_id": resID, "input_sha256": sha(lib),
		"input_column": "smiles", "scored_by": "editor", "model_route": "/hERG/evaluate", "job_id": id}
	for k, v := range want {
		if res[k] != v {
			t.Errorf("result resource %s = %v, want %v", k, res[k], v)
		}
	}
	if res["model_version"] == "" || res["scored_at"] == nil || res["package_id"] != f.pkg || res["format"] != "CSV" {
		t.Errorf("result resource: %v", res)
	}
	if in := downloadIs(t, f.g, f.editor, resID); sha(in) != res["input_sha256"] {
		t.Errorf("the input resource's bytes hash to %s, the result names %v", sha(in), res["input_sha256"])
	}
	// Interactive answers carry the same provenance.
	resp, body, _ := f.g.Do(context.Background(), http.MethodPost, "/hERG/evaluate", http.Header{"Authorization": {f.editor}, "Content-Type": {"application/json"}}, []byte(`{"smiles":"CCO"}`))
	var ans struct {
		Provenance map[string]string `json:"provenance"`
	}
	json.Unmarshal(body, &ans)
	if resp.StatusCode != 200 || resp.Header.Get("X-Model-SHA256") != modSHA || ans.Provenance["module_sha256"] != modSHA || ans.Provenance["model"] != "herg" {
		t.Errorf("model answer provenance: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	code, out = jobCall(t, f.g, http.MethodGet, "/jobs", f.editor, nil)
	if list, _ := out["jobs"].([]any); code != 200 || len(list) != 1 {
		t.Errorf("GET /jobs: %d %v", code, out)
	}
	if code, _ := jobCall(t, f.g, http.MethodDelete, "/jobs/"+id, f.editor, nil); code != http.StatusConflict {
		t.Errorf("cancel a finished job: %d, want 409", code)
	}
}

// A cancelled job stops and writes no result.
func TestScoringJobCancel(t *testing.T) {
	f := newJobFixture(t, []string{"herg"}, harness.WithEnv("TOXGATE_JOBS_CHUNK_ROWS=100", "TOXGATE_JOBS_WORKERS=1"))
	resID := f.upload(t, "big.csv", library(t, 20000))
	id := f.submit(t, f.g, resID)
	waitJob(t, f.g, f.editor, id, 5*time.Minute, "started", func(m map[string]any) bool { return m["done"].(float64) > 0 })
	code, out := jobCall(t, f.g, http.MethodDelete, "/jobs/"+id, f.editor, nil)
	if code != 200 || out["state"] != "cancelled" {
		t.Fatalf("DELETE: %d %v", code, out)
	}
	st := waitJob(t, f.g, f.editor, id, time.Minute, "cancelled", state("cancelled"))
	if st["result_resource_id"] != nil || st["done"].(float64) >= 20000 {
		t.Errorf("cancelled job: %v", st)
	}
	_, pkg := ckan(t, f.g, "package_show", f.editor, map[string]any{"id": f.pkg})
	if n := len(pkg["result"].(map[string]any)["resources"].([]any)); n != 1 {
		t.Errorf("dataset has %d resources after the cancel, want the input only", n)
	}
}

// A gateway killed with -9 in the middle of a job: after the restart the
// job resumes and finishes with every row once.
func TestScoringJobSurvivesRestart(t *testing.T) {
	f := newJobFixture(t, []string{"herg"}, harness.WithEnv("TOXGATE_JOBS_CHUNK_ROWS=200", "TOXGATE_JOBS_LEASE=2s", "TOXGATE_JOBS_POLL_INTERVAL=200ms"))
	resID := f.upload(t, "lib.csv", library(t, 4000))
	id := f.submit(t, f.g, resID)
	waitJob(t, f.g, f.editor, id, 5*time.Minute, "started", func(m map[string]any) bool { return m["done"].(float64) > 0 })
	f.g.Kill9()
	f.g.Relaunch()
	st := waitJob(t, f.g, f.editor, id, 10*time.Minute, "over", over)
	_, rows := f.resultTable(t, st)
	if len(rows) != 4001 || st["done"] != 4000.0 {
		t.Fatalf("after restart: %d lines, status %v", len(rows), st)
	}
	for i, r := range rows[1:] {
		if r[0] != fmt.Sprintf("CMP-%06d", i) {
			t.Fatalf("row %d is %s", i, r[0])
		}
	}
}

// Two gateways on one store share a job's chunks; the second killed with
// -9 in the middle, the first finishes the job.
func TestScoringJobSharedByTwoGateways(t *testing.T) {
	env := harness.WithEnv("TOXGATE_JOBS_CHUNK_ROWS=100", "TOXGATE_JOBS_LEASE=2s", "TOXGATE_JOBS_POLL_INTERVAL=200ms", "TOXGATE_JOBS_WORKERS=1")
	f := newJobFixture(t, []string{"herg"}, env)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "modules"), 0o755)
	b, _ := os.ReadFile(filepath.Join(f.modulesDir, "herg.wasm"))
	os.WriteFile(filepath.Join(dir, "modules", "herg.wasm"), b, 0o644)
	other := harness.Start(t, harness.WithDataDir(dir), env, harness.WithEnv("TOXGATE_MONGODB_URI="+f.g.StoreURI(), "TOXGATE_FILES_DIR="+filepath.Join(f.g.DataDir, "files")))
	resID := f.upload(t, "lib.csv", library(t, 6000))
	id := f.submit(t, other, resID)

	owners := func() map[string]int {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := mongo.Connect(options.Client().ApplyURI(f.g.StoreURI()))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Disconnect(ctx)
		cur, err := c.Database("toxgate").Collection("jobs."+id+".leases").Find(ctx, bson.M{})
		if err != nil {
			t.Fatal(err)
		}
		var ls []struct {
			ID    string `bson:"_id"`
			Owner string `bson:"owner"`
			Done  bool   `bson:"done"`
		}
		cur.All(ctx, &ls)
		out := map[string]int{}
		for _, l := range ls {
			if strings.HasPrefix(l.ID, "c") && l.Done {
				out[l.Owner]++
			}
		}
		return out
	}
	deadline := time.Now().Add(5 * time.Minute)
	for len(owners()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the two gateways did not both score chunks: %v", owners())
		}
		time.Sleep(200 * time.Millisecond)
	}
	other.Kill9()
	st := waitJob(t, f.g, f.editor, id, 10*time.Minute, "over", over)
	_, rows := f.resultTable(t, st)
	if len(rows) != 6001 {
		t.Fatalf("%d lines, want 6001; status %v", len(rows), st)
	}
	for i, r := range rows[1:] {
		if r[0] != fmt.Sprintf("CMP-%06d", i) {
			t.Fatalf("row %d is %s", i, r[0])
		}
	}
	t.Logf("chunks done per gateway: %v", owners())
}

// With catalog.files_dir the job reads its input from, and writes its
// result into, the files directory the catalog uses.
func TestScoringJobWithFilesDir(t *testing.T) {
	f := newJobFixture(t, []string{"herg"}, harness.WithEnv("TOXGATE_FILES_DIR="+t.TempDir(), "TOXGATE_CATALOG_PUBLISH_MODELS=false"))
	lib := library(t, 30, 4)
	id := f.submit(t, f.g, f.upload(t, "small.csv", lib))
	st := waitJob(t, f.g, f.editor, id, 5*time.Minute, "over", over)
	if st["state"] != "succeeded" || st["failed_rows"] != 1.0 {
		t.Fatalf("job: %v", st)
	}
	if _, rows := f.resultTable(t, st); len(rows) != 31 || rows[5][len(rows[5])-1] == "" {
		t.Fatalf("result: %d lines, row 4 %v", len(rows), rows[5])
	}
}
