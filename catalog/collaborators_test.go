package catalog

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"toxgate/gateway/identity"
)

// addUser stores one more user as the gateway core would.
func (f *fixture) addUser(name string) {
	f.t.Helper()
	id := newID()
	err := identity.NewStore(f.db).InsertUser(context.Background(), &identity.User{ID: id, Name: name, Email: name + "@example.org",
		EmailKey: name + "@example.org", State: identity.StateActive, Roles: []string{}, Created: time.Now()})
	if err != nil {
		f.t.Fatal(err)
	}
	f.users[name] = Caller{UserID: id, Name: name}
}

func TestCollaborators(t *testing.T) {
	f := newFixture(t)
	f.withOptions(Options{AllowCollaborators: true})
	f.addUser("reader")
	f.addUser("writer")
	d := f.ok("editor", "package_create", map[string]any{"name": "secret", "owner_org": "tox-lab", "private": true,
		"resources": []any{map[string]any{"url": "http://example.org/a.csv"}}})
	id := d["id"].(string)
	resID := d["resources"].([]any)[0].(map[string]any)["id"].(string)

	// documented errors
	if e := f.fail("admin", "package_collaborator_create", map[string]any{"id": "secret"}, 409); errJSON(e) != `{"__type":"Validation Error","capacity":["Missing value"],"user_id":["Missing value"]}` {
		t.Fatal(errJSON(e))
	}
	if e := f.fail("admin", "package_collaborator_create", map[string]any{"id": "secret", "user_id": "reader", "capacity": "admin"}, 409); errJSON(e) != `{"__type":"Validation Error","message":"Role must be one of \"editor, member\""}` {
		t.Fatal(errJSON(e))
	}
	if e := f.fail("", "package_collaborator_create", map[string]any{"id": "secret", "user_id": "reader", "capacity": "member"}, 403); e.Message != "Access denied: Action package_collaborator_create requires an authenticated user" {
		t.Fatal(e.Message)
	}
	// an org editor may not manage collaborators (org admins do)
	if e := f.fail("editor", "package_collaborator_create", map[string]any{"id": "secret", "user_id": "reader", "capacity": "member"}, 403); e.Message != "Access denied: User editor not authorized to add collaborators to this dataset" {
		t.Fatal(e.Message)
	}
	if e := f.fail("admin", "package_collaborator_create", map[string]any{"id": "nope", "user_id": "reader", "capacity": "member"}, 404); e.Message != "Not found: Dataset not found" {
		t.Fatal(e.Message)
	}
	if e := f.fail("admin", "package_collaborator_create", map[string]any{"id": "secret", "user_id": "ghost", "capacity": "member"}, 404); e.Message != "Not found: User not found" {
		t.Fatal(e.Message)
	}

	// before: neither reads the private dataset
	f.fail("reader", "package_show", map[string]any{"id": "secret"}, 403)
	f.fail("writer", "package_show", map[string]any{"id": "secret"}, 403)

	c := f.ok("admin", "package_collaborator_create", map[string]any{"id": "secret", "user_id": "reader", "capacity": "member"})
	if c["package_id"] != id || c["user_id"] != f.users["reader"].UserID || c["capacity"] != "member" || c["modified"] == nil {
		t.Fatalf("create: %v", c)
	}
	// by name first, then the capacity changes in place
	f.ok("admin", "package_collaborator_create", map[string]any{"id": id, "user_id": "writer", "capacity": "member"})
	f.ok("admin", "package_collaborator_create", map[string]any{"id": id, "user_id": f.users["writer"].UserID, "capacity": "editor"})

	list := f.list("admin", "package_collaborator_list", map[string]any{"id": "secret"})
	if len(list) != 2 {
		t.Fatalf("list: %v", list)
	}
	if l := f.list("admin", "package_collaborator_list", map[string]any{"id": "secret", "capacity": "editor"}); len(l) != 1 || l[0].(map[string]any)["user_id"] != f.users["writer"].UserID {
		t.Fatalf("list editors: %v", l)
	}
	if e := f.fail("admin", "package_collaborator_list", map[string]any{"id": "secret", "capacity": "boss"}, 409); e.Fields["message"] != `Capacity must be one of "editor, member"` {
		t.Fatal(errJSON(e))
	}
	if e := f.fail("member", "package_collaborator_list", map[string]any{"id": "secret"}, 403); e.Message != "Access denied: User member not authorized to list collaborators from this dataset" {
		t.Fatal(e.Message)
	}
	f.fail("reader", "package_collaborator_list", map[string]any{"id": "secret"}, 403)

	// a member collaborator reads, an editor collaborator also edits
	f.ok("reader", "package_show", map[string]any{"id": "secret"})
	f.ok("reader", "resource_show", map[string]any{"id": resID})
	if e := f.fail("reader", "package_patch", map[string]any{"id": "secret", "notes": "x"}, 403); e.Message != "Access denied: User reader not authorized to edit package "+id {
		t.Fatal(e.Message)
	}
	f.fail("reader", "resource_patch", map[string]any{"id": resID, "name": "x"}, 403)
	if p := f.ok("writer", "package_patch", map[string]any{"id": "secret", "notes": "edited by a collaborator"}); p["notes"] != "edited by a collaborator" {
		t.Fatalf("patch: %v", p)
	}
	f.ok("writer", "resource_patch", map[string]any{"id": resID, "name": "renamed"})
	f.ok("writer", "resource_create", map[string]any{"package_id": "secret", "url": "http://example.org/b.csv"})
	// package_update keeps the collaborators
	f.ok("writer", "package_update", map[string]any{"id": id, "name": "secret", "owner_org": "tox-lab", "private": true})
	f.ok("reader", "package_show", map[string]any{"id": "secret"})
	// an editor collaborator may not move the dataset to another org
	f.ok("sysadmin", "organization_create", map[string]any{"name": "other-lab"})
	if e := f.fail("writer", "package_patch", map[string]any{"id": "secret", "owner_org": "other-lab"}, 409); errJSON(e) != `{"__type":"Validation Error","owner_org":["You cannot add a dataset to this organization"]}` {
		t.Fatal(errJSON(e))
	}
	// nor manage collaborators
	f.fail("writer", "package_collaborator_delete", map[string]any{"id": "secret", "user_id": "reader"}, 403)

	// package_search with include_private lists it for collaborators only
	search := func(user string) float64 {
		return f.ok(user, "package_search", map[string]any{"include_private": true})["count"].(float64)
	}
	if search("reader") != 1 || search("writer") != 1 || search("outsider") != 0 {
		t.Fatalf("search: reader %v writer %v outsider %v", search("reader"), search("writer"), search("outsider"))
	}

	// list for user: oneself or a sysadmin
	mine := f.list("reader", "package_collaborator_list_for_user", map[string]any{"id": "reader"})
	if len(mine) != 1 || mine[0].(map[string]any)["package_id"] != id || mine[0].(map[string]any)["capacity"] != "member" {
		t.Fatalf("list_for_user: %v", mine)
	}
	if l := f.list("sysadmin", "package_collaborator_list_for_user", map[string]any{"id": f.users["writer"].UserID, "capacity": "member"}); len(l) != 0 {
		t.Fatalf("list_for_user capacity: %v", l)
	}
	if e := f.fail("outsider", "package_collaborator_list_for_user", map[string]any{"id": "reader"}, 403); e.Message != "Access denied" {
		t.Fatal(e.Message)
	}

	// another process on the same store sees the collaborators at once
	first := f.svc
	f.withOptions(Options{AllowCollaborators: true})
	second := f.svc
	f.svc = first
	if _, e := callSvc(t, second, f.users["reader"], "package_show", map[string]any{"id": "secret"}); e != nil {
		t.Fatalf("second process: %v", e)
	}

	// removal takes the access away
	if e := f.fail("admin", "package_collaborator_delete", map[string]any{"id": "secret", "user_id": "outsider"}, 404); e.Message != "Not found: User outsider is not a collaborator on this package" {
		t.Fatal(e.Message)
	}
	f.ok("admin", "package_collaborator_delete", map[string]any{"id": "secret", "user_id": "reader"})
	f.fail("reader", "package_show", map[string]any{"id": "secret"}, 403)
	if _, e := callSvc(t, second, f.users["reader"], "package_show", map[string]any{"id": "secret"}); e == nil || e.Status != 403 {
		t.Fatalf("second process after removal: %v", e)
	}
	if search("reader") != 0 {
		t.Fatal("a removed collaborator still finds the dataset")
	}
	if l := f.list("reader", "package_collaborator_list_for_user", map[string]any{"id": "reader"}); len(l) != 0 {
		t.Fatalf("after delete: %v", l)
	}

	// collaborators off: the actions refuse and the capacities grant nothing
	f.withOptions(Options{})
	f.fail("writer", "package_show", map[string]any{"id": "secret"}, 403)
	if e := f.fail("admin", "package_collaborator_list", map[string]any{"id": "secret"}, 409); errJSON(e) != `{"__type":"Validation Error","message":"Dataset collaborators not enabled"}` {
		t.Fatal(errJSON(e))
	}
}

