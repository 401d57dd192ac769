package catalog

import (
	"testing"
)

// A collaborator who administers another organization cannot take a
// dataset there: moving a dataset out of its organization needs edit
// rights in that organization (ckan.auth.allow_collaborators_to_change_owner_org
// off), by package_patch, package_update and package_revise alike.
func TestCollaboratorCannotMoveDatasetOut(t *testing.T) {
	f := newFixture(t)
	f.withOptions(Options{AllowCollaborators: true})
	f.addUser("mover")
	d := f.ok("editor", "package_create", map[string]any{"name": "secret", "owner_org": "tox-lab", "private": true})
	id := d["id"].(string)
	f.ok("sysadmin", "organization_create", map[string]any{"name": "b-lab", "users": []any{
		map[string]any{"name": "mover", "capacity": "admin"}, map[string]any{"name": "member", "capacity": "admin"},
		map[string]any{"name": "editor", "capacity": "editor"}}})
	f.ok("admin", "package_collaborator_create", map[string]any{"id": "secret", "user_id": "mover", "capacity": "editor"})
	// a member of tox-lab may not edit there; as editor collaborator they may edit the dataset
	f.ok("admin", "package_collaborator_create", map[string]any{"id": "secret", "user_id": "member", "capacity": "editor"})

	const moveRefused = `{"__type":"Validation Error","owner_org":["You cannot move this dataset to another organization"]}`
	for _, who := range []string{"mover", "member"} {
		if e := f.fail(who, "package_patch", map[string]any{"id": "secret", "owner_org": "b-lab"}, 409); errJSON(e) != moveRefused {
			t.Fatalf("%s package_patch: %s", who, errJSON(e))
		}
		full := f.ok(who, "package_show", map[string]any{"id": "secret"})
		full["owner_org"] = "b-lab"
		if e := f.fail(who, "package_update", full, 409); errJSON(e) != moveRefused {
			t.Fatalf("%s package_update: %s", who, errJSON(e))
		}
		if e := f.fail(who, "package_revise", map[string]any{"match": map[string]any{"id": id}, "update": map[string]any{"owner_org": "b-lab"}}, 409); errJSON(e) != moveRefused {
			t.Fatalf("%s package_revise: %s", who, errJSON(e))
		}
		// a bulk update of b-lab cannot reach it either
		f.fail(who, "bulk_update_public", map[string]any{"org_id": "b-lab", "datasets": []any{id}}, 409)
		// they still edit it
		f.ok(who, "package_patch", map[string]any{"id": "secret", "notes": "edited by " + who})
	}
	// tox-lab keeps it: its members still read it, and it is still private
	if d := f.ok("member", "package_show", map[string]any{"id": "secret"}); d["owner_org"] != f.orgID || d["private"] != true {
		t.Fatalf("moved: %v %v", d["owner_org"], d["private"])
	}

	// an editor of both organizations moves it (and back)
	if d := f.ok("editor", "package_patch", map[string]any{"id": "secret", "owner_org": "b-lab"}); d["organization"].(map[string]any)["name"] != "b-lab" {
		t.Fatalf("editor's move: %v", d["organization"])
	}
	f.ok("editor", "package_patch", map[string]any{"id": "secret", "owner_org": "tox-lab"})

	// with allow_collaborators_to_change_owner_org an editor collaborator may
	f.withOptions(Options{AllowCollaborators: true, Auth: AuthOptions{AllowCollaboratorsToChangeOwnerOrg: true}})
	f.ok("mover", "package_patch", map[string]any{"id": "secret", "owner_org": "b-lab"})
	// but never into an organization where they may not create datasets
	if e := f.fail("mover", "package_patch", map[string]any{"id": "secret", "owner_org": "tox-lab"}, 409); errJSON(e) != `{"__type":"Validation Error","owner_org":["You cannot add a dataset to this organization"]}` {
		t.Fatal(errJSON(e))
	}
}

