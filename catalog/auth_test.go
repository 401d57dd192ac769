package catalog

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"toxgate/catalog/ckan"
)

// Roles of the authorization matrix: "" is anonymous, "outsider" a user
// in no organization; member, editor and admin hold those roles in the
// datasets' organization (tox-lab) and in the group tox-group;
// collab-member and collab-editor are collaborators on both datasets in
// those capacities; other-admin administers another organization.
var matrixRoles = []string{"", "outsider", "member", "editor", "admin", "collab-member", "collab-editor", "sysadmin", "other-admin"}

// roleSet is the roles a cell allows.
type roleSet map[string]bool

func roles(names ...string) roleSet {
	s := roleSet{}
	for _, n := range names {
		s[n] = true
	}
	return s
}

var (
	everyone     = roles(matrixRoles...)
	loggedInOnly = roles(matrixRoles[1:]...)
	privReaders  = roles("member", "editor", "admin", "collab-member", "collab-editor", "sysadmin")
	dsEditors    = roles("editor", "admin", "collab-editor", "sysadmin")
	orgAdmins    = roles("admin", "sysadmin")
	sysadmins    = roles("sysadmin")
	groupMembers = roles("member", "editor", "admin", "sysadmin")
	orgCreators  = roles("editor", "admin", "sysadmin")
)

// matrixFixture is the catalog the matrix runs on.
type matrixFixture struct {
	*fixture
	// res and act are each dataset's resource and latest activity, by
	// dataset name ("pub", "priv"); ver its version (named "v1").
	res, act, ver map[string]string
}

func newMatrixFixture(t testing.TB) *matrixFixture {
	f := newFixture(t)
	f.withOptions(Options{AllowCollaborators: true})
	for _, u := range []string{"collab-member", "collab-editor", "other-admin"} {
		f.addUser(u)
	}
	f.ok("sysadmin", "organization_create", map[string]any{"name": "other-lab", "users": []any{map[string]any{"name": "other-admin", "capacity": "admin"}}})
	f.ok("sysadmin", "group_create", map[string]any{"name": "tox-group", "users": []any{
		map[string]any{"name": "admin", "capacity": "admin"}, map[string]any{"name": "editor", "capacity": "editor"},
		map[string]any{"name": "member", "capacity": "member"}}})
	f.ok("sysadmin", "vocabulary_create", map[string]any{"name": "toxins", "tags": []any{map[string]any{"name": "ricin"}}})
	m := &matrixFixture{fixture: f, res: map[string]string{}, act: map[string]string{}, ver: map[string]string{}}
	for _, name := range []string{"pub", "priv"} {
		d := f.ok("editor", "package_create", map[string]any{"name": name, "owner_org": "tox-lab", "private": name == "priv",
			"resources": []any{map[string]any{"url": "http://example.org/" + name + ".csv"}}})
		m.res[name] = d["resources"].([]any)[0].(map[string]any)["id"].(string)
		f.ok("admin", "package_collaborator_create", map[string]any{"id": name, "user_id": "collab-member", "capacity": "member"})
		f.ok("admin", "package_collaborator_create", map[string]any{"id": name, "user_id": "collab-editor", "capacity": "editor"})
		l := f.list("sysadmin", "package_activity_list", map[string]any{"id": name, "limit": 1})
		m.act[name] = l[0].(map[string]any)["id"].(string)
		m.ver[name] = f.ok("editor", "dataset_version_create", map[string]any{"dataset": name, "name": "v1"})["id"].(string)
	}
	return m
}

// matrixCell is one action of the matrix: its data for dataset ds ("pub",
// "priv", or "" for actions on no dataset) and the roles it allows.
type matrixCell struct {
	action string
	data   func(m *matrixFixture, ds string) map[string]any
	// pub and priv are the roles allowed on the public and the private
	// dataset; an action on no dataset has pub only.
	pub, priv roleSet
}

func fixed(data map[string]any) func(*matrixFixture, string) map[string]any {
	return func(*matrixFixture, string) map[string]any { return data }
}

func onDataset(key string) func(*matrixFixture, string) map[string]any {
	return func(_ *matrixFixture, ds string) map[string]any { return map[string]any{key: ds} }
}

func onResource(key string) func(*matrixFixture, string) map[string]any {
	return func(m *matrixFixture, ds string) map[string]any { return map[string]any{key: m.res[ds]} }
}

func onActivity(extra map[string]any) func(*matrixFixture, string) map[string]any {
	return func(m *matrixFixture, ds string) map[string]any {
		d := map[string]any{"id": m.act[ds]}
		for k, v := range extra {
			d[k] = v
		}
		return d
	}
}

