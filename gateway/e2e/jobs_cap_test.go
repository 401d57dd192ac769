package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// postJob submits a job and returns the status, Retry-After and answer.
func postJob(t *testing.T, g *harness.Gateway, token string, body map[string]any) (int, string, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, out, err := g.Do(context.Background(), http.MethodPost, "/jobs", http.Header{"Authorization": {token}, "Content-Type": {"application/json"}}, b)
	if err != nil {
		t.Fatalf("POST /jobs: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("POST /jobs: %d, not JSON: %.300s", resp.StatusCode, out)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), m
}

// A user may have jobs.max_per_user jobs queued or running at once, counted
// in the store across gateways: past it POST /jobs answers 429 with
// Retry-After on either gateway, while another user's job is accepted; a
// cancelled job frees its place.
func TestScoringJobsPerUserCap(t *testing.T) {
	// No workers: the jobs stay queued.
	env := harness.WithEnv("TOXGATE_JOBS_WORKERS=0", "TOXGATE_JOBS_MAX_PER_USER=2")
	f := newJobFixture(t, []string{"herg"}, env)
	resID := f.upload(t, "lib.csv", library(t, 50))
	req := map[string]any{"model": "herg", "resource_id": resID, "smiles_column": "smiles", "package_id": f.pkg}
	var ids []string
	for range 2 {
		code, _, out := postJob(t, f.g, f.editor, req)
		if code != http.StatusAccepted {
			t.Fatalf("job %d: %d %v", len(ids)+1, code, out)
		}
		ids = append(ids, out["id"].(string))
	}
	dir := t.TempDir()
	copyModules(t, filepath.Join(dir, "modules"), "herg")
	other := harness.Start(t, harness.WithDataDir(dir), env, harness.WithEnv("TOXGATE_MONGODB_URI="+f.g.StoreURI(), "TOXGATE_FILES_DIR="+filepath.Join(f.g.DataDir, "files"), "TOXGATE_CATALOG_PUBLISH_MODELS=false"))
	for name, g := range map[string]*harness.Gateway{"first gateway": f.g, "second gateway": other} {
		code, retry, out := postJob(t, g, f.editor, req)
		e, _ := out["error"].(map[string]any)
		if code != http.StatusTooManyRequests || retry == "" || e["code"] != "too_many_requests" || !strings.Contains(e["message"].(string), "jobs.max_per_user") {
			t.Fatalf("third job on the %s: %d Retry-After %q %v", name, code, retry, out)
		}
	}
	// Another user (the sysadmin, who may write the dataset) is not counted with the editor.
	if code, _, out := postJob(t, f.g, f.admin, req); code != http.StatusAccepted {
		t.Fatalf("another user's job: %d %v", code, out)
	}
	if code, out := jobCall(t, f.g, http.MethodDelete, "/jobs/"+ids[0], f.editor, nil); code != 200 || out["state"] != "cancelled" {
		t.Fatalf("DELETE: %d %v", code, out)
	}
	if code, _, out := postJob(t, other, f.editor, req); code != http.StatusAccepted {
		t.Fatalf("a job after one was cancelled: %d %v", code, out)
	}
	if code, _, out := postJob(t, f.g, f.editor, req); code != http.StatusTooManyRequests {
		t.Fatalf("past the cap again: %d %v", code, out)
	}
}
