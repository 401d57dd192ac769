package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// modelsGateway starts a gateway serving the named modules from a fresh
// data directory and returns it with its modules folder.
func modelsGateway(t *testing.T, modules []string, opts ...harness.Option) (*harness.Gateway, string) {
	t.Helper()
	dir := t.TempDir()
	mdir := filepath.Join(dir, "modules")
	copyModules(t, mdir, modules...)
	return harness.Start(t, append([]harness.Option{harness.WithDataDir(dir)}, opts...)...), mdir
}

// modelSHA is the module SHA-256 the model index gives for name.
func modelSHA(t *testing.T, g *harness.Gateway, tok, name string) string {
	t.Helper()
	code, out := jobCall(t, g, http.MethodGet, "/models/"+name, tok, nil)
	if code != 200 {
		t.Fatalf("GET /models/%s: %d %v", name, code, out)
	}
	return out["sha256"].(string)
}

func extraOf(ds map[string]any, k string) string {
	for _, e := range ds["extras"].([]any) {
		if em := e.(map[string]any); em["key"] == k {
			return em["value"].(string)
		}
	}
	return ""
}

// waitDataset polls package_show until the dataset records module SHA-256 sha.
func waitDataset(t *testing.T, g *harness.Gateway, name, sha string) map[string]any {
	t.Helper()
	var last map[string]any
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		code, out := ckan(t, g, "package_show", "", map[string]any{"id": name})
		if code == 200 {
			last = out["result"].(map[string]any)
			if extraOf(last, "module_sha256") == sha {
				return last
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("dataset %s never recorded module sha256 %s; last: %v\nlogs:\n%s", name, sha, last, g.Logs())
	return nil
}

// resourcesByName indexes a dataset's resources by name.
func resourcesByName(ds map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, r := range ds["resources"].([]any) {
		rm := r.(map[string]any)
		out[rm["name"].(string)] = rm
	}
	return out
}

// download fetches an uploaded resource's bytes through its URL.
func download(t *testing.T, g *harness.Gateway, r map[string]any) []byte {
	t.Helper()
	u := r["url"].(string)
	i := strings.Index(u, "/dataset/")
	if i < 0 {
		t.Fatalf("resource url %q is not a download", u)
	}
	resp, body, err := g.Do(context.Background(), http.MethodGet, u[i:], nil, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("download %s: %v %v", u, err, resp)
	}
	return body
}

// modelsInOrg lists the names of the datasets of the models' organization.
func modelsInOrg(t *testing.T, g *harness.Gateway) []string {
	t.Helper()
	code, out := ckan(t, g, "package_search", "", map[string]any{"fq": "organization:toxgate-models", "rows": 100})
	if code != 200 {
		t.Fatalf("package_search: %d %v", code, out)
	}
	var names []string
	for _, d := range out["result"].(map[string]any)["results"].([]any) {
		names = append(names, d.(map[string]any)["name"].(string))
	}
	return names
}

// withCustomSection returns wasm with a custom section appended: the same
// module, other bytes (another SHA-256).
func withCustomSection(wasm []byte, payload string) []byte {
	name := "toxgate-test"
	content := append([]byte{byte(len(name))}, name...)
	content = append(content, payload...)
	out := append([]byte(nil), wasm...)
	out = append(out, 0)
	n := len(content)
	for { // LEB128 size
		b := byte(n & 0x7f)
		n >>= 7
		if n != 0 {
			out = append(out, b|0x80)
			continue
		}
		out = append(out, b)
		break
	}
	return append(out, content...)
}

var upToDate = regexp.MustCompile(`models in the catalog are up to date.*"uploaded_files":(\d+)`)

// Every loaded model gets a public dataset in toxgate-models: its card, its
// module's SHA-256 and version, its training data (downloadable, same bytes)
// with source and licence, and a link to its page. A restart adds nothing
// and uploads nothing; a replaced module updates its dataset.
func TestModelsPublishedInCatalog(t *testing.T) {
	g, _ := modelsGateway(t, []string{"herg", "example-units"})
	admin := adminToken(t, g)
	hergSHA := modelSHA(t, g, admin, "herg")
	herg := waitDataset(t, g, "model-herg", hergSHA)

	if org := herg["organization"].(map[string]any); org["name"] != "toxgate-models" || herg["private"] != false {
		t.Fatalf("model-herg: organization %v, private %v", org["name"], herg["private"])
	}
	card, _ := os.ReadFile(filepath.Join(harness.RepoRoot(), "modules", "herg", "MODEL_CARD.md"))
	if herg["notes"] != string(card) {
		t.Fatalf("model-herg notes are not MODEL_CARD.md: %.200v", herg["notes"])
	}
	if extraOf(herg, "module_version") != "1.0.0" || !strings.Contains(extraOf(herg, "validation"), "ROC-AUC") || extraOf(herg, "routes") != "/hERG/evaluate" {
		t.Fatalf("model-herg extras: %v", herg["extras"])
	}
	rs := resourcesByName(herg)
	data := rs["herg_karim.csv"]
	if data == nil || rs["CV.md"] == nil || len(rs) != 3 {
		t.Fatalf("model-herg resources: %v", rs)
	}
	local := sha256File(t, filepath.Join(harness.RepoRoot(), "modules", "internal", "data", "herg_karim.csv"))
	if data["hash"] != "sha256:"+local || data["url_type"] != "upload" || data["format"] != "CSV" ||
		!strings.Contains(data["licence"].(string), "CC-BY-4.0") || !strings.Contains(data["source"].(string), "soolllv/tox") ||
		!strings.Contains(data["description"].(string), "CC-BY-4.0") {
		t.Fatalf("herg_karim.csv resource: %v", data)
	}
	if got := sha(download(t, g, data)); got != local {
		t.Fatalf("downloaded herg_karim.csv has sha256 %s, want %s", got, local)
	}
	link := rs["Model page /models/herg"]
	if link == nil || !strings.HasSuffix(link["url"].(string), "/models/herg") {
		t.Fatalf("model page link: %v", rs)
	}

	unitsSHA := modelSHA(t, g, admin, "example-units")
	units := waitDataset(t, g, "model-example-units", unitsSHA)
	if !strings.Contains(units["notes"].(string), "**Summary.**") || len(units["resources"].([]any)) != 1 {
		t.Fatalf("model-example-units: notes %.200v, resources %v", units["notes"], units["resources"])
	}
	if names := modelsInOrg(t, g); len(names) != 2 {
		t.Fatalf("datasets in toxgate-models: %v", names)
	}

	// Restart: the same datasets, nothing uploaded, nothing changed.
	before := herg["metadata_modified"]
	g.Restart()
	if !g.WaitLog(upToDate, 2*time.Minute) {
		t.Fatalf("no publishing pass after restart; logs:\n%s", g.Logs())
	}
	if m := upToDate.FindStringSubmatch(g.Logs()); m[1] != "0" {
		t.Fatalf("restart uploaded %s files: %s", m[1], m[0])
	}
	_, out := ckan(t, g, "package_show", "", map[string]any{"id": "model-herg"})
	again := out["result"].(map[string]any)
	if r := resourcesByName(again)["herg_karim.csv"]; again["metadata_modified"] != before || r["id"] != data["id"] || r["last_modified"] != data["last_modified"] || len(again["resources"].([]any)) != 3 {
		t.Fatalf("restart changed model-herg: %v -> %v", before, again["metadata_modified"])
	}
	if names := modelsInOrg(t, g); len(names) != 2 {
		t.Fatalf("datasets in toxgate-models after restart: %v", names)
	}

	// Replace example-units with other bytes: its dataset follows.
	wasm, err := os.ReadFile(filepath.Join(harness.Build(t).Modules, "example-units.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	resp, body, err := g.Do(context.Background(), http.MethodPost, "/admin/modules", http.Header{"Authorization": {admin}, "Content-Type": {"application/wasm"}}, withCustomSection(wasm, "v2"))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /admin/modules: %v %v %s", err, resp, body)
	}
	var lr struct {
		SHA256 string `json:"sha256"`
	}
	json.Unmarshal(body, &lr)
	newSHA := modelSHA(t, g, admin, "example-units")
	if newSHA == unitsSHA || (lr.SHA256 != "" && lr.SHA256 != newSHA) {
		t.Fatalf("replaced module: sha %s (was %s), load answer %s", newSHA, unitsSHA, body)
	}
	updated := waitDataset(t, g, "model-example-units", newSHA)
	if updated["id"] != units["id"] || len(updated["resources"].([]any)) != 1 {
		t.Fatalf("updated dataset: %v", updated)
	}
	if names := modelsInOrg(t, g); len(names) != 2 {
		t.Fatalf("datasets in toxgate-models after the replacement: %v", names)
	}
}

// Two gateways on one store, started together, publish the same models at
// once: one dataset per model and one resource per file.
func TestModelsPublishedByTwoGateways(t *testing.T) {
	store, mdir := modelsGateway(t, []string{"herg", "example-units"}, harness.WithEnv("TOXGATE_CATALOG_PUBLISH_MODELS=false"))
	gws := make([]*harness.Gateway, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range gws {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "modules"), 0o755)
		for _, m := range []string{"herg", "example-units"} {
			b, _ := os.ReadFile(filepath.Join(mdir, m+".wasm"))
			os.WriteFile(filepath.Join(dir, "modules", m+".wasm"), b, 0o644)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			gws[i], errs[i] = harness.Launch(harness.Build(t), harness.WithDataDir(dir), harness.WithEnv("TOXGATE_MONGODB_URI="+store.StoreURI(), "TOXGATE_FILES_DIR="+filepath.Join(store.DataDir, "files")))
		}()
	}
	wg.Wait()
	for i, gw := range gws {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		t.Cleanup(func() { gw.Stop() })
	}
	uploads := 0
	for _, gw := range gws {
		if !gw.WaitLog(upToDate, 2*time.Minute) {
			t.Fatalf("no publishing pass; logs:\n%s", gw.Logs())
		}
		n, _ := strconv.Atoi(upToDate.FindStringSubmatch(gw.Logs())[1])
		uploads += n
	}
	admin := adminToken(t, store)
	ds := waitDataset(t, store, "model-herg", modelSHA(t, store, admin, "herg"))
	waitDataset(t, store, "model-example-units", modelSHA(t, store, admin, "example-units"))
	if names := modelsInOrg(t, store); len(names) != 2 {
		t.Fatalf("datasets: %v", names)
	}
	if rs := ds["resources"].([]any); len(rs) != 3 || len(resourcesByName(ds)) != 3 {
		t.Fatalf("resources: %v", rs)
	}
	t.Logf("files uploaded by the two gateways together: %d (2 needed)", uploads)
}

// catalog.publish_models=false publishes nothing.
func TestModelsNotPublishedWhenOff(t *testing.T) {
	g, _ := modelsGateway(t, []string{"example-units"}, harness.WithEnv("TOXGATE_CATALOG_PUBLISH_MODELS=false"))
	admin := adminToken(t, g)
	// A model call answered means the modules and the catalog are up.
	if code, _ := ckan(t, g, "package_list", "", nil); code != 200 {
		t.Fatal("catalog not up")
	}
	modelSHA(t, g, admin, "example-units")
	if code, out := ckan(t, g, "organization_show", "", map[string]any{"id": "toxgate-models"}); code != 404 {
		t.Fatalf("organization_show toxgate-models: %d %v", code, out)
	}
	if code, out := ckan(t, g, "package_show", "", map[string]any{"id": "model-example-units"}); code != 404 {
		t.Fatalf("package_show model-example-units: %d %v", code, out)
	}
	if strings.Contains(g.Logs(), "models in the catalog") {
		t.Fatalf("published with publish_models=false:\n%s", g.Logs())
	}
}