// onVersion is the dataset's version by id (key "id") with extra members.
func onVersion(key string, extra map[string]any) func(*matrixFixture, string) map[string]any {
	return func(m *matrixFixture, ds string) map[string]any {
		d := map[string]any{key: m.ver[ds]}
		for k, v := range extra {
			d[k] = v
		}
		return d
	}
}

// asOfVersion is a read of the dataset's resource (key) as of its version
// by name.
func asOfVersion(key string) func(*matrixFixture, string) map[string]any {
	return func(m *matrixFixture, ds string) map[string]any {
		return map[string]any{key: m.res[ds], "version": "v1"}
	}
}

// readRule and editRule are the cells of actions that read or change a
// dataset.
func readRule(action string, data func(*matrixFixture, string) map[string]any) matrixCell {
	return matrixCell{action: action, data: data, pub: everyone, priv: privReaders}
}

func editRule(action string, data func(*matrixFixture, string) map[string]any) matrixCell {
	return matrixCell{action: action, data: data, pub: dsEditors, priv: dsEditors}
}

func siteRule(action string, data map[string]any, allowed roleSet) matrixCell {
	return matrixCell{action: action, data: fixed(data), pub: allowed}
}

// authMatrix is every action of the catalog against every role, on a
// public and a private dataset where the action concerns one (as CKAN's
// ckan/tests/logic/auth/).
var authMatrix = []matrixCell{
	// reading datasets, resources and their activity
	readRule("package_show", onDataset("id")),
	readRule("resource_show", onResource("id")),
	readRule("resource_file", onResource("id")),
	readRule("package_activity_list", onDataset("id")),
	readRule("activity_show", onActivity(nil)),
	// an activity's data and diff need edit rights (public_activity_stream_detail off)
	editRule("activity_show", onActivity(map[string]any{"include_data": true})),
	editRule("activity_data_show", onActivity(nil)),
	editRule("activity_diff", onActivity(map[string]any{"object_type": "package"})),
	readRule("datastore_search", onResource("resource_id")),
	readRule("datastore_info", onResource("resource_id")),
	readRule("xloader_status", onResource("resource_id")),

	// dataset versions: editors make and rename them, readers read them
	editRule("dataset_version_create", func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"dataset": ds, "name": "v2"}
	}),
	readRule("dataset_version_list", onDataset("dataset")),
	readRule("dataset_version_show", onVersion("id", nil)),
	readRule("dataset_version_show", func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"dataset": ds, "version": "v1"}
	}),
	editRule("dataset_version_update", onVersion("id", map[string]any{"description": "x"})),
	editRule("dataset_version_doi_set", onVersion("id", map[string]any{"doi": "10.5072/toxgate-x"})),
	{action: "dataset_version_delete", data: onVersion("id", nil), pub: sysadmins, priv: sysadmins},
	readRule("dataset_version_diff", func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"dataset": ds, "from": "v1"}
	}),
	readRule("package_show", func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"id": ds, "version": "v1"}
	}),
	readRule("resource_show", asOfVersion("id")),
	readRule("resource_file", asOfVersion("id")),
	readRule("dataset_version_for_input", onResource("id")),

	// changing datasets and resources
	editRule("package_update", onDataset("id")),
	editRule("package_patch", onDataset("id")),
	editRule("package_delete", onDataset("id")),
	editRule("package_writable", onDataset("id")),
	editRule("package_revise", func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"match": map[string]any{"id": ds}, "update": map[string]any{"notes": "x"}}
	}),
	editRule("package_resource_reorder", func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"id": ds, "order": []any{}}
	}),
	editRule("resource_create", onDataset("package_id")),
	editRule("resource_update", onResource("id")),
	editRule("resource_patch", onResource("id")),
	editRule("resource_delete", onResource("id")),
	editRule("datastore_create", onResource("resource_id")),
	editRule("datastore_create", func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"resource": map[string]any{"package_id": ds}}
	}),
	editRule("datastore_upsert", onResource("resource_id")),
	editRule("datastore_delete", onResource("resource_id")),
	editRule("datastore_records_delete", onResource("resource_id")),
	editRule("xloader_submit", onResource("resource_id")),
	{action: "dataset_purge", data: onDataset("id"), pub: sysadmins, priv: sysadmins},
	{action: "package_owner_org_update", data: func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"id": ds, "organization_id": "other-lab"}
	}, pub: sysadmins, priv: sysadmins},

	// collaborators
	{action: "package_collaborator_list", data: onDataset("id"), pub: orgAdmins, priv: orgAdmins},
	{action: "package_collaborator_create", data: func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"id": ds, "user_id": "outsider", "capacity": "member"}
	}, pub: orgAdmins, priv: orgAdmins},
	{action: "package_collaborator_delete", data: func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"id": ds, "user_id": "collab-member"}
	}, pub: orgAdmins, priv: orgAdmins},
	siteRule("package_collaborator_list_for_user", map[string]any{"id": "collab-editor"}, roles("collab-editor", "sysadmin")),

	// a dataset in a group: any member of the group who may read it
	{action: "member_create", data: func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"id": "tox-group", "object": ds, "object_type": "package", "capacity": "public"}
	}, pub: groupMembers, priv: groupMembers},
	{action: "member_delete", data: func(_ *matrixFixture, ds string) map[string]any {
		return map[string]any{"id": "tox-group", "object": ds, "object_type": "package"}
	}, pub: groupMembers, priv: groupMembers},

	// creating
	siteRule("package_create", map[string]any{"name": "new-set", "owner_org": "tox-lab"}, orgCreators),
	// without owner_org the caller needs create rights somewhere (the
	// dict is then refused: create_unowned_dataset is off)
	siteRule("package_create", map[string]any{"name": "new-set"}, roles("editor", "admin", "other-admin", "sysadmin")),
	siteRule("organization_create", map[string]any{"name": "new-org"}, sysadmins),
	siteRule("group_create", map[string]any{"name": "new-group"}, sysadmins),

	// organizations
	siteRule("organization_update", map[string]any{"id": "tox-lab"}, orgAdmins),
	siteRule("organization_patch", map[string]any{"id": "tox-lab"}, orgAdmins),
	siteRule("organization_delete", map[string]any{"id": "tox-lab"}, orgAdmins),
	siteRule("organization_member_create", map[string]any{"id": "tox-lab", "username": "outsider", "role": "member"}, orgAdmins),
	siteRule("organization_member_delete", map[string]any{"id": "tox-lab", "username": "member"}, orgAdmins),
	siteRule("member_create", map[string]any{"id": "tox-lab", "object": "outsider", "object_type": "user", "capacity": "member"}, orgAdmins),
	siteRule("bulk_update_private", map[string]any{"org_id": "tox-lab", "datasets": []any{"pub"}}, orgAdmins),
	siteRule("bulk_update_public", map[string]any{"org_id": "tox-lab", "datasets": []any{"pub"}}, orgAdmins),
	siteRule("bulk_update_delete", map[string]any{"org_id": "tox-lab", "datasets": []any{"pub"}}, orgAdmins),
	siteRule("organization_purge", map[string]any{"id": "tox-lab"}, sysadmins),
	// another user's organizations are user details (public_user_details off)
	siteRule("organization_list_for_user", map[string]any{"id": "editor"}, loggedInOnly),

	// groups: tox-group's admin is "admin"
	siteRule("group_update", map[string]any{"id": "tox-group"}, orgAdmins),
	siteRule("group_patch", map[string]any{"id": "tox-group"}, orgAdmins),
	siteRule("group_delete", map[string]any{"id": "tox-group"}, orgAdmins),
	siteRule("group_member_create", map[string]any{"id": "tox-group", "username": "outsider", "role": "member"}, orgAdmins),
	siteRule("group_member_delete", map[string]any{"id": "tox-group", "username": "member"}, orgAdmins),
	siteRule("member_delete", map[string]any{"id": "tox-group", "object": "member", "object_type": "user"}, orgAdmins),
	siteRule("group_purge", map[string]any{"id": "tox-group"}, sysadmins),

	// vocabularies
	siteRule("vocabulary_create", map[string]any{"name": "media"}, sysadmins),
	siteRule("vocabulary_update", map[string]any{"id": "toxins"}, sysadmins),
	siteRule("vocabulary_delete", map[string]any{"id": "toxins"}, sysadmins),
	siteRule("tag_create", map[string]any{"name": "abrin", "vocabulary_id": "toxins"}, sysadmins),
	siteRule("tag_delete", map[string]any{"id": "ricin", "vocabulary_id": "toxins"}, sysadmins),

	// users' activity and details (public_user_details off)
	siteRule("user_activity_list", map[string]any{"id": "editor"}, loggedInOnly),
	siteRule("dashboard_activity_list", nil, loggedInOnly),
	siteRule("user_package_counts", nil, sysadmins),

	// public reads: what they list is cut to what the caller may read
	siteRule("package_list", nil, everyone),
	siteRule("package_search", nil, everyone),
	siteRule("package_autocomplete", map[string]any{"q": "p"}, everyone),
	siteRule("current_package_list_with_resources", nil, everyone),
	siteRule("format_autocomplete", map[string]any{"q": "c"}, everyone),
	siteRule("resource_search", map[string]any{"query": "name:x"}, everyone),
	siteRule("tag_list", nil, everyone),
	siteRule("tag_show", map[string]any{"id": "ricin"}, everyone),
	siteRule("tag_search", map[string]any{"query": "r"}, everyone),
	siteRule("tag_autocomplete", map[string]any{"query": "r"}, everyone),
	siteRule("vocabulary_list", nil, everyone),
	siteRule("vocabulary_show", map[string]any{"id": "toxins"}, everyone),
	siteRule("organization_list", nil, everyone),
	siteRule("organization_show", map[string]any{"id": "tox-lab"}, everyone),
	siteRule("organization_autocomplete", map[string]any{"q": "t"}, everyone),
	siteRule("organization_activity_list", map[string]any{"id": "tox-lab"}, everyone),
	siteRule("member_list", map[string]any{"id": "tox-lab"}, everyone),
	siteRule("member_roles_list", nil, everyone),
	siteRule("group_list", nil, everyone),
	siteRule("group_show", map[string]any{"id": "tox-group"}, everyone),
	siteRule("group_autocomplete", map[string]any{"q": "t"}, everyone),
	siteRule("group_package_show", map[string]any{"id": "tox-group"}, everyone),
	siteRule("group_list_authz", nil, everyone),
	siteRule("group_activity_list", map[string]any{"id": "tox-group"}, everyone),
	siteRule("recently_changed_packages_activity_list", nil, everyone),
	siteRule("license_list", nil, everyone),
	siteRule("status_show", nil, everyone),
	siteRule("help_show", map[string]any{"name": "package_show"}, everyone),
	// each table its statement reads is checked with canRead (datastore.go)
	siteRule("datastore_search_sql", map[string]any{"sql": "SELECT 1"}, everyone),
	// compounds: the resolver is public; structure_search answers only
	// rows of tables the caller may read (chemactions.go)
	siteRule("compound_resolve", map[string]any{"q": "aspirin"}, everyone),
	siteRule("structure_search", map[string]any{"smiles": "CCO"}, everyone),
	siteRule("compound_dictionary_register", map[string]any{"resource_id": "x"}, sysadmins),
}

