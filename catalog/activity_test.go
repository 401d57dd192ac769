package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/store"
)

// types lists the activity_type of each activity of a list result.
func types(l []any) []string {
	out := make([]string, len(l))
	for i, a := range l {
		out[i] = a.(map[string]any)["activity_type"].(string)
	}
	return out
}

func sameList(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

func TestActivityOfDatasetWrites(t *testing.T) {
	f := newFixture(t)
	// anonymous callers list user activity here (ckan.auth.public_user_details)
	f.withOptions(Options{Auth: AuthOptions{PublicUserDetails: true}})
	f.ok("editor", "package_create", map[string]any{"name": "herg-screen", "owner_org": "tox-lab", "title": "hERG screen"})
	f.ok("editor", "package_patch", map[string]any{"id": "herg-screen", "notes": "patch-clamp"})
	f.ok("admin", "resource_create", map[string]any{"package_id": "herg-screen", "url": "http://example.org/a.csv", "name": "a"})
	f.ok("admin", "package_update", map[string]any{"id": "herg-screen", "name": "herg-screen", "owner_org": "tox-lab", "title": "hERG"})
	f.ok("admin", "package_delete", map[string]any{"id": "herg-screen"})
	f.ok("admin", "package_delete", map[string]any{"id": "herg-screen"}) // already deleted: no second activity

	l := f.list("member", "package_activity_list", map[string]any{"id": "herg-screen"})
	sameList(t, "types", types(l), "deleted package", "changed package", "changed package", "changed package", "new package")
	first := l[4].(map[string]any)
	if first["user_id"] != f.users["editor"].UserID || first["object_id"] == "" {
		t.Fatalf("new package activity: %v", first)
	}
	data := first["data"].(map[string]any)
	if data["actor"] != "editor" || data["package"].(map[string]any)["title"] != "hERG screen" {
		t.Fatalf("new package data: %v", data)
	}
	if labels := first["permission_labels"].([]any); len(labels) != 1 || labels[0] != "public" {
		t.Fatalf("labels: %v", labels)
	}
	res := l[2].(map[string]any)["data"].(map[string]any)["package"].(map[string]any)["resources"].([]any)
	if len(res) != 1 || res[0].(map[string]any)["name"] != "a" {
		t.Fatalf("resource_create activity holds %v", res)
	}
	if ts := first["timestamp"].(string); !strings.HasPrefix(ts, time.Now().UTC().Format("2006-01-02")) {
		t.Fatalf("timestamp %q", ts)
	}
	deleted := l[0].(map[string]any)
	if labels := deleted["permission_labels"].([]any); labels[0] != "member-"+f.orgID {
		t.Fatalf("deleted package labels: %v", labels)
	}
	// a deleted dataset's activity: its org's members, as package_show
	f.fail("", "package_activity_list", map[string]any{"id": "herg-screen"}, 403)
	f.fail("outsider", "package_activity_list", map[string]any{"id": "herg-screen"}, 403)
	f.fail("", "package_activity_list", map[string]any{"id": "nope"}, 404)
	if e := f.fail("", "package_activity_list", map[string]any{}, 409); errJSON(e) != `{"__type":"Validation Error","id":["Missing value"]}` {
		t.Fatalf("missing id: %s", errJSON(e))
	}

	// recently changed: newest first, CKAN's "*package" types
	rc := f.list("", "recently_changed_packages_activity_list", nil)
	sameList(t, "recently changed (anonymous: public ones)", types(rc), "changed package", "changed package", "changed package", "new package")
	rc = f.list("sysadmin", "recently_changed_packages_activity_list", map[string]any{"limit": 2})
	sameList(t, "recently changed, limit 2", types(rc), "deleted package", "changed package")

	u := f.list("", "user_activity_list", map[string]any{"id": "editor"})
	sameList(t, "user_activity_list editor", types(u), "changed package", "new package")
	f.fail("", "user_activity_list", map[string]any{"id": "nobody"}, 404)
}

func TestActivityPrivateDatasets(t *testing.T) {
	f := newFixture(t)
	// anonymous callers list user activity here (ckan.auth.public_user_details)
	f.withOptions(Options{Auth: AuthOptions{PublicUserDetails: true}})
	f.ok("admin", "package_create", map[string]any{"name": "secret", "owner_org": "tox-lab", "private": true})
	f.ok("admin", "package_create", map[string]any{"name": "open", "owner_org": "tox-lab"})
	f.ok("admin", "package_patch", map[string]any{"id": "secret", "private": false})

	f.fail("", "package_activity_list", map[string]any{"id": "open-not"}, 404)
	// now public: anyone may list it, but the activity recorded while it
	// was private keeps its labels and stays hidden from outsiders
	sameList(t, "outsider", types(f.list("outsider", "package_activity_list", map[string]any{"id": "secret"})), "changed package")
	sameList(t, "member", types(f.list("member", "package_activity_list", map[string]any{"id": "secret"})), "changed package", "new package")

	f.ok("admin", "package_patch", map[string]any{"id": "secret", "private": true})
	f.fail("", "package_activity_list", map[string]any{"id": "secret"}, 403)
	f.fail("outsider", "package_activity_list", map[string]any{"id": "secret"}, 403)
	sameList(t, "member after", types(f.list("member", "package_activity_list", map[string]any{"id": "secret"})),
		"changed package", "changed package", "new package")

	// site-wide lists filter by labels
	sameList(t, "anonymous recently changed", types(f.list("", "recently_changed_packages_activity_list", nil)), "changed package", "new package")
	sameList(t, "member recently changed", types(f.list("member", "recently_changed_packages_activity_list", nil)),
		"changed package", "changed package", "new package", "new package")
	// organization_activity_list: the org and its datasets public now
	sameList(t, "org activity, anonymous", types(f.list("", "organization_activity_list", map[string]any{"id": "tox-lab"})),
		"new package", "new organization")
	sameList(t, "user activity, anonymous", types(f.list("", "user_activity_list", map[string]any{"id": "admin"})),
		"changed package", "new package", "new organization")

	// activity_show: labels, then the dataset's read permission
	all := f.list("sysadmin", "package_activity_list", map[string]any{"id": "secret"})
	newest := all[0].(map[string]any)["id"].(string)
	f.fail("", "activity_show", map[string]any{"id": newest}, 403)
	f.ok("member", "activity_show", map[string]any{"id": newest})
	// data and diffs need edit rights (public_activity_stream_detail off)
	f.fail("member", "activity_data_show", map[string]any{"id": newest}, 403)
	f.fail("member", "activity_diff", map[string]any{"id": newest, "object_type": "package"}, 403)
	f.ok("editor", "activity_data_show", map[string]any{"id": newest})
}

// A collaborator reads a private dataset's activity recorded while they
// collaborate (CKAN's collaborator-<id> permission label), and loses it
// when removed.
func TestActivityOfCollaborators(t *testing.T) {
	f := newFixture(t)
	f.withOptions(Options{AllowCollaborators: true})
	f.ok("admin", "package_create", map[string]any{"name": "shared", "owner_org": "tox-lab", "private": true})
	f.fail("outsider", "package_activity_list", map[string]any{"id": "shared"}, 403)
	f.ok("admin", "package_collaborator_create", map[string]any{"id": "shared", "user_id": "outsider", "capacity": "member"})
	f.ok("admin", "package_patch", map[string]any{"id": "shared", "title": "Shared screen"})
	// adding the collaborator is a write of the dataset, recorded too
	sameList(t, "collaborator", types(f.list("outsider", "package_activity_list", map[string]any{"id": "shared"})), "changed package", "changed package")
	id := f.ok("admin", "package_show", map[string]any{"id": "shared"})["id"]
	found := false
	for _, a := range f.list("outsider", "recently_changed_packages_activity_list", nil) {
		found = found || a.(map[string]any)["object_id"] == id
	}
	if !found {
		t.Errorf("the collaborator's recently changed list lacks the shared dataset's activity")
	}
	f.ok("admin", "package_collaborator_delete", map[string]any{"id": "shared", "user_id": "outsider"})
	f.fail("outsider", "package_activity_list", map[string]any{"id": "shared"}, 403)
}

func TestActivityListParameters(t *testing.T) {
	f := newFixture(t)
	f.ok("admin", "package_create", map[string]any{"name": "pp", "owner_org": "tox-lab"})
	for i := 0; i < 5; i++ {
		f.ok("admin", "package_patch", map[string]any{"id": "pp", "notes": strings.Repeat("n", i+1)})
	}
	all := f.list("", "package_activity_list", map[string]any{"id": "pp"})
	if len(all) != 6 {
		t.Fatalf("%d activities", len(all))
	}
	notes := func(l []any) string {
		var out []string
		for _, a := range l {
			n, _ := a.(map[string]any)["data"].(map[string]any)["package"].(map[string]any)["notes"].(string)
			out = append(out, n)
		}
		return strings.Join(out, ",")
	}
	if got := notes(f.list("", "package_activity_list", map[string]any{"id": "pp", "offset": 1, "limit": 2})); got != "nnnn,nnn" {
		t.Fatalf("offset 1 limit 2: %s", got)
	}
	ts := func(i int) float64 {
		tm, err := time.Parse("2006-01-02T15:04:05.000000", all[i].(map[string]any)["timestamp"].(string))
		if err != nil {
			tm, _ = time.Parse("2006-01-02T15:04:05", all[i].(map[string]any)["timestamp"].(string))
		}
		return float64(tm.UnixMicro()) / 1e6
	}
	// before: the newest ones before it; after alone: the oldest after it, newest first
	if got := notes(f.list("", "package_activity_list", map[string]any{"id": "pp", "before": ts(1), "limit": 2})); got != "nnn,nn" {
		t.Fatalf("before: %s", got)
	}
	if got := notes(f.list("", "package_activity_list", map[string]any{"id": "pp", "after": ts(5), "limit": 2})); got != "nn,n" {
		t.Fatalf("after: %s", got)
	}
	if got := notes(f.list("", "package_activity_list", map[string]any{"id": "pp", "after": ts(4), "before": ts(1)})); got != "nnn,nn" {
		t.Fatalf("after and before: %s", got)
	}
	sameList(t, "activity_types", types(f.list("", "package_activity_list", map[string]any{"id": "pp", "activity_types": []string{"new package"}})), "new package")
	if l := f.list("", "package_activity_list", map[string]any{"id": "pp", "exclude_activity_types": []string{"changed package"}}); len(l) != 1 {
		t.Fatalf("exclude: %d", len(l))
	}
	for _, c := range []struct {
		data map[string]any
		want string
	}{
		{map[string]any{"id": "pp", "activity_types": []string{"a"}, "exclude_activity_types": []string{"b"}},
			`{"__type":"Validation Error","activity_types":["Cannot be used together with ` + "`" + `exclude_activity_types"]}`},
		{map[string]any{"id": "pp", "limit": "x"}, `{"__type":"Validation Error","limit":["Invalid integer"]}`},
		{map[string]any{"id": "pp", "offset": -1}, `{"__type":"Validation Error","offset":["Must be a natural number"]}`},
		{map[string]any{"id": "pp", "before": "yesterday"}, `{"__type":"Validation Error","before":["Must be a float timestamp"]}`},
		{map[string]any{"id": "pp", "activity_types": "new package"}, `{"__type":"Validation Error","activity_types":["Not a list"]}`},
	} {
		if e := f.fail("", "package_activity_list", c.data, 409); errJSON(e) != c.want {
			t.Fatalf("%v: %s, want %s", c.data, errJSON(e), c.want)
		}
	}

	// the configured default and maximum
	f.svc.opts.ActivityListLimit, f.svc.opts.ActivityListLimitMax = 2, 3
	if l := f.list("", "package_activity_list", map[string]any{"id": "pp"}); len(l) != 2 {
		t.Fatalf("default limit: %d", len(l))
	}
	if l := f.list("", "package_activity_list", map[string]any{"id": "pp", "limit": 50}); len(l) != 3 {
		t.Fatalf("max limit: %d", len(l))
	}
}

func TestActivityOfOrganizations(t *testing.T) {
	f := newFixture(t)
	f.ok("admin", "organization_patch", map[string]any{"id": "tox-lab", "description": "in vitro"})
	f.ok("admin", "organization_member_create", map[string]any{"id": "tox-lab", "username": "outsider", "role": "member"}) // no activity
	f.ok("admin", "organization_delete", map[string]any{"id": "tox-lab"})
	l := f.list("", "organization_activity_list", map[string]any{"id": "tox-lab"})
	sameList(t, "org", types(l), "deleted organization", "changed organization", "new organization")
	if l[1].(map[string]any)["permission_labels"] != nil {
		t.Fatalf("organization activity labels: %v", l[1])
	}
	g := l[1].(map[string]any)["data"].(map[string]any)["group"].(map[string]any)
	if g["description"] != "in vitro" || g["is_organization"] != true || g["type"] != "organization" {
		t.Fatalf("group data: %v", g)
	}
	f.fail("", "organization_activity_list", map[string]any{"id": "nope"}, 404)
	// CKAN's activity_show knows package activity only (sysadmins pass)
	id := l[0].(map[string]any)["id"].(string)
	f.fail("admin", "activity_show", map[string]any{"id": id}, 403)
	f.ok("sysadmin", "activity_show", map[string]any{"id": id})
	if d := f.ok("sysadmin", "activity_data_show", map[string]any{"id": id, "object_type": "group"}); d["state"] != "deleted" {
		t.Fatalf("activity_data_show group: %v", d)
	}
}

func TestActivityShowDataDiff(t *testing.T) {
	f := newFixture(t)
	f.ok("admin", "package_create", map[string]any{"name": "diffed", "owner_org": "tox-lab", "title": "Before"})
	f.ok("admin", "package_patch", map[string]any{"id": "diffed", "title": "Après"})
	l := f.list("admin", "package_activity_list", map[string]any{"id": "diffed"})
	newest, oldest := l[0].(map[string]any)["id"].(string), l[1].(map[string]any)["id"].(string)

	a := f.ok("", "activity_show", map[string]any{"id": newest})
	if a["activity_type"] != "changed package" || a["id"] != newest {
		t.Fatalf("activity_show: %v", a)
	}
	d := f.ok("admin", "activity_data_show", map[string]any{"id": newest, "object_type": "package"})
	if d["title"] != "Après" {
		t.Fatalf("activity_data_show: %v", d)
	}
	if d := f.ok("admin", "activity_data_show", map[string]any{"id": newest}); d["actor"] != "admin" {
		t.Fatalf("activity_data_show without object_type: %v", d)
	}
	if e := f.fail("admin", "activity_data_show", map[string]any{"id": newest, "object_type": "user"}, 404); e.Message != "Not found: Could not find that object_type in the activity" {
		t.Fatalf("unknown object_type: %s", errJSON(e))
	}
	f.fail("admin", "activity_show", map[string]any{"id": "no-such-activity"}, 404)
	if e := f.fail("admin", "activity_show", map[string]any{}, 409); errJSON(e) != `{"__type":"Validation Error","id":["Missing value"]}` {
		t.Fatalf("missing id: %s", errJSON(e))
	}

	diff := f.ok("admin", "activity_diff", map[string]any{"id": newest, "object_type": "package"})
	text := diff["diff"].(string)
	if !strings.HasPrefix(text, "--- \n\n+++ \n\n@@ ") || !strings.Contains(text, "\n-  \"title\": \"Before\"") ||
		!strings.Contains(text, "\n+  \"title\": \"Apr\\u00e8s\"") {
		t.Fatalf("unified diff:\n%s", text)
	}
	if acts := diff["activities"].([]any); len(acts) != 2 || acts[0].(map[string]any)["id"] != oldest {
		t.Fatalf("diff activities: %v", acts)
	}
	ctxDiff := f.ok("admin", "activity_diff", map[string]any{"id": newest, "object_type": "package", "diff_type": "context"})["diff"].(string)
	if !strings.HasPrefix(ctxDiff, "*** \n\n--- \n\n***************\n\n*** ") || !strings.Contains(ctxDiff, "\n!   \"title\": \"Before\"") {
		t.Fatalf("context diff:\n%s", ctxDiff)
	}
	htmlDiff := f.ok("admin", "activity_diff", map[string]any{"id": newest, "object_type": "package", "diff_type": "html"})["diff"].(string)
	if !strings.Contains(htmlDiff, `<table class="diff"`) || !strings.Contains(htmlDiff, `<span class="diff_chg">`) {
		t.Fatalf("html diff:\n%s", htmlDiff)
	}
	if e := f.fail("admin", "activity_diff", map[string]any{"id": newest, "object_type": "package", "diff_type": "word"}, 409); errJSON(e) != `{"__type":"Validation Error","message":"diff_type not recognized"}` {
		t.Fatalf("diff_type: %s", errJSON(e))
	}
	if e := f.fail("admin", "activity_diff", map[string]any{"id": oldest, "object_type": "package"}, 404); e.Message != "Not found: Previous activity for this object not found" {
		t.Fatalf("first activity: %s", errJSON(e))
	}
	if e := f.fail("admin", "activity_diff", map[string]any{"id": newest}, 409); errJSON(e) != `{"__type":"Validation Error","object_type":["Missing value"]}` {
		t.Fatalf("missing object_type: %s", errJSON(e))
	}
}

func TestUnifiedDiffMatchesDifflib(t *testing.T) {
	// python3 -c 'import difflib; print(repr("\n".join(difflib.unified_diff(a, b))))'
	a := []string{"{", `  "a": 1,`, `  "b": 2,`, `  "c": 3`, "}"}
	b := []string{"{", `  "a": 1,`, `  "b": 5,`, `  "c": 3,`, `  "d": 4`, "}"}
	want := "--- \n\n+++ \n\n@@ -1,5 +1,6 @@\n\n {\n   \"a\": 1,\n-  \"b\": 2,\n-  \"c\": 3\n+  \"b\": 5,\n+  \"c\": 3,\n+  \"d\": 4\n }"
	if got := unifiedDiff(a, b); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	wantCtx := "*** \n\n--- \n\n***************\n\n*** 1,5 ****\n\n  {\n    \"a\": 1,\n!   \"b\": 2,\n!   \"c\": 3\n  }\n--- 1,6 ----\n\n  {\n    \"a\": 1,\n!   \"b\": 5,\n!   \"c\": 3,\n!   \"d\": 4\n  }"
	if got := contextDiff(a, b); got != wantCtx {
		t.Fatalf("got %q\nwant %q", got, wantCtx)
	}
}

func TestDashboardActivityList(t *testing.T) {
	f := newFixture(t)
	// users who are not sysadmins create organizations here (ckan.auth.user_create_organizations)
	f.withOptions(Options{Auth: AuthOptions{UserCreateOrganizations: true}})
	f.ok("admin", "package_create", map[string]any{"name": "lab-data", "owner_org": "tox-lab", "private": true})
	f.ok("outsider", "organization_create", map[string]any{"name": "elsewhere"})
	if e := f.fail("", "dashboard_activity_list", nil, 403); e.Message != "Access denied: You must be logged in to access your dashboard." {
		t.Fatalf("anonymous: %s", errJSON(e))
	}
	l := f.list("member", "dashboard_activity_list", nil)
	sameList(t, "member's dashboard", types(l), "new package", "new organization")
	if l[0].(map[string]any)["is_new"] != false {
		t.Fatalf("is_new: %v", l[0])
	}
	sameList(t, "outsider's dashboard", types(f.list("outsider", "dashboard_activity_list", nil)), "new organization")
}

func TestActivityOfGroups(t *testing.T) {
	f := newFixture(t)
	// users who are not sysadmins create groups, and anonymous callers
	// list user activity here (ckan.auth.user_create_groups, public_user_details)
	f.withOptions(Options{Auth: AuthOptions{UserCreateGroups: true, PublicUserDetails: true}})
	f.ok("editor", "group_create", map[string]any{"name": "hepatotox", "title": "Hepatotoxicity"})
	f.ok("editor", "group_patch", map[string]any{"id": "hepatotox", "description": "liver"})
	f.ok("editor", "package_create", map[string]any{"name": "liver-screen", "owner_org": "tox-lab"})
	f.ok("editor", "package_create", map[string]any{"name": "liver-private", "owner_org": "tox-lab", "private": true})
	f.ok("editor", "member_create", map[string]any{"id": "hepatotox", "object": "liver-screen", "object_type": "package", "capacity": "public"})
	f.ok("editor", "member_create", map[string]any{"id": "hepatotox", "object": "liver-private", "object_type": "package", "capacity": "public"})
	l := f.list("", "group_activity_list", map[string]any{"id": "hepatotox"})
	// the group and its public dataset (adding it to the group is a dataset change)
	sameList(t, "group", types(l), "changed package", "new package", "changed group", "new group")
	g := l[3].(map[string]any)["data"].(map[string]any)["group"].(map[string]any)
	if g["is_organization"] != false || g["type"] != "group" || g["name"] != "hepatotox" {
		t.Fatalf("group data: %v", g)
	}
	f.ok("editor", "group_delete", map[string]any{"id": "hepatotox"})
	sameList(t, "user", types(f.list("", "user_activity_list", map[string]any{"id": "editor", "limit": 1})), "deleted group")
	f.fail("", "group_activity_list", map[string]any{"id": "no-group"}, 404)
	f.fail("", "group_activity_list", map[string]any{"id": "tox-lab"}, 404) // an organization
}

// TestActivityOfUnwrittenRevisionHidden: a writer that stored its activity
// and died before its record write leaves an activity of a revision above
// the record's; it is not shown, and the next writer of that revision
// replaces it.
func TestActivityOfUnwrittenRevisionHidden(t *testing.T) {
	f := newFixture(t)
	f.ok("admin", "package_create", map[string]any{"name": "crashy", "owner_org": "tox-lab"})
	d := f.svc.st.lookupDataset("crashy").clone()
	d.Rev++
	d.Title = "never written"
	ctx := withActor(context.Background(), f.users["editor"], site)
	if err := f.svc.recordActivity(ctx, f.svc.datasetActivity(ctx, f.svc.st.dataset("crashy"), d)); err != nil {
		t.Fatal(err)
	}
	sameList(t, "before the next write", types(f.list("admin", "package_activity_list", map[string]any{"id": "crashy"})), "new package")
	f.ok("admin", "package_patch", map[string]any{"id": "crashy", "title": "written"})
	l := f.list("admin", "package_activity_list", map[string]any{"id": "crashy"})
	sameList(t, "after", types(l), "changed package", "new package")
	if title := l[0].(map[string]any)["data"].(map[string]any)["package"].(map[string]any)["title"]; title != "written" {
		t.Fatalf("the activity of revision 2 is %v", title)
	}
}

// TestActivitySeenByAnotherInstance writes through one catalog and lists
// through a second one on the same database, started before and after.
func TestActivitySeenByAnotherInstance(t *testing.T) {
	f := newFixture(t)
	other := f.open(Options{})
	f.ok("admin", "package_create", map[string]any{"name": "shared", "owner_org": "tox-lab"})
	list := func(svc *Service) []string {
		res, e := callSvc(t, svc, Caller{}, "package_activity_list", map[string]any{"id": "shared"})
		if e != nil {
			t.Fatal(e)
		}
		return types(res.([]any))
	}
	sameList(t, "other", list(other), "new package")
	f.ok("admin", "package_patch", map[string]any{"id": "shared", "notes": "x"})
	sameList(t, "other after a patch", list(other), "changed package", "new package")
	third := f.open(Options{})
	sameList(t, "a new instance", list(third), "changed package", "new package")
}

// BenchmarkActivityIndexMemory reports the heap the in-memory activity
// index holds per package activity (strings as decoded from the store).
func BenchmarkActivityIndexMemory(b *testing.B) {
	const n = 100000
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		x := &activityIndex{loaded: true, byID: map[string]*activityMeta{}, seen: map[string]int64{}}
		at := time.Now()
		for i := 0; i < n; i++ {
			m := &activityMeta{ID: newID(), Timestamp: at.Add(time.Duration(i) * time.Millisecond), UserID: newID(),
				ObjectID: newID(), Kind: strings.Clone(ActivityPackage), Type: strings.Clone("changed package"),
				Labels: []string{"member-" + newID()}, Rev: int64(i), Created: at}
			x.putLocked(m)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/activity")
		runtime.KeepAlive(x)
	}
}

// TestActivityAfterPurge: a purged dataset's activity stays (as CKAN's),
// in this instance, in one that saw the dataset before the purge, and in a
// new one; the activity of a create that never reached the store is not
// shown.
func TestActivityAfterPurge(t *testing.T) {
	f := newFixture(t)
	// anonymous callers list user activity here (ckan.auth.public_user_details)
	opts := Options{Auth: AuthOptions{PublicUserDetails: true}}
	f.withOptions(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	other := f.open(opts)
	f.ok("editor", "package_create", map[string]any{"name": "short-lived", "owner_org": "tox-lab"})
	userTypes := func(svc *Service) []string {
		res, e := callSvc(t, svc, Caller{}, "user_activity_list", map[string]any{"id": "editor"})
		if e != nil {
			t.Fatal(e)
		}
		return types(res.([]any))
	}
	sameList(t, "other, before", userTypes(other), "new package")
	f.ok("editor", "package_patch", map[string]any{"id": "short-lived", "notes": "x"})
	f.ok("sysadmin", "dataset_purge", map[string]any{"id": "short-lived"})
	f.fail("sysadmin", "package_activity_list", map[string]any{"id": "short-lived"}, 404)
	sameList(t, "this instance", userTypes(f.svc), "changed package", "new package")
	sameList(t, "other, after", userTypes(other), "changed package", "new package")
	third := f.open(opts)
	sameList(t, "new instance", userTypes(third), "changed package", "new package")

	// a create whose process died between its activity and its insert
	ghost := &Dataset{ID: newID(), Name: "ghost", OwnerOrg: f.orgID, State: StateActive, Type: "dataset",
		MetadataCreated: now(), MetadataModified: now(), CreatorUserID: f.users["editor"].UserID, Rev: 1}
	actx := withActor(ctx, f.users["editor"], site)
	if err := f.svc.recordActivity(actx, f.svc.datasetActivity(actx, nil, ghost)); err != nil {
		t.Fatal(err)
	}
	sameList(t, "with a ghost create", userTypes(f.svc), "changed package", "new package")
	fourth := f.open(opts)
	sameList(t, "with a ghost create, new instance", userTypes(fourth), "changed package", "new package")
}

// BenchmarkActivityIndexLoad reports how long loading the activity index
// takes per 1,000 stored activities (20,000 on the embedded store), as a
// process does once after start.
func BenchmarkActivityIndexLoad(b *testing.B) {
	const n = 20000
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{URI: testURI, Database: fmt.Sprintf("bench_activity_%d", dbSeq.Add(1))})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = st.Close(context.Background()) }()
	c := newRecordStore(st.DB(), nil)
	docs := make([]any, 0, 1000)
	at := now()
	for i := 0; i < n; i++ {
		m := &activityMeta{ID: newID(), Timestamp: at.Add(time.Duration(i) * time.Millisecond), UserID: newID(), ObjectID: newID(),
			Kind: ActivityPackage, Type: "changed package", Labels: []string{"public"}, Rev: 2, Created: at}
		raw, _ := json.Marshal(m)
		docs = append(docs, storedMeta{ID: m.ID, M: string(raw)})
		if len(docs) == cap(docs) {
			if _, err := c.activity.InsertMany(ctx, docs); err != nil {
				b.Fatal(err)
			}
			docs = docs[:0]
		}
	}
	b.ResetTimer()
	for range b.N {
		svc := &Service{c: c, st: newReadModel(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		start := time.Now()
		if err := svc.activitySync(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/(n/1000), "ms/1000-activities")
		if len(svc.acts.list) != n {
			b.Fatalf("%d activities loaded", len(svc.acts.list))
		}
	}
}
