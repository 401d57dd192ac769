package catalog

import (
	"fmt"
	"testing"
)

// nameList is the "name" members of the dicts in l, as one string.
func nameList(l []any) string { return fmt.Sprint(names(l)) }

func TestResourceSearch(t *testing.T) {
	f := newFixture(t)
	f.ok("editor", "package_create", map[string]any{"name": "herg-screen", "owner_org": "tox-lab", "resources": []any{
		map[string]any{"url": "http://example.org/herg.csv", "name": "hERG IC50 table", "format": "CSV", "hash": "ABCDEF01", "size": 42},
		map[string]any{"url": "http://example.org/herg.pdf", "name": "Protocol", "format": "PDF", "description": "patch clamp protocol"},
	}})
	f.ok("editor", "package_create", map[string]any{"name": "ahr-screen", "owner_org": "tox-lab", "resources": []any{
		map[string]any{"url": "http://example.org/ahr.csv", "name": "AhR table", "format": "csv"},
	}})
	f.ok("editor", "package_create", map[string]any{"name": "hidden", "owner_org": "tox-lab", "private": true, "resources": []any{
		map[string]any{"url": "http://example.org/hidden.csv", "name": "hidden table", "format": "CSV"},
	}})

	res := f.ok("", "resource_search", map[string]any{"query": "format:csv", "order_by": "name"})
	if res["count"].(float64) != 2 || nameList(res["results"].([]any)) != "[AhR table hERG IC50 table]" {
		t.Fatalf("format:csv: %v", res)
	}
	first := res["results"].([]any)[0].(map[string]any)
	if first["package_id"] == nil || first["position"].(float64) != 0 || first["url"] != "http://example.org/ahr.csv" {
		t.Fatalf("resource dict: %v", first)
	}
	// a list is ANDed; matching ignores case; hash matches a prefix; size is exact
	if res := f.ok("", "resource_search", map[string]any{"query": []any{"name:TABLE", "url:herg"}}); nameList(res["results"].([]any)) != "[hERG IC50 table]" {
		t.Fatalf("list: %v", res)
	}
	if res := f.ok("", "resource_search", map[string]any{"query": "hash:abcd"}); res["count"].(float64) != 1 {
		t.Fatalf("hash prefix: %v", res)
	}
	if res := f.ok("", "resource_search", map[string]any{"query": "hash:bcd"}); res["count"].(float64) != 0 {
		t.Fatalf("hash is a prefix match: %v", res)
	}
	if res := f.ok("", "resource_search", map[string]any{"query": "size:42"}); res["count"].(float64) != 1 {
		t.Fatalf("size: %v", res)
	}
	// paging keeps the total count; private datasets are never searched
	res = f.ok("sysadmin", "resource_search", map[string]any{"query": "name:", "order_by": "name", "offset": 1, "limit": 1})
	if res["count"].(float64) != 3 || nameList(res["results"].([]any)) != "[Protocol]" {
		t.Fatalf("paging: %v", res)
	}

	for _, c := range []struct {
		data map[string]any
		want string
	}{
		{map[string]any{}, `{"__type":"Validation Error","query":"Missing value"}`},
		{map[string]any{"query": "nocolon"}, `{"__type":"Validation Error","query":"Must be \u003cfield\u003e:\u003cvalue\u003e pair(s)"}`},
		{map[string]any{"query": "package_id:x"}, `{"__type":"Validation Error","query":"Field \"package_id\" not recognised in resource_search."}`},
		{map[string]any{"query": "name:x", "limit": "-1"}, `{"__type":"Validation Error","limit":["Must be a natural number"]}`},
		{map[string]any{"query": "name:x", "order_by": "colour"}, "{\"__type\":\"Validation Error\",\"order_by\":[\"Cannot sort by field `colour`\"]}"},
	} {
		if e := f.fail("", "resource_search", c.data, 409); errJSON(e) != c.want {
			t.Errorf("%v: %s", c.data, errJSON(e))
		}
	}
}

