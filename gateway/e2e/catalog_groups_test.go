package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// Groups and tag vocabularies through the whole gateway: a member of a
// group adds datasets to it, an outsider gets 403; vocabulary tags are
// searched and faceted as vocab_<name>; both survive a restart and are
// seen by a second gateway on the same store.
func TestCatalogGroupsAndVocabularies(t *testing.T) {
	// gina, who is no sysadmin, creates a group (catalog.auth.user_create_groups)
	g := harness.Start(t, harness.WithEnv("TOXGATE_CATALOG_AUTH_USER_CREATE_GROUPS=true"))
	admin := adminToken(t, g)
	provision(t, g, admin, "eddie", "eddie-password-1", true)
	provision(t, g, admin, "gina", "gina-password-1", true)
	provision(t, g, admin, "otto", "otto-password-1", true)
	editor := tokenFor(t, g, admin, "eddie", nil)
	curator := tokenFor(t, g, admin, "gina", nil)
	outsider := tokenFor(t, g, admin, "otto", nil)
	must := func(action, token string, data map[string]any) map[string]any {
		t.Helper()
		code, out := ckan(t, g, action, token, data)
		if code != 200 {
			t.Fatalf("%s: %d %v", action, code, out)
		}
		r, _ := out["result"].(map[string]any)
		return r
	}
	refused := func(action, token string, data map[string]any, status int, errType string) map[string]any {
		t.Helper()
		code, out := ckan(t, g, action, token, data)
		e, _ := out["error"].(map[string]any)
		if code != status || out["success"] != false || e["__type"] != errType {
			t.Fatalf("%s: want %d %s, got %d %v", action, status, errType, code, out)
		}
		return e
	}
	must("organization_create", admin, map[string]any{"name": "tox-lab"})
	must("organization_member_create", admin, map[string]any{"id": "tox-lab", "username": "eddie", "role": "editor"})

	// gina creates a group and takes eddie in; both can add datasets to it
	grp := must("group_create", curator, map[string]any{"name": "hepatotox", "title": "Hepatotoxicity", "image_url": "https://example.org/liver.png"})
	must("group_member_create", curator, map[string]any{"id": "hepatotox", "username": "eddie", "role": "member"})
	ds := must("package_create", editor, map[string]any{"name": "liver-slices", "owner_org": "tox-lab",
		"groups": []any{map[string]any{"name": "hepatotox"}}})
	if gs := ds["groups"].([]any); len(gs) != 1 || gs[0].(map[string]any)["id"] != grp["id"] {
		t.Fatalf("dataset groups: %v", ds["groups"])
	}
	must("package_create", editor, map[string]any{"name": "hepg2", "owner_org": "tox-lab"})
	// a plain member of the group (not its admin) adds a dataset with member_create
	must("member_create", editor, map[string]any{"id": "hepatotox", "object": "hepg2", "object_type": "package", "capacity": "public"})

	// otto is not in the group: member_create and package updates naming it are refused
	e := refused("member_create", outsider, map[string]any{"id": "hepatotox", "object": "hepg2", "object_type": "package", "capacity": "public"}, 403, "Authorization Error")
	if e["message"] != "Access denied: User otto not authorized to edit group "+grp["id"].(string) {
		t.Fatalf("outsider message: %v", e)
	}
	refused("member_delete", outsider, map[string]any{"id": "hepatotox", "object": "hepg2", "object_type": "package"}, 403, "Authorization Error")
	refused("group_patch", editor, map[string]any{"id": "hepatotox", "title": "x"}, 403, "Authorization Error")
	must("group_member_delete", curator, map[string]any{"id": "hepatotox", "username": "eddie"})
	e = refused("package_create", editor, map[string]any{"name": "hepatocytes", "owner_org": "tox-lab",
		"groups": []any{map[string]any{"name": "hepatotox"}}}, 403, "Authorization Error")
	if e["message"] != "Access denied: User eddie not authorized to edit these groups" {
		t.Fatalf("editor outside the group: %v", e)
	}

	// a toxin vocabulary (sysadmins) and a dataset tagged from it
	refused("vocabulary_create", editor, map[string]any{"name": "toxin"}, 403, "Authorization Error")
	voc := must("vocabulary_create", admin, map[string]any{"name": "toxin", "tags": []any{map[string]any{"name": "microcystin"}}})
	must("tag_create", admin, map[string]any{"name": "nodularin", "vocabulary_id": voc["id"]})
	refused("package_create", editor, map[string]any{"name": "bloom", "owner_org": "tox-lab",
		"tags": []any{map[string]any{"name": "ricin", "vocabulary_id": voc["id"]}}}, 409, "Validation Error")
	must("package_create", editor, map[string]any{"name": "bloom", "owner_org": "tox-lab",
		"tags": []any{map[string]any{"name": "microcystin", "vocabulary_id": voc["id"]}, map[string]any{"name": "lake"}}})

	// GET package_search as ckanapi and curl send it
	search := func(g *harness.Gateway) map[string]any {
		t.Helper()
		q := url.Values{"fq": {`vocab_toxin:"microcystin" OR groups:hepatotox`}, "facet.field": {`["vocab_toxin","groups","tags"]`}}
		code, body := getAction(t, g, "/api/3/action/package_search", q, nil)
		var out map[string]any
		if err := json.Unmarshal(body, &out); code != 200 || err != nil {
			t.Fatalf("package_search: %d %s", code, body)
		}
		return result(t, out)
	}
	want := "3 map[groups:map[hepatotox:2] tags:map[lake:1] vocab_toxin:map[microcystin:1]]"
	if r := search(g); fmt.Sprint(r["count"], " ", r["facets"]) != want {
		t.Fatalf("search: %v %v", r["count"], r["facets"])
	}
	code, body := getAction(t, g, "/api/3/action/tag_list", url.Values{"vocabulary_id": {"toxin"}}, nil)
	var tags struct{ Result []string }
	if err := json.Unmarshal(body, &tags); code != 200 || err != nil || fmt.Sprint(tags.Result) != "[microcystin nodularin]" {
		t.Fatalf("tag_list: %d %s", code, body)
	}

	// a second gateway on the same store, and a restart, see all of it
	other := harness.Start(t, harness.WithEnv("TOXGATE_MONGODB_URI="+g.StoreURI(), "TOXGATE_CATALOG_AUTH_USER_CREATE_GROUPS=true"))
	if r := search(other); fmt.Sprint(r["count"], " ", r["facets"]) != want {
		t.Fatalf("second gateway: %v %v", r["count"], r["facets"])
	}
	g.Restart()
	if r := search(g); fmt.Sprint(r["count"], " ", r["facets"]) != want {
		t.Fatalf("after restart: %v %v", r["count"], r["facets"])
	}
	if r := must("group_show", "", map[string]any{"id": "hepatotox"}); r["package_count"].(float64) != 2 || r["image_url"] != "https://example.org/liver.png" {
		t.Fatalf("group_show after restart: %v", r)
	}

	// the web pages: /group lists it, its page lists its two datasets, a
	// dataset's page links it
	page := func(path string) string {
		t.Helper()
		resp, body := get(t, g, path, http.Header{"Accept": {"text/html"}})
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		return string(body)
	}
	if p := page("/group"); !strings.Contains(p, `href="/group/hepatotox"`) || !strings.Contains(p, "Hepatotoxicity") || !strings.Contains(p, "2 datasets") {
		t.Errorf("/group does not list the group with its 2 datasets")
	}
	if p := page("/group/hepatotox"); !strings.Contains(p, `href="/dataset/liver-slices"`) || !strings.Contains(p, `href="/dataset/hepg2"`) || strings.Contains(p, `href="/dataset/bloom"`) {
		t.Errorf("/group/hepatotox does not list exactly its datasets")
	}
	if p := page("/dataset/liver-slices"); !strings.Contains(p, `href="/group/hepatotox"`) {
		t.Errorf("the dataset page does not link its group")
	}
}
