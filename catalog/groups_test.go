package catalog

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// groupNames are the names of the groups of a dataset dict.
func groupNames(d map[string]any) []string {
	var out []string
	for _, g := range d["groups"].([]any) {
		out = append(out, g.(map[string]any)["name"].(string))
	}
	return out
}

func TestGroups(t *testing.T) {
	f := newFixture(t)
	// users who are not sysadmins create groups, and anonymous callers see
	// the members here (ckan.auth.user_create_groups, public_user_details)
	f.withOptions(Options{Auth: AuthOptions{UserCreateGroups: true, PublicUserDetails: true}})

	// create: the caller becomes admin; names are shared with organizations
	g := f.ok("member", "group_create", map[string]any{"name": "hepatotox", "title": "Hepatotoxicity",
		"description": "liver", "image_url": "https://example.org/liver.png",
		"extras": []any{map[string]any{"key": "curator", "value": "ana"}}})
	if g["type"] != "group" || g["is_organization"] != false || g["image_display_url"] != "https://example.org/liver.png" ||
		len(g["users"].([]any)) != 1 || g["users"].([]any)[0].(map[string]any)["capacity"] != "admin" {
		t.Fatalf("group_create: %v", g)
	}
	if ex := g["extras"].([]any); len(ex) != 1 || ex[0].(map[string]any)["value"] != "ana" {
		t.Fatalf("extras: %v", ex)
	}
	gid := g["id"].(string)
	e := f.fail("outsider", "group_create", map[string]any{"name": "tox-lab"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","name":["Group name already exists in database"]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("", "group_create", map[string]any{"name": "anon"}, 403)
	if e.Message != "Access denied: Action group_create requires an authenticated user" {
		t.Fatal(e.Message)
	}
	f.fail("outsider", "group_create", map[string]any{"name": "X"}, 409)
	f.ok("outsider", "group_create", map[string]any{"name": "cardio", "title": "Cardiotoxicity"})

	// groups and organizations do not mix
	if l := f.list("", "group_list", nil); fmt.Sprint(l) != "[cardio hepatotox]" {
		t.Fatalf("group_list: %v", l)
	}
	if l := f.list("", "organization_list", nil); fmt.Sprint(l) != "[tox-lab]" {
		t.Fatalf("organization_list: %v", l)
	}
	f.fail("", "organization_show", map[string]any{"id": "hepatotox"}, 404)
	f.fail("", "group_show", map[string]any{"id": "tox-lab"}, 404)
	f.fail("", "group_show", map[string]any{"id": "nope"}, 404)
	e = f.fail("", "group_show", map[string]any{}, 409)
	if errJSON(e) != `{"__type":"Validation Error","id":["Missing value"]}` {
		t.Fatal(errJSON(e))
	}

	// datasets join a group through package_create/update by members of the group
	f.ok("editor", "package_create", map[string]any{"name": "liver-a", "owner_org": "tox-lab", "tags": []any{map[string]any{"name": "liver"}}})
	e = f.fail("editor", "package_create", map[string]any{"name": "liver-b", "owner_org": "tox-lab", "groups": []any{map[string]any{"name": "hepatotox"}}}, 403)
	if e.Message != "Access denied: User editor not authorized to edit these groups" {
		t.Fatal(e.Message)
	}
	e = f.fail("editor", "package_create", map[string]any{"name": "liver-b", "owner_org": "tox-lab", "groups": []any{map[string]any{"name": "nope"}}}, 404)
	if e.Message != "Not found: Group was not found." {
		t.Fatal(e.Message)
	}
	f.ok("member", "group_member_create", map[string]any{"id": "hepatotox", "username": "editor", "role": "member"})
	d := f.ok("editor", "package_create", map[string]any{"name": "liver-b", "owner_org": "tox-lab", "groups": []any{map[string]any{"name": "hepatotox"}}})
	if fmt.Sprint(groupNames(d)) != "[hepatotox]" {
		t.Fatalf("groups: %v", d["groups"])
	}
	if gd := d["groups"].([]any)[0].(map[string]any); gd["id"] != gid || gd["title"] != "Hepatotoxicity" || gd["display_name"] != "Hepatotoxicity" ||
		gd["description"] != "liver" || gd["image_display_url"] != "https://example.org/liver.png" || len(gd) != 6 {
		t.Fatalf("group in dataset: %v", gd)
	}
	// package_patch keeps the groups; package_update without them leaves those the caller is in
	if d := f.ok("editor", "package_patch", map[string]any{"id": "liver-b", "title": "Liver B"}); fmt.Sprint(groupNames(d)) != "[hepatotox]" {
		t.Fatalf("patch: %v", d["groups"])
	}
	// member_create: a member of the group adds a dataset; an outsider may not
	m := f.ok("member", "member_create", map[string]any{"id": "hepatotox", "object": "liver-a", "object_type": "package", "capacity": "public"})
	if m["table_name"] != "package" || m["group_id"] != gid || m["capacity"] != "public" || m["state"] != "active" {
		t.Fatalf("member_create: %v", m)
	}
	e = f.fail("outsider", "member_create", map[string]any{"id": "hepatotox", "object": "liver-a", "object_type": "package", "capacity": "public"}, 403)
	if e.Message != "Access denied: User outsider not authorized to edit group "+gid {
		t.Fatal(e.Message)
	}
	e = f.fail("member", "member_create", map[string]any{"id": "hepatotox", "object": "liver-a"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","capacity":["Missing value"],"object_type":["Missing value"]}` {
		t.Fatal(errJSON(e))
	}
	f.fail("member", "member_create", map[string]any{"id": "nope", "object": "liver-a", "object_type": "package", "capacity": "public"}, 404)
	e = f.fail("member", "member_create", map[string]any{"id": "hepatotox", "object": "nope", "object_type": "package", "capacity": "public"}, 404)
	if e.Message != "Not found: Package was not found." {
		t.Fatal(e.Message)
	}
	// users join through member_create by group admins only
	e = f.fail("editor", "member_create", map[string]any{"id": "hepatotox", "object": "outsider", "object_type": "user", "capacity": "member"}, 403)
	f.ok("member", "member_create", map[string]any{"id": "hepatotox", "object": "outsider", "object_type": "user", "capacity": "member"})

	// package_search: groups facet and fq
	s := f.ok("", "package_search", map[string]any{"fq": "groups:hepatotox", "facet.field": `["groups"]`})
	if s["count"].(float64) != 2 || s["facets"].(map[string]any)["groups"].(map[string]any)["hepatotox"].(float64) != 2 {
		t.Fatalf("search: %v %v", s["count"], s["facets"])
	}
	items := s["search_facets"].(map[string]any)["groups"].(map[string]any)["items"].([]any)
	if items[0].(map[string]any)["display_name"] != "Hepatotoxicity" {
		t.Fatalf("facet display: %v", items)
	}

	// group_show: package_count, include_datasets, users; member_list
	show := f.ok("", "group_show", map[string]any{"id": "hepatotox", "include_datasets": true})
	if show["package_count"].(float64) != 2 || len(show["packages"].([]any)) != 2 || len(show["users"].([]any)) != 3 {
		t.Fatalf("group_show: %v %v %v", show["package_count"], show["packages"], show["users"])
	}
	if l := f.list("", "member_list", map[string]any{"id": "hepatotox", "object_type": "package"}); len(l) != 2 || l[0].([]any)[2] != "public" {
		t.Fatalf("member_list packages: %v", l)
	}
	if l := f.list("", "member_list", map[string]any{"id": "hepatotox", "object_type": "user", "capacity": "admin"}); len(l) != 1 || l[0].([]any)[0] != f.users["member"].UserID {
		t.Fatalf("member_list users: %v", l)
	}
	all := f.list("", "group_list", map[string]any{"all_fields": true, "sort": "package_count"})
	if first := all[0].(map[string]any); first["name"] != "hepatotox" || first["package_count"].(float64) != 2 || first["type"] != "group" {
		t.Fatalf("all_fields: %v", first)
	}

	if l := f.list("", "member_roles_list", map[string]any{"group_type": "group"}); fmt.Sprint(l) != "[map[text:Admin value:admin] map[text:Member value:member]]" {
		t.Fatalf("member_roles_list for groups: %v", l)
	}

	// group_list_authz: the groups the caller may add datasets to
	if l := f.list("editor", "group_list_authz", nil); len(l) != 1 || l[0].(map[string]any)["name"] != "hepatotox" {
		t.Fatalf("authz editor: %v", l)
	}
	if l := f.list("sysadmin", "group_list_authz", nil); len(l) != 2 {
		t.Fatalf("authz sysadmin: %v", l)
	}
	if l := f.list("sysadmin", "group_list_authz", map[string]any{"am_member": true}); len(l) != 0 {
		t.Fatalf("authz sysadmin am_member: %v", l)
	}
	if l := f.list("", "group_list_authz", nil); len(l) != 0 {
		t.Fatalf("authz anonymous: %v", l)
	}

	// update / patch need a group admin; renames show in datasets at once
	e = f.fail("editor", "group_patch", map[string]any{"id": "hepatotox", "title": "x"}, 403)
	if e.Message != "Access denied: User editor not authorized to edit group "+gid {
		t.Fatal(e.Message)
	}
	if p := f.ok("member", "group_patch", map[string]any{"id": "hepatotox", "title": "Liver toxicity"}); p["description"] != "liver" || p["title"] != "Liver toxicity" {
		t.Fatalf("patch: %v", p)
	}
	if d := f.ok("", "package_show", map[string]any{"id": "liver-a"}); d["groups"].([]any)[0].(map[string]any)["title"] != "Liver toxicity" {
		t.Fatalf("dataset group not refreshed: %v", d["groups"])
	}
	if u := f.ok("member", "group_update", map[string]any{"id": "hepatotox", "name": "liver", "title": "Liver"}); u["description"] != "" || u["name"] != "liver" {
		t.Fatalf("update replaces: %v", u)
	}
	if s := f.ok("", "package_search", map[string]any{"fq": "groups:liver"}); s["count"].(float64) != 2 {
		t.Fatalf("renamed group not re-indexed: %v", s["count"])
	}

	// member_delete takes a dataset out; package_update without groups takes out those the caller is in
	f.ok("editor", "member_delete", map[string]any{"id": "liver", "object": "liver-a", "object_type": "package"})
	if d := f.ok("", "package_show", map[string]any{"id": "liver-a"}); len(d["groups"].([]any)) != 0 {
		t.Fatalf("member_delete: %v", d["groups"])
	}
	f.ok("member", "group_member_delete", map[string]any{"id": "liver", "username": "editor"})
	if d := f.ok("editor", "package_update", map[string]any{"id": "liver-b", "name": "liver-b", "owner_org": "tox-lab"}); fmt.Sprint(groupNames(d)) != "[liver]" {
		t.Fatalf("a group the editor left is kept: %v", d["groups"])
	}
	e = f.fail("outsider", "group_member_create", map[string]any{"id": "liver", "username": "editor", "role": "member"}, 403)
	e = f.fail("member", "group_member_create", map[string]any{"id": "nope", "username": "editor", "role": "member"}, 404)
	if e.Message != "Not found: Group not found" {
		t.Fatal(e.Message)
	}

	// delete: admins only; the group leaves lists and datasets
	e = f.fail("outsider", "group_delete", map[string]any{"id": "liver"}, 403)
	if e.Message != "Access denied: User outsider not authorized to delete group "+gid {
		t.Fatal(e.Message)
	}
	f.ok("member", "group_delete", map[string]any{"id": "liver"})
	if l := f.list("", "group_list", nil); fmt.Sprint(l) != "[cardio]" {
		t.Fatalf("after delete: %v", l)
	}
	if d := f.ok("", "package_show", map[string]any{"id": "liver-b"}); len(d["groups"].([]any)) != 0 {
		t.Fatalf("deleted group still on dataset: %v", d["groups"])
	}

	// purge: sysadmins only; the memberships go with it, the name is free again
	f.ok("outsider", "member_create", map[string]any{"id": "cardio", "object": "liver-b", "object_type": "package", "capacity": "public"})
	e = f.fail("outsider", "group_purge", map[string]any{"id": "cardio"}, 403)
	f.fail("sysadmin", "group_purge", map[string]any{"id": "nope"}, 404)
	f.ok("sysadmin", "group_purge", map[string]any{"id": "cardio"})
	f.fail("", "group_show", map[string]any{"id": "cardio"}, 404)
	if d := f.ok("", "package_show", map[string]any{"id": "liver-b"}); len(d["groups"].([]any)) != 0 {
		t.Fatalf("purged group still on dataset: %v", d["groups"])
	}
	f.ok("outsider", "group_create", map[string]any{"name": "cardio"})
}

// TestGroupsSeenByAnotherInstance checks that groups and memberships
// written through one catalog are read through another on the same store,
// and survive a restart (a new catalog loading from the store).
func TestGroupsSeenByAnotherInstance(t *testing.T) {
	f := newFixture(t)
	// users who are not sysadmins create groups here (ckan.auth.user_create_groups)
	f.withOptions(Options{Auth: AuthOptions{UserCreateGroups: true}})
	other := f.open(Options{Auth: AuthOptions{UserCreateGroups: true}})
	f.ok("editor", "group_create", map[string]any{"name": "shared-group", "title": "Shared"})
	f.ok("editor", "package_create", map[string]any{"name": "in-group", "owner_org": "tox-lab", "groups": []any{map[string]any{"name": "shared-group"}}})
	got, cerr := callSvc(t, other, Caller{}, "package_search", map[string]any{"fq": "groups:shared-group"})
	if cerr != nil || got.(map[string]any)["count"].(float64) != 1 {
		t.Fatalf("other instance: %v %v", got, cerr)
	}
	if _, cerr := callSvc(t, other, f.users["editor"], "group_patch", map[string]any{"id": "shared-group", "title": "Renamed"}); cerr != nil {
		t.Fatal(cerr)
	}
	if d := f.ok("", "package_show", map[string]any{"id": "in-group"}); d["groups"].([]any)[0].(map[string]any)["title"] != "Renamed" {
		t.Fatalf("first instance does not see the group change: %v", d["groups"])
	}
	restarted := f.open(Options{Auth: AuthOptions{UserCreateGroups: true}})
	got, cerr = callSvc(t, restarted, Caller{}, "group_show", map[string]any{"id": "shared-group"})
	if cerr != nil || got.(map[string]any)["package_count"].(float64) != 1 || got.(map[string]any)["title"] != "Renamed" {
		t.Fatalf("after restart: %v %v", got, cerr)
	}
	if l, _ := callSvc(t, restarted, Caller{}, "organization_list", nil); fmt.Sprint(l) != "[tox-lab]" {
		t.Fatalf("after restart, organizations: %v", l)
	}
	if _, cerr := callSvc(t, other, f.users["sysadmin"], "group_purge", map[string]any{"id": "shared-group"}); cerr != nil {
		t.Fatal(cerr)
	}
	f.fail("", "group_show", map[string]any{"id": "shared-group"}, 404)
	if d := f.ok("", "package_show", map[string]any{"id": "in-group"}); len(d["groups"].([]any)) != 0 {
		t.Fatalf("purge not seen: %v", d["groups"])
	}
}

// TestFarBehindInstanceCatchesUpGroupsAndVocabularies: an instance more
// changes behind than the marker lists re-reads groups and vocabularies
// from the claims, like datasets and organizations.
func TestFarBehindInstanceCatchesUpGroupsAndVocabularies(t *testing.T) {
	f := newFixture(t)
	// users who are not sysadmins create groups here (ckan.auth.user_create_groups)
	f.withOptions(Options{Auth: AuthOptions{UserCreateGroups: true}})
	var logs bytes.Buffer
	var mu sync.Mutex
	other, err := New(t.Context(), f.db, Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, cerr := callSvc(t, other, Caller{}, "package_list", nil); cerr != nil {
		t.Fatal(cerr)
	}
	v := f.ok("sysadmin", "vocabulary_create", map[string]any{"name": "toxin", "tags": []any{map[string]any{"name": "microcystin"}}})
	f.ok("editor", "group_create", map[string]any{"name": "blooms"})
	for i := 0; i < markerKeep; i++ {
		f.ok("editor", "package_create", map[string]any{"name": fmt.Sprintf("far-%02d", i), "owner_org": "tox-lab",
			"groups": []any{map[string]any{"name": "blooms"}}, "tags": []any{map[string]any{"name": "microcystin", "vocabulary_id": v["id"]}}})
	}
	f.ok("sysadmin", "vocabulary_update", map[string]any{"id": "toxin", "name": "cyanotoxin"})
	f.ok("editor", "group_patch", map[string]any{"id": "blooms", "name": "cyanobacteria"})

	got, cerr := callSvc(t, other, Caller{}, "package_search", map[string]any{"fq": "vocab_cyanotoxin:microcystin AND groups:cyanobacteria"})
	if cerr != nil || got.(map[string]any)["count"].(float64) != markerKeep {
		t.Fatalf("instance behind: %v %v", got, cerr)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "caught up from claims") || strings.Count(logs.String(), "catalog loaded") != 1 {
		t.Fatalf("the instance behind did not catch up from the claims (or reloaded everything):\n%s", logs.String())
	}
}
