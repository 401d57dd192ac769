package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// Dataset collaborators through the real gateway and catalog plugin: a
// member collaborator reads a private dataset, an editor collaborator edits
// it and its resources, an outsider gets 403, and a removed collaborator
// loses access at once.
func TestDatasetCollaboratorsThroughGateway(t *testing.T) {
	g := harness.Start(t)
	admin := adminToken(t, g)
	for _, u := range []string{"carol", "eddy", "otto"} {
		provision(t, g, admin, u, u+"-password-1", true)
	}
	reader := tokenFor(t, g, admin, "carol", nil)
	editor := tokenFor(t, g, admin, "eddy", nil)
	outsider := tokenFor(t, g, admin, "otto", nil)

	must := func(action, token string, data map[string]any) map[string]any {
		t.Helper()
		code, out := ckan(t, g, action, token, data)
		if code != 200 || out["success"] != true {
			t.Fatalf("%s: %d %v", action, code, out)
		}
		r, _ := out["result"].(map[string]any)
		return r
	}
	status := func(action, token string, data map[string]any) int {
		t.Helper()
		code, _ := ckan(t, g, action, token, data)
		return code
	}
	must("organization_create", admin, map[string]any{"name": "assay-lab"})
	d := must("package_create", admin, map[string]any{"name": "unpublished-assay", "owner_org": "assay-lab", "private": true,
		"resources": []map[string]any{{"url": "http://example.org/ic50.csv", "name": "IC50"}}})
	id := d["id"].(string)
	resID := d["resources"].([]any)[0].(map[string]any)["id"].(string)
	show := map[string]any{"id": "unpublished-assay"}
	searchCount := func(token string) float64 {
		t.Helper()
		return must("package_search", token, map[string]any{"include_private": true})["count"].(float64)
	}

	// nobody but the org reads it yet
	for _, tok := range []string{reader, editor, outsider} {
		if c := status("package_show", tok, show); c != 403 {
			t.Fatalf("before: package_show %d", c)
		}
	}

	must("package_collaborator_create", admin, map[string]any{"id": id, "user_id": "carol", "capacity": "member"})
	must("package_collaborator_create", admin, map[string]any{"id": id, "user_id": "eddy", "capacity": "editor"})
	code, body := getAction(t, g, "/api/3/action/package_collaborator_list", url.Values{"id": {"unpublished-assay"}}, http.Header{"Authorization": {admin}})
	if code != 200 || strings.Count(string(body), `"capacity"`) != 2 {
		t.Fatalf("package_collaborator_list: %d %s", code, body)
	}

	// a member collaborator reads (action API and search), and may not edit
	must("package_show", reader, show)
	must("resource_show", reader, map[string]any{"id": resID})
	if n := searchCount(reader); n != 1 {
		t.Fatalf("reader's search: %v", n)
	}
	if c := status("package_patch", reader, map[string]any{"id": id, "notes": "x"}); c != 403 {
		t.Fatalf("reader patches: %d", c)
	}
	if c := status("resource_patch", reader, map[string]any{"id": resID, "name": "x"}); c != 403 {
		t.Fatalf("reader patches a resource: %d", c)
	}

	// an editor collaborator edits the dataset and its resources, not its collaborators
	if p := must("package_patch", editor, map[string]any{"id": id, "notes": "curated by a collaborator"}); p["notes"] != "curated by a collaborator" {
		t.Fatalf("editor patch: %v", p)
	}
	must("resource_patch", editor, map[string]any{"id": resID, "description": "IC50 in µM"})
	must("resource_create", editor, map[string]any{"package_id": id, "url": "http://example.org/raw.csv"})
	if p := must("package_revise", editor, map[string]any{"match__id": id, "update__resources__-1__name": "raw"})["package"].(map[string]any); len(p["resources"].([]any)) != 2 {
		t.Fatalf("editor revise: %v", p)
	}
	// package_revise as curl sends it: a form, JSON in the flattened keys' values
	form := url.Values{"match__name": {"unpublished-assay"}, "update__resources__extend": {`[{"name": "notes", "url": "http://example.org/notes.txt"}]`},
		"update__resources__-1__format": {"TXT"}}
	resp, body, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/package_revise",
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Authorization": {editor}}, []byte(form.Encode()))
	if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), `"format": "TXT"`) || strings.Count(string(body), `"package_id"`) != 3 {
		t.Fatalf("form package_revise: %v %d %s", err, resp.StatusCode, body)
	}
	if c := status("package_collaborator_create", editor, map[string]any{"id": id, "user_id": "otto", "capacity": "member"}); c != 403 {
		t.Fatalf("editor adds a collaborator: %d", c)
	}

	// the dataset page offers editing to the editor collaborator only, and
	// the edit form keeps the dataset's organization
	pages := map[string]*webClient{}
	for _, u := range []string{"carol", "eddy"} {
		pages[u] = newWebClient(t, g)
		if p := pages[u].login(u, u+"-password-1"); p.status != http.StatusSeeOther {
			t.Fatalf("%s login: %d %.300s", u, p.status, p.body)
		}
	}
	if p := pages["eddy"].get("/dataset/unpublished-assay"); p.status != 200 || !strings.Contains(p.body, `id="edit-dataset"`) {
		t.Fatalf("editor collaborator's dataset page: %d, edit button: %v", p.status, strings.Contains(p.body, `id="edit-dataset"`))
	}
	if p := pages["carol"].get("/dataset/unpublished-assay"); p.status != 200 || strings.Contains(p.body, `id="edit-dataset"`) {
		t.Fatalf("member collaborator's dataset page: %d, edit button: %v", p.status, strings.Contains(p.body, `id="edit-dataset"`))
	}
	if p := pages["eddy"].get("/dataset/edit/unpublished-assay"); p.status != 200 || !strings.Contains(p.body, `selected>assay-lab<`) {
		t.Fatalf("edit form: %d %.2000s", p.status, p.body)
	}

	// an outsider stays out
	if c := status("package_show", outsider, show); c != 403 {
		t.Fatalf("outsider reads: %d", c)
	}
	if c := status("package_patch", outsider, map[string]any{"id": id, "notes": "x"}); c != 403 {
		t.Fatalf("outsider patches: %d", c)
	}
	if n := searchCount(outsider); n != 0 {
		t.Fatalf("outsider's search: %v", n)
	}

	// the user's own list
	code, out := ckan(t, g, "package_collaborator_list_for_user", reader, map[string]any{"id": "carol"})
	if l, _ := out["result"].([]any); code != 200 || len(l) != 1 || l[0].(map[string]any)["package_id"] != id {
		t.Fatalf("list_for_user: %d %v", code, out)
	}

	// removed collaborators lose access at once
	must("package_collaborator_delete", admin, map[string]any{"id": id, "user_id": "carol"})
	must("package_collaborator_delete", admin, map[string]any{"id": id, "user_id": "eddy"})
	if c := status("package_show", reader, show); c != 403 {
		t.Fatalf("removed reader reads: %d", c)
	}
	if n := searchCount(reader); n != 0 {
		t.Fatalf("removed reader's search: %v", n)
	}
	if c := status("package_patch", editor, map[string]any{"id": id, "notes": "y"}); c != 403 {
		t.Fatalf("removed editor patches: %d", c)
	}
	if p := pages["eddy"].get("/dataset/unpublished-assay"); p.status != 404 {
		t.Fatalf("removed editor's dataset page: %d", p.status)
	}
}