// caller is the matrix role's identity.
func (m *matrixFixture) caller(role string) Caller { return m.users[role] }

// verdict reads an auth outcome: allowed, or refused (403; 404 where a
// private dataset is hidden from the caller). Anything else fails the test.
func verdict(t *testing.T, what string, err error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	var ce *ckan.Error
	if !errors.As(err, &ce) || (ce.Status != 403 && ce.Status != 404) {
		t.Fatalf("%s: neither allowed nor refused: %v", what, err)
	}
	return false
}

// TestAuthMatrix checks every cell of authMatrix against the auth table
// itself (checkAccess, CKAN's check_access).
func TestAuthMatrix(t *testing.T) {
	m := newMatrixFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	covered := map[string]bool{}
	for _, cell := range authMatrix {
		covered[cell.action] = true
		for _, ds := range []string{"pub", "priv"} {
			allowed := cell.pub
			if ds == "priv" {
				if cell.priv == nil {
					continue
				}
				allowed = cell.priv
			}
			for _, role := range matrixRoles {
				what := cell.action + " on " + ds + " as " + strings.TrimSpace(role+" ")
				if role == "" {
					what += "anonymous"
				}
				got := verdict(t, what, m.svc.checkAccess(ctx, cell.action, m.caller(role), cell.data(m, ds)))
				if got != allowed[role] {
					t.Errorf("%s: allowed %v, want %v", what, got, allowed[role])
				}
			}
		}
	}
	var missing []string
	for name := range actions {
		if !covered[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("actions missing from the matrix: %v", missing)
	}
}

// TestAuthMatrixThroughDo runs a representative part of the matrix
// through Service.Do on the real store: a refused call is a 403 (or the
// 404 of a hidden private dataset) and writes nothing; an allowed one gets
// past authorization.
func TestAuthMatrixThroughDo(t *testing.T) {
	m := newMatrixFixture(t)
	subset := []matrixCell{
		readRule("package_show", onDataset("id")),
		readRule("resource_show", onResource("id")),
		readRule("package_activity_list", onDataset("id")),
		editRule("activity_data_show", onActivity(nil)),
		editRule("package_writable", onDataset("id")),
		editRule("package_patch", func(_ *matrixFixture, ds string) map[string]any {
			return map[string]any{"id": ds, "notes": "patched"}
		}),
		editRule("resource_patch", func(m *matrixFixture, ds string) map[string]any {
			return map[string]any{"id": m.res[ds], "name": "renamed"}
		}),
		{action: "package_collaborator_list", data: onDataset("id"), pub: orgAdmins, priv: orgAdmins},
		{action: "member_create", data: func(_ *matrixFixture, ds string) map[string]any {
			return map[string]any{"id": "tox-group", "object": ds, "object_type": "package", "capacity": "public"}
		}, pub: groupMembers, priv: groupMembers},
		siteRule("organization_patch", map[string]any{"id": "tox-lab", "title": "Toxicology Lab"}, orgAdmins),
		siteRule("group_patch", map[string]any{"id": "tox-group", "title": "Tox group"}, orgAdmins),
		siteRule("organization_create", map[string]any{"name": "refused-org"}, sysadmins),
		siteRule("organization_list_for_user", map[string]any{"id": "editor"}, loggedInOnly),
		siteRule("user_activity_list", map[string]any{"id": "editor"}, loggedInOnly),
	}
	for _, cell := range subset {
		for _, ds := range []string{"pub", "priv"} {
			allowed := cell.pub
			if ds == "priv" {
				if cell.priv == nil {
					continue
				}
				allowed = cell.priv
			}
			for _, role := range matrixRoles {
				what := cell.action + " on " + ds + " as " + role
				if role == "sysadmin" && cell.action == "organization_create" {
					continue // it would create the organization
				}
				_, err := callSvc(t, m.svc, m.caller(role), cell.action, cell.data(m, ds))
				refused := err != nil && (err.Status == 403 || (err.Status == 404 && ds == "priv" && !allowed[role]))
				if refused == allowed[role] {
					t.Errorf("%s: error %v, want allowed %v", what, err, allowed[role])
				}
			}
		}
	}
	// the refused patches changed nothing
	for _, ds := range []string{"pub", "priv"} {
		d := m.ok("sysadmin", "package_show", map[string]any{"id": ds})
		if d["notes"] != "patched" {
			t.Fatalf("%s: the allowed patches did not run: %v", ds, d["notes"])
		}
	}
	if l := m.list("", "organization_list", nil); slices.Contains(l, any("refused-org")) {
		t.Fatal("a refused organization_create created the organization")
	}
}

// TestAuthTableCoversEveryAction: every action the catalog registers
// (with a DataStore or without) has an auth function, and the table names
// no action that does not exist.
func TestAuthTableCoversEveryAction(t *testing.T) {
	for name := range actions {
		if e, ok := authTable[name]; !ok || e.fn == nil {
			t.Errorf("action %s has no auth function", name)
		}
	}
	for name := range authTable {
		if _, ok := actions[name]; !ok {
			t.Errorf("auth function for %s, which is no action", name)
		}
	}
	f := newFixture(t)
	for _, a := range f.svc.Actions() {
		if _, ok := authTable[a.Name]; !ok {
			t.Errorf("Service.Actions lists %s without an auth function", a.Name)
		}
	}
}

// An action without an auth function is refused, not run.
func TestActionWithoutAuthFunctionRefused(t *testing.T) {
	f := newFixture(t)
	ran := false
	actions["test_unauthorized_action"] = actionDef{Action: Action{Name: "test_unauthorized_action", GET: true},
		run: func(context.Context, *Service, *Request) (any, error) { ran = true; return true, nil }}
	defer delete(actions, "test_unauthorized_action")
	if e := f.fail("sysadmin", "test_unauthorized_action", nil, 403); e.Message != "Access denied" || ran {
		t.Fatalf("%v, ran %v", e, ran)
	}
}

// BenchmarkCheckAccess is what authorization adds to package_show and
// package_search on 10,000 datasets (compare BenchmarkShowDomain and
// BenchmarkSearchDomain, whole requests).
func BenchmarkCheckAccess(b *testing.B) {
	svc := benchCatalog(b)
	ctx := context.Background()
	for _, action := range []string{"package_show", "package_search"} {
		b.Run(action, func(b *testing.B) {
			data := map[string]any{"id": "dataset-01234"}
			b.ReportAllocs()
			for range b.N {
				if err := svc.checkAccess(ctx, action, Caller{}, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