// The ckan.auth.* switches of a shared deployment, each closed by default.
func TestAuthSwitches(t *testing.T) {
	f := newFixture(t)

	// user_create_organizations, user_create_groups
	if e := f.fail("outsider", "organization_create", map[string]any{"name": "mine"}, 403); e.Message != "Access denied: User outsider not authorized to create organizations" {
		t.Fatal(e.Message)
	}
	if e := f.fail("editor", "group_create", map[string]any{"name": "mine"}, 403); e.Message != "Access denied: User editor not authorized to create groups" {
		t.Fatal(e.Message)
	}
	f.ok("sysadmin", "group_create", map[string]any{"name": "sys-group"})
	f.withOptions(Options{Auth: AuthOptions{UserCreateOrganizations: true, UserCreateGroups: true}})
	if o := f.ok("outsider", "organization_create", map[string]any{"name": "mine"}); o["users"].([]any)[0].(map[string]any)["capacity"] != "admin" {
		t.Fatalf("creator's capacity: %v", o["users"])
	}
	f.ok("editor", "group_create", map[string]any{"name": "my-group"})

	// create_unowned_dataset off: an organization is required
	f.withOptions(Options{})
	if e := f.fail("editor", "package_create", map[string]any{"name": "loose"}, 409); errJSON(e) != `{"__type":"Validation Error","owner_org":["An organization must be provided"]}` {
		t.Fatal(errJSON(e))
	}
	if e := f.fail("member", "package_create", map[string]any{"name": "loose"}, 403); e.Message != "Access denied: User member not authorized to create packages" {
		t.Fatal(e.Message)
	}
	// on: any logged-in user creates one without organization, which only
	// its creator (and sysadmins) edit
	f.withOptions(Options{Auth: AuthOptions{CreateUnownedDataset: true}})
	d := f.ok("member", "package_create", map[string]any{"name": "loose"})
	if d["owner_org"] != nil && d["owner_org"] != "" {
		t.Fatalf("owner_org: %v", d["owner_org"])
	}
	f.ok("member", "package_patch", map[string]any{"id": "loose", "notes": "mine"})
	f.fail("outsider", "package_patch", map[string]any{"id": "loose", "notes": "not mine"}, 403)
	if e := f.fail("member", "package_create", map[string]any{"name": "hidden", "private": true}, 409); errJSON(e) != `{"__type":"Validation Error","private":["Datasets with no organization can't be private."]}` {
		t.Fatal(errJSON(e))
	}
	// its creator may not put it in an organization where they may not create datasets
	if e := f.fail("member", "package_patch", map[string]any{"id": "loose", "owner_org": "tox-lab"}, 409); errJSON(e) != `{"__type":"Validation Error","owner_org":["You cannot add a dataset to this organization"]}` {
		t.Fatal(errJSON(e))
	}
	// an organization's editor may take one of its datasets out of it
	f.ok("editor", "package_create", map[string]any{"name": "leaving", "owner_org": "tox-lab"})
	f.ok("editor", "package_patch", map[string]any{"id": "leaving", "owner_org": ""})
	// anonymous callers create none without anon_create_dataset
	if e := f.fail("", "package_create", map[string]any{"name": "anon-set"}, 403); e.Message != "Access denied: User  not authorized to create packages" {
		t.Fatal(e.Message)
	}
	f.withOptions(Options{Auth: AuthOptions{CreateUnownedDataset: true, AnonCreateDataset: true}})
	f.ok("", "package_create", map[string]any{"name": "anon-set"})
	f.fail("", "package_patch", map[string]any{"id": "anon-set", "notes": "x"}, 403)
	f.fail("outsider", "package_patch", map[string]any{"id": "anon-set", "notes": "x"}, 403)
	f.ok("sysadmin", "package_patch", map[string]any{"id": "anon-set", "notes": "x"})
	// anon_create_dataset alone does not open it
	f.withOptions(Options{Auth: AuthOptions{AnonCreateDataset: true}})
	f.fail("", "package_create", map[string]any{"name": "anon-two"}, 403)

	// public_user_details off: anonymous callers see no members, no
	// user's activity and no other user's organizations
	f.withOptions(Options{})
	if o := f.ok("", "organization_show", map[string]any{"id": "tox-lab"}); o["users"] != nil {
		t.Fatalf("anonymous sees the members: %v", o["users"])
	}
	if o := f.ok("outsider", "organization_show", map[string]any{"id": "tox-lab"}); len(o["users"].([]any)) != 3 {
		t.Fatalf("logged in: %v", o["users"])
	}
	f.fail("", "user_activity_list", map[string]any{"id": "editor"}, 403)
	f.fail("", "organization_list_for_user", map[string]any{"id": "editor"}, 403)
	f.withOptions(Options{Auth: AuthOptions{PublicUserDetails: true}})
	if o := f.ok("", "organization_show", map[string]any{"id": "tox-lab"}); len(o["users"].([]any)) != 3 {
		t.Fatalf("public_user_details: %v", o["users"])
	}
	f.list("", "user_activity_list", map[string]any{"id": "editor"})
	if l := f.list("", "organization_list_for_user", map[string]any{"id": "editor"}); len(l) != 1 {
		t.Fatalf("organization_list_for_user: %v", l)
	}

	// public_activity_stream_detail off: an activity's data for editors
	f.withOptions(Options{})
	f.ok("editor", "package_create", map[string]any{"name": "open-set", "owner_org": "tox-lab"})
	act := f.list("editor", "package_activity_list", map[string]any{"id": "open-set"})[0].(map[string]any)["id"]
	f.ok("outsider", "activity_show", map[string]any{"id": act})
	if e := f.fail("outsider", "activity_data_show", map[string]any{"id": act}, 403); e.Message != "Access denied: User outsider not authorized to edit package "+f.ok("", "package_show", map[string]any{"id": "open-set"})["id"].(string) {
		t.Fatal(e.Message)
	}
	f.fail("outsider", "activity_show", map[string]any{"id": act, "include_data": true}, 403)
	f.ok("editor", "activity_data_show", map[string]any{"id": act})
	f.withOptions(Options{Auth: AuthOptions{PublicActivityStreamDetail: true}})
	f.ok("outsider", "activity_data_show", map[string]any{"id": act})
	f.ok("", "activity_show", map[string]any{"id": act, "include_data": true})
}
