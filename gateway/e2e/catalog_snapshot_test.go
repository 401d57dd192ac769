package e2e

import (
	"fmt"
	"reflect"
	"regexp"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// A gateway restarted on its data directory starts its catalog plugin
// from the search index snapshot and the records file the previous run
// wrote, and its searches answer as before, with the writes made since.
func TestCatalogStartsFromIndexSnapshot(t *testing.T) {
	g, admin := catalogGateway(t, "tox-lab")
	for i := range 6 {
		data := map[string]any{"name": fmt.Sprintf("snap-%d", i), "owner_org": "tox-lab", "title": fmt.Sprintf("hERG assay %d", i),
			"tags": []any{map[string]any{"name": []string{"herg", "liver"}[i%2]}}}
		if code, out := ckan(t, g, "package_create", admin, data); code != 200 {
			t.Fatalf("package_create: %d %v", code, out)
		}
	}
	if !g.WaitLog(regexp.MustCompile(`catalog index snapshot written`), 60*time.Second) {
		t.Fatalf("no snapshot written:\n%s", g.Logs())
	}
	query := map[string]any{"q": "assay", "facet.field": `["tags","organization"]`, "rows": 20}
	_, before := ckan(t, g, "package_search", admin, query)
	g.Restart()
	if !g.WaitLog(regexp.MustCompile(`catalog index restored from its snapshot`), 60*time.Second) {
		t.Fatalf("the restarted catalog did not start from its snapshot:\n%s", g.Logs())
	}
	if !g.WaitLog(regexp.MustCompile(`catalog loaded from its records file`), 60*time.Second) {
		t.Fatalf("the restarted catalog did not start from its records file:\n%s", g.Logs())
	}
	_, after := ckan(t, g, "package_search", admin, query)
	if !reflect.DeepEqual(before["result"], after["result"]) { // the help URL names the new port
		t.Fatalf("search after restart:\n got %v\nwant %v", after["result"], before["result"])
	}
	if code, out := ckan(t, g, "package_create", admin, map[string]any{"name": "snap-new", "owner_org": "tox-lab", "title": "assay after restart"}); code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}
	_, res := ckan(t, g, "package_search", admin, query)
	if n, _ := res["result"].(map[string]any)["count"].(float64); n != 7 {
		t.Fatalf("count after a new dataset: %v", res["result"])
	}
}

// catalogGateway starts a gateway with no model modules and an
// organization named org, and returns it with a sysadmin's token.
func catalogGateway(t *testing.T, org string) (*harness.Gateway, string) {
	t.Helper()
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+t.TempDir()))
	admin := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": org}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	return g, admin
}
