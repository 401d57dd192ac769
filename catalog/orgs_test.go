package catalog

import (
	"fmt"
	"testing"
)

func TestOrganizations(t *testing.T) {
	f := newFixture(t)
	// users who are not sysadmins create organizations, and anonymous
	// callers see the members here (ckan.auth.user_create_organizations,
	// public_user_details)
	f.withOptions(Options{Auth: AuthOptions{UserCreateOrganizations: true, PublicUserDetails: true}})
	f.ok("outsider", "organization_create", map[string]any{"name": "b-lab", "title": "Alpha", "description": "zebrafish"})
	f.ok("outsider", "organization_create", map[string]any{"name": "a-lab", "title": "Beta"})
	e := f.fail("outsider", "organization_create", map[string]any{"name": "a-lab"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","name":["Group name already exists in database"]}` {
		t.Fatal(errJSON(e))
	}
	f.ok("editor", "package_create", map[string]any{"name": "one", "owner_org": "tox-lab"})
	f.ok("editor", "package_create", map[string]any{"name": "two", "owner_org": "tox-lab", "private": true})

	// list: default sort by title; names; all_fields; sort name; limit/offset; q
	if l := f.list("", "organization_list", nil); fmt.Sprint(l) != "[b-lab a-lab tox-lab]" {
		t.Fatalf("by title: %v", l)
	}
	if l := f.list("", "organization_list", map[string]any{"sort": "name asc", "limit": "2", "offset": "1"}); fmt.Sprint(l) != "[b-lab tox-lab]" {
		t.Fatalf("sort/limit/offset: %v", l)
	}
	if l := f.list("", "organization_list", map[string]any{"q": "ZEBRA"}); fmt.Sprint(l) != "[b-lab]" {
		t.Fatalf("q: %v", l)
	}
	all := f.list("", "organization_list", map[string]any{"all_fields": "true", "sort": "package_count desc"})
	first := all[0].(map[string]any)
	if first["name"] != "tox-lab" || first["package_count"].(float64) != 1 || first["num_followers"].(float64) != 0 {
		t.Fatalf("all_fields: %v", first)
	}
	e = f.fail("", "organization_list", map[string]any{"sort": "created"}, 409)
	if errJSON(e) != "{\"__type\":\"Validation Error\",\"message\":\"Cannot sort by field `created`\"}" {
		t.Fatal(errJSON(e))
	}

	// show: member sees the private dataset, anonymous does not; users with capacity
	show := f.ok("member", "organization_show", map[string]any{"id": "tox-lab", "include_datasets": true})
	if show["package_count"].(float64) != 2 || len(show["packages"].([]any)) != 2 {
		t.Fatalf("member show: %v", show["package_count"])
	}
	show = f.ok("", "organization_show", map[string]any{"id": f.orgID, "include_datasets": "true"})
	if show["package_count"].(float64) != 1 || len(show["users"].([]any)) != 3 {
		t.Fatalf("anonymous show: %v %v", show["package_count"], show["users"])
	}
	for _, u := range show["users"].([]any) {
		um := u.(map[string]any)
		if _, has := um["email"]; has || um["capacity"] == nil {
			t.Fatalf("user dict: %v", um)
		}
	}
	f.fail("", "organization_show", map[string]any{"id": "nope"}, 404)

	// update / patch / delete need org admin
	e = f.fail("editor", "organization_patch", map[string]any{"id": "tox-lab", "title": "x"}, 403)
	if e.Message != "Access denied: User editor not authorized to edit organization "+f.orgID {
		t.Fatal(e.Message)
	}
	if o := f.ok("admin", "organization_patch", map[string]any{"id": "tox-lab", "description": "GLP lab"}); o["title"] != "Toxicology Lab" || o["description"] != "GLP lab" {
		t.Fatalf("patch: %v", o)
	}
	if o := f.ok("admin", "organization_update", map[string]any{"id": "tox-lab", "name": "tox-lab", "title": "Tox"}); o["description"] != "" || o["title"] != "Tox" {
		t.Fatalf("update replaces: %v", o)
	}
	// the org title shows in datasets at once
	if d := f.ok("", "package_show", map[string]any{"id": "one"}); d["organization"].(map[string]any)["title"] != "Tox" {
		t.Fatal("dataset organization not refreshed")
	}
	e = f.fail("admin", "organization_delete", map[string]any{"id": "tox-lab"}, 409)
	if e.Message != "Organization cannot be deleted while it still has datasets" {
		t.Fatal(e.Message)
	}
	f.ok("outsider", "organization_delete", map[string]any{"id": "a-lab"})
	if l := f.list("", "organization_list", nil); fmt.Sprint(l) != "[b-lab tox-lab]" {
		t.Fatalf("after delete: %v", l)
	}

	// members
	m := f.ok("admin", "organization_member_create", map[string]any{"id": "tox-lab", "username": "outsider", "role": "editor"})
	if m["table_name"] != "user" || m["capacity"] != "editor" || m["group_id"] != f.orgID || m["table_id"] != f.users["outsider"].UserID {
		t.Fatalf("member_create: %v", m)
	}
	f.ok("outsider", "package_create", map[string]any{"name": "by-outsider", "owner_org": "tox-lab"})
	f.ok("admin", "organization_member_create", map[string]any{"id": "tox-lab", "username": f.users["outsider"].UserID, "role": "member"})
	f.fail("outsider", "package_create", map[string]any{"name": "by-outsider-2", "owner_org": "tox-lab"}, 403)
	e = f.fail("admin", "organization_member_create", map[string]any{"id": "tox-lab", "username": "ghost", "role": "member"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","message":"User ghost does not exist."}` {
		t.Fatal(errJSON(e))
	}
	f.fail("admin", "organization_member_create", map[string]any{"id": "tox-lab", "username": "outsider", "role": "boss"}, 409)
	e = f.fail("admin", "organization_member_create", map[string]any{"id": "no-org", "username": "outsider", "role": "member"}, 404)
	if e.Message != "Not found: Organization not found" {
		t.Fatal(e.Message)
	}
	f.fail("editor", "organization_member_create", map[string]any{"id": "tox-lab", "username": "outsider", "role": "admin"}, 403)
	f.fail("admin", "organization_member_create", map[string]any{"id": "tox-lab", "username": "admin", "role": "member"}, 403)

	ml := f.list("", "member_list", map[string]any{"id": "tox-lab", "object_type": "user"})
	if len(ml) != 4 {
		t.Fatalf("member_list: %v", ml)
	}
	if ml := f.list("", "member_list", map[string]any{"id": "tox-lab", "object_type": "user", "capacity": "admin"}); len(ml) != 1 || ml[0].([]any)[0] != f.users["admin"].UserID {
		t.Fatalf("member_list admin: %v", ml)
	}
	f.ok("admin", "organization_member_delete", map[string]any{"id": "tox-lab", "username": "outsider"})
	if ml := f.list("", "member_list", map[string]any{"id": "tox-lab", "object_type": "user"}); len(ml) != 3 {
		t.Fatalf("after member_delete: %v", ml)
	}

	// organization_list_for_user
	if l := f.list("editor", "organization_list_for_user", map[string]any{"permission": "create_dataset"}); len(l) != 1 || l[0].(map[string]any)["capacity"] != "editor" {
		t.Fatalf("for editor: %v", l)
	}
	if l := f.list("member", "organization_list_for_user", map[string]any{"permission": "create_dataset"}); len(l) != 0 {
		t.Fatalf("member cannot create: %v", l)
	}
	if l := f.list("member", "organization_list_for_user", nil); len(l) != 1 {
		t.Fatalf("member manage_group: %v", l)
	}
	if l := f.list("sysadmin", "organization_list_for_user", nil); len(l) != 2 {
		t.Fatalf("sysadmin gets all: %v", l)
	}
	if l := f.list("", "organization_list_for_user", map[string]any{"id": "editor"}); len(l) != 1 {
		t.Fatalf("by id param: %v", l)
	}
}
