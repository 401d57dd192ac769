package catalog

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"

	"sync"
	"testing"
	"toxgate/catalog/ckan"
)

func TestDatasetLifecycle(t *testing.T) {
	f := newFixture(t)
	created := f.ok("editor", "package_create", map[string]any{
		"name": "herg-assays", "title": "hERG assays", "owner_org": "tox-lab", "notes": "Patch clamp data",
		"tags":             []any{map[string]any{"name": "cardiotox"}, map[string]any{"name": "herg"}},
		"extras":           []any{map[string]any{"key": "species", "value": "human"}},
		"resources":        []any{map[string]any{"url": "example.org/data.csv", "name": "raw"}},
		"metadata_created": "2001-01-01T00:00:00", "num_resources": 99, "organization": map[string]any{"x": 1},
	})
	if created["name"] != "herg-assays" || created["owner_org"] != f.orgID || created["creator_user_id"] != f.users["editor"].UserID {
		t.Fatalf("created: %v", created)
	}
	if created["num_resources"].(float64) != 1 || created["num_tags"].(float64) != 2 || created["state"] != "active" || created["type"] != "dataset" {
		t.Fatalf("counts/state: %v", created)
	}
	res := created["resources"].([]any)[0].(map[string]any)
	if res["url"] != "http://example.org/data.csv" || res["format"] != "CSV" || res["position"].(float64) != 0 || res["package_id"] != created["id"] {
		t.Fatalf("resource: %v", res)
	}
	if org := created["organization"].(map[string]any); org["name"] != "tox-lab" || org["is_organization"] != true {
		t.Fatalf("organization: %v", org)
	}
	if strings.HasPrefix(created["metadata_created"].(string), "2001") {
		t.Fatal("server field metadata_created taken from the client")
	}

	byID := f.ok("", "package_show", map[string]any{"id": created["id"]})
	byName := f.ok("", "package_show", map[string]any{"id": "herg-assays"})
	if byID["id"] != byName["id"] || byName["title"] != "hERG assays" {
		t.Fatalf("show by id/name differ: %v %v", byID, byName)
	}

	// update is a full replace: omitted notes, tags, extras and resources go
	updated := f.ok("editor", "package_update", map[string]any{"id": created["id"], "title": "hERG inhibition"})
	if updated["notes"] != nil || len(updated["tags"].([]any)) != 0 || len(updated["resources"].([]any)) != 0 || len(updated["extras"].([]any)) != 0 {
		t.Fatalf("update did not replace: %v", updated)
	}
	if updated["name"] != "herg-assays" || updated["owner_org"] != f.orgID || updated["metadata_modified"] == created["metadata_modified"] {
		t.Fatalf("update lost kept fields: %v", updated)
	}

	// patch changes only what is given
	patched := f.ok("editor", "package_patch", map[string]any{"id": "herg-assays", "notes": "new notes"})
	if patched["title"] != "hERG inhibition" || patched["notes"] != "new notes" {
		t.Fatalf("patch: %v", patched)
	}

	// soft delete: gone from list and search, still shown to members, 403 to others
	if r, err := f.call("editor", "package_delete", map[string]any{"id": "herg-assays"}); err != nil || r != nil {
		t.Fatalf("delete: %v %v", r, err)
	}
	if l := f.list("", "package_list", nil); len(l) != 0 {
		t.Fatalf("deleted dataset listed: %v", l)
	}
	if s := f.ok("sysadmin", "package_search", nil); s["count"].(float64) != 0 {
		t.Fatalf("deleted dataset found: %v", s)
	}
	if d := f.ok("member", "package_show", map[string]any{"id": "herg-assays"}); d["state"] != "deleted" {
		t.Fatalf("member sees deleted: %v", d)
	}
	e := f.fail("", "package_show", map[string]any{"id": "herg-assays"}, 403)
	if e.Message != "Access denied: User  not authorized to read package "+created["id"].(string) {
		t.Fatalf("message: %q", e.Message)
	}
	// restore with patch state=active
	if d := f.ok("editor", "package_patch", map[string]any{"id": "herg-assays", "state": "active"}); d["state"] != "active" {
		t.Fatalf("restore: %v", d)
	}

	// purge: sysadmin only, then 404
	f.fail("admin", "dataset_purge", map[string]any{"id": "herg-assays"}, 403)
	f.ok("sysadmin", "dataset_purge", map[string]any{"id": "herg-assays"})
	e = f.fail("sysadmin", "package_show", map[string]any{"id": "herg-assays"}, 404)
	if errJSON(e) != `{"__type":"Not Found Error","message":"Not found"}` {
		t.Fatalf("404 shape: %s", errJSON(e))
	}
	e = f.fail("sysadmin", "dataset_purge", map[string]any{"id": "herg-assays"}, 404)
	if e.Message != "Not found: Dataset was not found" {
		t.Fatalf("purge unknown: %q", e.Message)
	}
}