func TestAutocompleteAndCurrentList(t *testing.T) {
	f := newFixture(t)
	f.ok("editor", "package_create", map[string]any{"name": "herg-patch", "title": "Cardiac channel", "owner_org": "tox-lab",
		"resources": []any{map[string]any{"url": "http://x/a.csv", "format": "CSV"}, map[string]any{"url": "http://x/b", "format": "csv"}}})
	f.ok("editor", "package_create", map[string]any{"name": "liver", "title": "hERG follow-up", "owner_org": "tox-lab",
		"resources": []any{map[string]any{"url": "http://x/c", "format": "XLSX"}}})
	f.ok("editor", "package_create", map[string]any{"name": "herg-private", "owner_org": "tox-lab", "private": true,
		"resources": []any{map[string]any{"url": "http://x/d", "format": "JSON"}}})

	l := f.list("", "package_autocomplete", map[string]any{"q": "HERG"})
	if len(l) != 2 {
		t.Fatalf("anonymous: %v", l)
	}
	if m := l[0].(map[string]any); m["name"] != "herg-patch" || m["match_field"] != "name" || m["match_displayed"] != "herg-patch" || m["title"] != "Cardiac channel" {
		t.Fatalf("by name: %v", m)
	}
	if m := l[1].(map[string]any); m["name"] != "liver" || m["match_field"] != "title" || m["match_displayed"] != "hERG follow-up (liver)" {
		t.Fatalf("by title: %v", m)
	}
	if l := f.list("member", "package_autocomplete", map[string]any{"q": "herg", "limit": 5}); len(l) != 3 {
		t.Fatalf("member sees the private one: %v", l)
	}
	if l := f.list("member", "package_autocomplete", map[string]any{"q": "herg", "limit": "1"}); len(l) != 1 {
		t.Fatalf("limit: %v", l)
	}
	if e := f.fail("", "package_autocomplete", map[string]any{}, 409); errJSON(e) != `{"__type":"Validation Error","q":["Missing value"]}` {
		t.Fatal(errJSON(e))
	}

	// formats: lower case, most used first, of the datasets the caller may
	// read (CKAN also offers private datasets' formats to everyone)
	if l := f.list("", "format_autocomplete", map[string]any{"q": ""}); fmt.Sprint(l) != "[csv xlsx]" {
		t.Fatalf("formats: %v", l)
	}
	if l := f.list("member", "format_autocomplete", map[string]any{"q": ""}); fmt.Sprint(l) != "[csv json xlsx]" {
		t.Fatalf("formats, member: %v", l)
	}
	if l := f.list("", "format_autocomplete", map[string]any{"q": "S", "limit": 1}); fmt.Sprint(l) != "[csv]" {
		t.Fatalf("formats q: %v", l)
	}
	if e := f.fail("", "format_autocomplete", map[string]any{"q": "c", "limit": "x"}, 409); errJSON(e) != `{"__type":"Validation Error","limit":["Invalid integer"]}` {
		t.Fatal(errJSON(e))
	}

	// current_package_list_with_resources: newest first, private ones for sysadmins only
	l = f.list("", "current_package_list_with_resources", nil)
	if nameList(l) != "[liver herg-patch]" || len(l[1].(map[string]any)["resources"].([]any)) != 2 {
		t.Fatalf("anonymous: %v", nameList(l))
	}
	if l := f.list("member", "current_package_list_with_resources", nil); nameList(l) != "[liver herg-patch]" {
		t.Fatalf("member: %v", nameList(l))
	}
	if l := f.list("sysadmin", "current_package_list_with_resources", map[string]any{"limit": 2, "offset": 1}); nameList(l) != "[liver herg-patch]" {
		t.Fatalf("sysadmin paged: %v", nameList(l))
	}
	if l := f.list("sysadmin", "current_package_list_with_resources", map[string]any{"limit": 1, "page": 3}); nameList(l) != "[herg-patch]" {
		t.Fatalf("page: %v", nameList(l))
	}
	f.fail("", "current_package_list_with_resources", map[string]any{"offset": "x"}, 409)
}