func TestAdminCollaborators(t *testing.T) {
	f := newFixture(t)
	f.withOptions(Options{AllowCollaborators: true, AllowAdminCollaborators: true})
	f.addUser("boss")
	f.ok("editor", "package_create", map[string]any{"name": "shared", "owner_org": "tox-lab", "private": true})
	f.ok("admin", "package_collaborator_create", map[string]any{"id": "shared", "user_id": "boss", "capacity": "admin"})
	// an admin collaborator edits and manages the collaborators
	f.ok("boss", "package_patch", map[string]any{"id": "shared", "notes": "x"})
	f.ok("boss", "package_collaborator_create", map[string]any{"id": "shared", "user_id": "outsider", "capacity": "member"})
	if l := f.list("boss", "package_collaborator_list", map[string]any{"id": "shared"}); len(l) != 2 {
		t.Fatalf("list: %v", l)
	}
	f.ok("outsider", "package_show", map[string]any{"id": "shared"})
	f.ok("boss", "package_collaborator_delete", map[string]any{"id": "shared", "user_id": "outsider"})
	f.fail("outsider", "package_show", map[string]any{"id": "shared"}, 403)

	// a deleted user is no longer listed (CKAN's user_delete drops them)
	if _, err := identity.NewStore(f.db).UpdateUser(context.Background(), f.users["boss"].UserID,
		bson.M{"state": identity.StateDeleted}); err != nil {
		t.Fatal(err)
	}
	if l := f.list("sysadmin", "package_collaborator_list", map[string]any{"id": "shared"}); len(l) != 0 {
		t.Fatalf("deleted user listed: %v", l)
	}
	if l := f.list("sysadmin", "package_collaborator_list_for_user", map[string]any{"id": "boss"}); len(l) != 0 {
		t.Fatalf("deleted user's list: %v", l)
	}
}