func TestDatasetValidationErrors(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		data map[string]any
		want string
	}{
		{map[string]any{"name": "x", "owner_org": "tox-lab"}, `{"__type":"Validation Error","name":["Must be at least 2 characters long","Name \"x\" length is less than minimum 2"]}`},
		{map[string]any{"name": "Upper", "owner_org": "tox-lab"}, `{"__type":"Validation Error","name":["Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_"]}`},
		{map[string]any{"name": "new", "owner_org": "tox-lab"}, `{"__type":"Validation Error","name":["That name cannot be used"]}`},
		{map[string]any{"owner_org": "tox-lab"}, `{"__type":"Validation Error","name":["Missing value"]}`},
		{map[string]any{"name": "no-org"}, `{"__type":"Validation Error","owner_org":["An organization must be provided"]}`},
		{map[string]any{"name": "bad-mail", "owner_org": "tox-lab", "author_email": "nope"}, `{"__type":"Validation Error","author_email":["Email nope is not a valid format"]}`},
		{map[string]any{"name": "my-id", "owner_org": "tox-lab", "id": "0b8e0a3c-7a39-4fa0-8c5f-5e0e1d8f2a11"}, `{"__type":"Validation Error","id":["The input field id was not expected."]}`},
		{map[string]any{"name": "bad-tag", "owner_org": "tox-lab", "tags": []any{map[string]any{"name": "a"}}}, `{"__type":"Validation Error","tags":["Tag \"a\" length is less than minimum 2"]}`},
	}
	for _, c := range cases {
		e := f.fail("editor", "package_create", c.data, 409)
		if got := errJSON(e); got != c.want {
			t.Errorf("%v:\n got %s\nwant %s", c.data, got, c.want)
		}
	}
	e := f.fail("editor", "package_create", map[string]any{"name": "tag-strings", "owner_org": "tox-lab", "tags": []any{"a"}}, 400)
	if e.Type != "Integrity Error" || e.Message != "Only lists of dicts can be placed against subschema ('tags',), not <class 'list'>" {
		t.Fatalf("DataError: %v", errJSON(e))
	}
	f.ok("editor", "package_create", map[string]any{"name": "taken", "owner_org": "tox-lab"})
	e = f.fail("editor", "package_create", map[string]any{"name": "taken", "owner_org": "tox-lab"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","name":["That URL is already in use."]}` {
		t.Fatalf("dup: %s", errJSON(e))
	}
	// the name of a deleted dataset may be reused; the old one is renamed to its id
	f.ok("editor", "package_delete", map[string]any{"id": "taken"})
	again := f.ok("editor", "package_create", map[string]any{"name": "taken", "owner_org": "tox-lab"})
	if again["name"] != "taken" {
		t.Fatal(again)
	}
	// sysadmins may supply a UUID id
	d := f.ok("sysadmin", "package_create", map[string]any{"name": "given-id", "owner_org": "tox-lab", "id": "0B8E0A3C-7A39-4FA0-8C5F-5E0E1D8F2A11"})
	if d["id"] != "0b8e0a3c-7a39-4fa0-8c5f-5e0e1d8f2a11" {
		t.Fatal(d["id"])
	}
	e = f.fail("sysadmin", "package_create", map[string]any{"name": "given-id-2", "owner_org": "tox-lab", "id": "0b8e0a3c-7a39-4fa0-8c5f-5e0e1d8f2a11"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","id":["Dataset id already exists"]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("editor", "package_update", map[string]any{"title": "x"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","id":"Missing value"}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("editor", "package_update", map[string]any{"id": "nope"}, 404)
	if e.Message != "Not found: Package was not found." {
		t.Fatal(e.Message)
	}
	e = f.fail("", "package_show", map[string]any{}, 409)
	if errJSON(e) != `{"__type":"Validation Error","name_or_id":["Missing value"]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("", "package_list", map[string]any{"limit": "x"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","limit":["Invalid integer"]}` {
		t.Fatal(errJSON(e))
	}
}

func TestAuthorizationMatrix(t *testing.T) {
	f := newFixture(t)
	// users who are not sysadmins create organizations here (ckan.auth.user_create_organizations)
	f.withOptions(Options{Auth: AuthOptions{UserCreateOrganizations: true}})
	pub := f.ok("editor", "package_create", map[string]any{"name": "public-set", "owner_org": "tox-lab"})
	priv := f.ok("editor", "package_create", map[string]any{"name": "private-set", "owner_org": "tox-lab", "private": "true"})
	if priv["private"] != true {
		t.Fatal("private not set from string")
	}
	type want struct{ showPriv, update, create bool }
	matrix := map[string]want{
		"":         {false, false, false},
		"outsider": {false, false, false},
		"member":   {true, false, false},
		"editor":   {true, true, true},
		"admin":    {true, true, true},
		"sysadmin": {true, true, true},
	}
	for user, w := range matrix {
		f.ok(user, "package_show", map[string]any{"id": pub["id"]})
		_, err := f.call(user, "package_show", map[string]any{"id": "private-set"})
		if (err == nil) != w.showPriv || (err != nil && err.Status != 403) {
			t.Errorf("%q show private: %v", user, err)
		}
		_, err = f.call(user, "package_patch", map[string]any{"id": "public-set", "notes": user})
		if (err == nil) != w.update || (err != nil && err.Status != 403) {
			t.Errorf("%q update: %v", user, err)
		}
		_, err = f.call(user, "package_create", map[string]any{"name": "by-" + strings.Trim(user+"x", "x") + "-set", "owner_org": "tox-lab"})
		if (err == nil) != w.create || (err != nil && err.Status != 403) {
			t.Errorf("%q create: %v", user, err)
		}
		list := f.list(user, "package_list", nil)
		for _, n := range list {
			if n == "private-set" {
				t.Errorf("%q: private dataset in package_list", user)
			}
		}
		s := f.ok(user, "package_search", map[string]any{"include_private": true, "q": "name:private-set"})
		if got := s["count"].(float64) == 1; got != w.showPriv {
			t.Errorf("%q: search include_private found private=%v", user, got)
		}
		s = f.ok(user, "package_search", map[string]any{"q": "name:private-set"})
		if s["count"].(float64) != 0 {
			t.Errorf("%q: private found without include_private", user)
		}
	}
	e := f.fail("", "package_create", map[string]any{"name": "anon", "owner_org": "tox-lab"}, 403)
	if e.Message != "Access denied: User  not authorized to create packages" {
		t.Fatal(e.Message)
	}
	e = f.fail("outsider", "package_patch", map[string]any{"id": "public-set"}, 403)
	if e.Message != "Access denied: User outsider not authorized to edit package "+pub["id"].(string) {
		t.Fatal(e.Message)
	}
	e = f.fail("member", "package_delete", map[string]any{"id": "public-set"}, 403)
	if e.Message != "Access denied: User member not authorized to delete package "+pub["id"].(string) {
		t.Fatal(e.Message)
	}
	// an editor elsewhere cannot add to tox-lab
	f.ok("outsider", "organization_create", map[string]any{"name": "other-lab"})
	e = f.fail("outsider", "package_create", map[string]any{"name": "sneak", "owner_org": "tox-lab"}, 403)
	if e.Message != "Access denied: User outsider not authorized to add dataset to this organization" {
		t.Fatal(e.Message)
	}
	e = f.fail("", "organization_create", map[string]any{"name": "anon-org"}, 403)
	if e.Message != "Access denied: Action organization_create requires an authenticated user" {
		t.Fatal(e.Message)
	}
}

func TestResources(t *testing.T) {
	f := newFixture(t)
	d := f.ok("editor", "package_create", map[string]any{"name": "with-res", "owner_org": "tox-lab"})
	a := f.ok("editor", "resource_create", map[string]any{"package_id": "with-res", "url": "http://x.org/a.png", "name": "a", "datastore_active": true})
	b := f.ok("editor", "resource_create", map[string]any{"package_id": d["id"], "url": "http://x.org/b.json", "size": "42", "position": 7, "state": "deleted"})
	if a["position"].(float64) != 0 || b["position"].(float64) != 1 || a["format"] != "PNG" || b["size"].(float64) != 42 || b["state"] != "active" {
		t.Fatalf("created: %v %v", a, b)
	}
	if a["datastore_active"] != true {
		t.Fatalf("extra key not kept flat: %v", a)
	}
	show := f.ok("", "resource_show", map[string]any{"id": a["id"]})
	if show["name"] != "a" || show["package_id"] != d["id"] {
		t.Fatal(show)
	}
	// update is a full replace but keeps datastore_active
	up := f.ok("editor", "resource_update", map[string]any{"id": a["id"], "url": "http://x.org/a2.csv"})
	if up["name"] != nil || up["format"] != "CSV" || up["datastore_active"] != true {
		t.Fatalf("update: %v", up)
	}
	p := f.ok("editor", "resource_patch", map[string]any{"id": a["id"], "name": "patched"})
	if p["url"] != "http://x.org/a2.csv" || p["name"] != "patched" {
		t.Fatalf("patch: %v", p)
	}
	e := f.fail("member", "resource_patch", map[string]any{"id": a["id"], "name": "x"}, 403)
	if !strings.Contains(e.Message, "not authorized to edit resource") {
		t.Fatal(e.Message)
	}
	f.ok("editor", "resource_delete", map[string]any{"id": a["id"]})
	e = f.fail("", "resource_show", map[string]any{"id": a["id"]}, 404)
	if e.Message != "Not found: Resource was not found." {
		t.Fatal(e.Message)
	}
	ds := f.ok("", "package_show", map[string]any{"id": "with-res"})
	rs := ds["resources"].([]any)
	if len(rs) != 1 || rs[0].(map[string]any)["position"].(float64) != 0 || ds["num_resources"].(float64) != 1 {
		t.Fatalf("after delete: %v", rs)
	}
	e = f.fail("editor", "resource_create", map[string]any{"url": "x"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","package_id":["Missing value"]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("editor", "resource_create", map[string]any{"package_id": "with-res", "created": "yesterday"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","created":["Date format incorrect"]}` {
		t.Fatal(errJSON(e))
	}
}

// TestConcurrentWritesLoseNothing runs many writers on one dataset at once:
// every resource they add must be there at the end.
func TestConcurrentWritesLoseNothing(t *testing.T) {
	f := newFixture(t)
	f.ok("editor", "package_create", map[string]any{"name": "busy", "owner_org": "tox-lab"})
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan *ckan.Error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := callSvc(t, f.svc, f.users["editor"], "resource_create", map[string]any{"package_id": "busy", "name": string(rune('a' + i))}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err.Status != 409 {
			t.Fatalf("unexpected error: %v", err)
		}
		t.Logf("a writer gave up after retries: %v", err)
	}
	d := f.ok("", "package_show", map[string]any{"id": "busy"})
	if got := len(d["resources"].([]any)); got+len(errs) < n {
		t.Fatalf("lost updates: %d resources", got)
	}
	if got := len(d["resources"].([]any)); got != n {
		t.Fatalf("want %d resources, got %d", n, got)
	}
}

// TestTwoInstancesStayConsistent writes through one catalog and reads
// through another on the same database: the change is seen at once.
func TestTwoInstancesStayConsistent(t *testing.T) {
	f := newFixture(t)
	other := f.open(Options{})
	d := f.ok("editor", "package_create", map[string]any{"name": "shared", "owner_org": "tox-lab", "title": "first"})
	got, cerr := callSvc(t, other, Caller{}, "package_show", map[string]any{"id": "shared"})
	if cerr != nil || got.(map[string]any)["title"] != "first" {
		t.Fatalf("other instance: %v %v", got, cerr)
	}
	if _, cerr := callSvc(t, other, f.users["editor"], "package_patch", map[string]any{"id": d["id"], "title": "second"}); cerr != nil {
		t.Fatal(cerr)
	}
	if s := f.ok("", "package_search", map[string]any{"q": "second"}); s["count"].(float64) != 1 {
		t.Fatalf("first instance does not find the change: %v", s)
	}
	callSvc(t, other, f.users["sysadmin"], "dataset_purge", map[string]any{"id": "shared"})
	f.fail("", "package_show", map[string]any{"id": "shared"}, 404)
}

// TestChangesFoundWithoutSequenceDocument covers a store whose marker was
// written before the small sequence document existed: the check reads the
// marker itself, finds the change and makes the document.
func TestChangesFoundWithoutSequenceDocument(t *testing.T) {
	f := newFixture(t)
	other := f.open(Options{})
	f.ok("editor", "package_create", map[string]any{"name": "old-store", "owner_org": "tox-lab", "title": "first"})
	if _, cerr := callSvc(t, other, f.users["editor"], "package_patch", map[string]any{"id": "old-store", "title": "second"}); cerr != nil {
		t.Fatal(cerr)
	}
	if _, err := f.db.Collection(CollChangeSeq).DeleteMany(t.Context(), map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if got := f.ok("", "package_show", map[string]any{"id": "old-store"}); got["title"] != "second" {
		t.Fatalf("change not found without the sequence document: %v", got["title"])
	}
	m, err := f.svc.c.readMarker(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if seq, ok, err := f.svc.c.readSeq(t.Context()); err != nil || !ok || seq != m.Seq {
		t.Fatalf("sequence document %d %v %v, marker %d", seq, ok, err, m.Seq)
	}
}

// TestFarBehindInstanceCatchesUpFromClaims: an instance that missed more
// changes than the change marker lists (creates, patches, a purge, an
// organization change) finds every one of them at its next request, by
// re-reading the records named in the claims since it was last current,
// not by reloading everything.
func TestFarBehindInstanceCatchesUpFromClaims(t *testing.T) {
	f := newFixture(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	other, err := New(t.Context(), f.db, Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, cerr := callSvc(t, other, Caller{}, "package_list", nil); cerr != nil {
		t.Fatal(cerr)
	}
	f.ok("editor", "package_create", map[string]any{"name": "to-purge", "owner_org": "tox-lab"})
	for i := 0; i < markerKeep; i++ {
		f.ok("editor", "package_create", map[string]any{"name": fmt.Sprintf("far-%02d", i), "owner_org": "tox-lab", "title": "created"})
	}
	for i := 0; i < 10; i++ {
		f.ok("editor", "package_patch", map[string]any{"id": fmt.Sprintf("far-%02d", i), "title": "patched"})
	}
	f.ok("sysadmin", "dataset_purge", map[string]any{"id": "to-purge"})
	f.ok("sysadmin", "organization_patch", map[string]any{"id": "tox-lab", "title": "Toxicology Lab, renamed"})

	for i := 0; i < markerKeep; i++ {
		want := "created"
		if i < 10 {
			want = "patched"
		}
		got, cerr := callSvc(t, other, Caller{}, "package_show", map[string]any{"id": fmt.Sprintf("far-%02d", i)})
		if cerr != nil || got.(map[string]any)["title"] != want {
			t.Fatalf("far-%02d on the instance behind: %v %v, want title %q", i, got, cerr, want)
		}
		if o := got.(map[string]any)["organization"].(map[string]any); o["title"] != "Toxicology Lab, renamed" {
			t.Fatalf("organization change not seen: %v", o)
		}
	}
	if _, cerr := callSvc(t, other, Caller{}, "package_show", map[string]any{"id": "to-purge"}); cerr == nil || cerr.Status != 404 {
		t.Fatalf("purged dataset on the instance behind: %v", cerr)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "caught up from claims") || strings.Count(logs.String(), "catalog loaded") != 1 {
		t.Fatalf("the instance behind did not catch up from the claims (or reloaded everything):\n%s", logs.String())
	}
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