func TestBulkUpdateAndOrganizationPurge(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for _, n := range []string{"b1", "b2", "b3"} {
		ids = append(ids, f.ok("editor", "package_create", map[string]any{"name": n, "owner_org": "tox-lab"})["id"].(string))
	}
	f.ok("sysadmin", "organization_create", map[string]any{"name": "other-lab"})
	other := f.ok("sysadmin", "package_create", map[string]any{"name": "elsewhere", "owner_org": "other-lab"})["id"].(string)
	count := func(user string) float64 {
		return f.ok(user, "package_search", map[string]any{"include_private": true, "fq": "organization:tox-lab"})["count"].(float64)
	}

	f.ok("admin", "bulk_update_private", map[string]any{"org_id": f.orgID, "datasets": []any{ids[0], ids[1]}})
	if count("") != 1 || count("member") != 3 {
		t.Fatalf("private: anonymous %v member %v", count(""), count("member"))
	}
	if d := f.ok("admin", "package_show", map[string]any{"id": "b1"}); d["private"] != true {
		t.Fatalf("b1: %v", d["private"])
	}
	// the org's name works too; a dataset already public is left as it is
	f.ok("admin", "bulk_update_public", map[string]any{"org_id": "tox-lab", "datasets": []any{ids[0], ids[2]}})
	if count("") != 2 {
		t.Fatalf("public: %v", count(""))
	}
	f.ok("admin", "bulk_update_delete", map[string]any{"org_id": f.orgID, "datasets": []any{ids[2]}})
	if d := f.ok("admin", "package_show", map[string]any{"id": "b3"}); d["state"] != "deleted" {
		t.Fatalf("b3: %v", d["state"])
	}

	// errors: only org admins; every dataset must be the org's; both keys needed
	if e := f.fail("editor", "bulk_update_private", map[string]any{"org_id": f.orgID, "datasets": []any{ids[0]}}, 403); e.Message != "Access denied" {
		t.Fatal(e.Message)
	}
	if e := f.fail("", "bulk_update_delete", map[string]any{"org_id": f.orgID, "datasets": []any{ids[0]}}, 403); e.Message != "Access denied: Action bulk_update_delete requires an authenticated user" {
		t.Fatal(e.Message)
	}
	e := f.fail("admin", "bulk_update_delete", map[string]any{"org_id": f.orgID, "datasets": []any{ids[0], other}}, 409)
	if errJSON(e) != `{"__type":"Validation Error","datasets":["Dataset `+other+` is not in organization tox-lab"]}` {
		t.Fatal(errJSON(e))
	}
	if d := f.ok("admin", "package_show", map[string]any{"id": "b1"}); d["state"] != "active" {
		t.Fatal("a refused bulk update changed a dataset")
	}
	if e := f.fail("admin", "bulk_update_public", map[string]any{}, 409); errJSON(e) != `{"__type":"Validation Error","datasets":["Missing value"],"org_id":["Missing value"]}` {
		t.Fatal(errJSON(e))
	}
	f.fail("admin", "bulk_update_public", map[string]any{"org_id": "nope", "datasets": []any{}}, 404)

	// organization_purge
	if e := f.fail("admin", "organization_purge", map[string]any{"id": "other-lab"}, 403); e.Message != "Access denied" {
		t.Fatal(e.Message)
	}
	e = f.fail("sysadmin", "organization_purge", map[string]any{"id": "other-lab"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","message":"Organization cannot be purged while it still has datasets"}` {
		t.Fatal(errJSON(e))
	}
	f.ok("sysadmin", "dataset_purge", map[string]any{"id": "elsewhere"})
	f.ok("sysadmin", "organization_purge", map[string]any{"id": "other-lab"})
	f.fail("sysadmin", "organization_show", map[string]any{"id": "other-lab"}, 404)
	if e := f.fail("sysadmin", "organization_purge", map[string]any{"id": "other-lab"}, 404); e.Message != "Not found: Organization was not found" {
		t.Fatal(e.Message)
	}
	// the name is free again
	f.ok("sysadmin", "organization_create", map[string]any{"name": "other-lab"})
	f.fail("sysadmin", "organization_purge", map[string]any{}, 409)
}

func TestResourceReorderOwnerOrgAndOrgAutocomplete(t *testing.T) {
	f := newFixture(t)
	d := f.ok("editor", "package_create", map[string]any{"name": "three", "owner_org": "tox-lab", "resources": []any{
		map[string]any{"url": "http://x/a", "name": "a"}, map[string]any{"url": "http://x/b", "name": "b"}, map[string]any{"url": "http://x/c", "name": "c"}}})
	var ids []string
	for _, r := range d["resources"].([]any) {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	out := f.ok("editor", "package_resource_reorder", map[string]any{"id": "three", "order": []any{ids[2]}})
	if out["id"] != "three" || fmt.Sprint(out["order"]) != fmt.Sprint([]any{ids[2], ids[0], ids[1]}) {
		t.Fatalf("reorder: %v", out)
	}
	if got := f.ok("", "package_show", map[string]any{"id": "three"}); nameList(got["resources"].([]any)) != "[c a b]" {
		t.Fatalf("after reorder: %v", nameList(got["resources"].([]any)))
	}
	for _, c := range []struct {
		user   string
		data   map[string]any
		status int
		want   string
	}{
		{"editor", map[string]any{"id": "three"}, 409, `{"__type":"Validation Error","order":["Missing value"]}`},
		{"editor", map[string]any{"id": "three", "order": "x"}, 409, `{"__type":"Validation Error","order":"Must be a list of resource"}`},
		{"editor", map[string]any{"id": "three", "order": []any{ids[0], ids[0]}}, 409, `{"__type":"Validation Error","order":"Must supply unique resource_ids"}`},
		{"editor", map[string]any{"id": "three", "order": []any{"nope"}}, 409, `{"__type":"Validation Error","order":"resource_id nope can not be found"}`},
		{"member", map[string]any{"id": "three", "order": []any{ids[0]}}, 403, `{"__type":"Authorization Error","message":"Access denied: User member not authorized to edit package ` + d["id"].(string) + `"}`},
	} {
		if e := f.fail(c.user, "package_resource_reorder", c.data, c.status); errJSON(e) != c.want {
			t.Errorf("%v: %s", c.data, errJSON(e))
		}
	}

	// package_owner_org_update: sysadmins move a dataset
	f.ok("sysadmin", "organization_create", map[string]any{"name": "new-home", "title": "New Home"})
	if e := f.fail("admin", "package_owner_org_update", map[string]any{"id": "three", "organization_id": "new-home"}, 403); e.Message != "Access denied" {
		t.Fatal(e.Message)
	}
	f.ok("sysadmin", "package_owner_org_update", map[string]any{"id": "three", "organization_id": "new-home"})
	if got := f.ok("", "package_show", map[string]any{"id": "three"}); got["organization"].(map[string]any)["name"] != "new-home" {
		t.Fatalf("owner: %v", got["organization"])
	}
	f.fail("sysadmin", "package_owner_org_update", map[string]any{"id": "three", "organization_id": "nowhere"}, 404)
	f.fail("sysadmin", "package_owner_org_update", map[string]any{"id": "nothing", "organization_id": "new-home"}, 404)
	f.fail("sysadmin", "package_owner_org_update", map[string]any{"id": "three"}, 409)

	// organization_autocomplete: name or title contains q, by title
	l := f.list("", "organization_autocomplete", map[string]any{"q": "HOME"})
	if len(l) != 1 || l[0].(map[string]any)["name"] != "new-home" || l[0].(map[string]any)["title"] != "New Home" || l[0].(map[string]any)["id"] == nil {
		t.Fatalf("org autocomplete: %v", l)
	}
	if l := f.list("", "organization_autocomplete", map[string]any{"q": "", "limit": 1}); nameList(l) != "[new-home]" {
		t.Fatalf("org autocomplete limit: %v", l)
	}
	if e := f.fail("", "organization_autocomplete", map[string]any{"limit": 1}, 409); errJSON(e) != `{"__type":"Validation Error","q":["Missing value"]}` {
		t.Fatal(errJSON(e))
	}
}

func TestTagSearchAndAutocomplete(t *testing.T) {
	f := newFixture(t)
	v := f.ok("sysadmin", "vocabulary_create", map[string]any{"name": "toxin", "tags": []any{map[string]any{"name": "microcystin"}, map[string]any{"name": "saxitoxin"}}})
	f.ok("editor", "package_create", map[string]any{"name": "p1", "owner_org": "tox-lab", "tags": []any{map[string]any{"name": "Hepatotoxicity"}, map[string]any{"name": "hERG"}}})
	f.ok("editor", "package_create", map[string]any{"name": "p2", "owner_org": "tox-lab", "private": true, "tags": []any{map[string]any{"name": "hepatocyte"}}})

	res := f.ok("", "tag_search", map[string]any{"query": "HEPATO"})
	if res["count"].(float64) != 1 || nameList(res["results"].([]any)) != "[Hepatotoxicity]" {
		t.Fatalf("anonymous: %v", res)
	}
	if r := res["results"].([]any)[0].(map[string]any); r["id"] == nil || r["vocabulary_id"] != nil || len(r) != 3 {
		t.Fatalf("tag dict: %v", r)
	}
	// the member reads the private dataset's tags too; terms are ANDed; paging keeps the count
	res = f.ok("member", "tag_search", map[string]any{"query": []any{"hepato", "t"}, "limit": 1, "offset": 1})
	if res["count"].(float64) != 2 || nameList(res["results"].([]any)) != "[hepatocyte]" {
		t.Fatalf("member: %v", res)
	}
	// a vocabulary's tags, by its name or id; an unknown vocabulary finds nothing
	res = f.ok("", "tag_search", map[string]any{"query": "toxin", "vocabulary_id": "toxin"})
	if nameList(res["results"].([]any)) != "[saxitoxin]" || res["results"].([]any)[0].(map[string]any)["vocabulary_id"] != v["id"] {
		t.Fatalf("vocabulary: %v", res)
	}
	if res := f.ok("", "tag_search", map[string]any{"query": "x", "vocabulary_id": "nope"}); res["count"].(float64) != 0 {
		t.Fatalf("unknown vocabulary: %v", res)
	}
	if res := f.ok("", "tag_search", nil); res["count"].(float64) != 0 || len(res["results"].([]any)) != 0 {
		t.Fatalf("no query: %v", res)
	}
	if e := f.fail("", "tag_search", map[string]any{"query": "h", "limit": "x"}, 409); errJSON(e) != `{"__type":"Validation Error","limit":["Invalid integer"]}` {
		t.Fatal(errJSON(e))
	}
	// repeated terms count once; more distinct terms than a search's bound is a Search Error
	many := make([]any, 0, 100000)
	for range 100000 {
		many = append(many, "hepato")
	}
	if res := f.ok("", "tag_search", map[string]any{"query": many}); res["count"].(float64) != 1 {
		t.Fatalf("repeated terms: %v", res)
	}
	distinct := make([]any, 0, 1000)
	for i := range 1000 {
		distinct = append(distinct, fmt.Sprint("t", i))
	}
	if e := f.fail("", "tag_search", map[string]any{"query": distinct}, 409); e.Type != "Search Error" {
		t.Fatal(errJSON(e))
	}
	if l := f.list("", "tag_autocomplete", map[string]any{"query": "h"}); fmt.Sprint(l) != "[Hepatotoxicity hERG]" {
		t.Fatalf("tag_autocomplete: %v", l)
	}
	if l := f.list("", "tag_autocomplete", map[string]any{"q": "cyst", "vocabulary_id": v["id"]}); fmt.Sprint(l) != "[microcystin]" {
		t.Fatalf("tag_autocomplete vocabulary: %v", l)
	}
}

func TestGroupAutocompleteAndGroupPackageShow(t *testing.T) {
	f := newFixture(t)
	// users who are not sysadmins create groups here (ckan.auth.user_create_groups)
	f.withOptions(Options{Auth: AuthOptions{UserCreateGroups: true}})
	f.ok("editor", "group_create", map[string]any{"name": "hepatotox", "title": "Hepatotoxicity"})
	f.ok("editor", "group_create", map[string]any{"name": "cardio", "title": "Cardiotoxicity"})
	for _, d := range []struct {
		name    string
		private bool
	}{{"g-old", false}, {"g-new", false}, {"g-private", true}} {
		f.ok("editor", "package_create", map[string]any{"name": d.name, "owner_org": "tox-lab", "private": d.private, "groups": []any{map[string]any{"name": "hepatotox"}}})
	}
	// groups only (not the organization), by title
	if l := f.list("", "group_autocomplete", map[string]any{"q": "TOX"}); nameList(l) != "[cardio hepatotox]" || l[0].(map[string]any)["title"] != "Cardiotoxicity" {
		t.Fatalf("group_autocomplete: %v", l)
	}
	if l := f.list("", "group_autocomplete", map[string]any{"q": "lab"}); len(l) != 0 {
		t.Fatalf("an organization in group_autocomplete: %v", l)
	}
	// the group's public datasets, newest first, even for a member of the org
	if l := f.list("member", "group_package_show", map[string]any{"id": "hepatotox"}); nameList(l) != "[g-new g-old]" {
		t.Fatalf("group_package_show: %v", nameList(l))
	}
	if l := f.list("", "group_package_show", map[string]any{"id": "hepatotox", "limit": "1"}); nameList(l) != "[g-new]" {
		t.Fatalf("group_package_show limit: %v", nameList(l))
	}
	if e := f.fail("", "group_package_show", map[string]any{"id": "hepatotox", "limit": -1}, 409); errJSON(e) != `{"__type":"Validation Error","message":"Limit must be a positive integer"}` {
		t.Fatal(errJSON(e))
	}
	f.fail("", "group_package_show", map[string]any{"id": "nope"}, 404)
	f.fail("", "group_package_show", map[string]any{}, 409)
}
