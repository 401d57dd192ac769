package pluginhost

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
)

// TestCKANWirePatterns drives the catalog through HTTP the ways curl and
// ckanapi do (ckan-action-api.md §5).
func TestCKANWirePatterns(t *testing.T) {
	e := newEnv(t, envOpts{})
	org := mustOK(t, e.ckanapi("organization_create", "tok-sysadmin", map[string]any{"name": "lab"})).(map[string]any)
	mustOK(t, e.ckanapi("organization_member_create", "tok-sysadmin", map[string]any{"id": "lab", "username": "editor", "role": "editor"}))

	// POST JSON with both token headers (ckanapi), and Bearer form
	created := mustOK(t, e.ckanapi("package_create", "tok-editor", map[string]any{"name": "doxo", "title": "Doxorubicin PK", "owner_org": "lab"})).(map[string]any)
	if created["owner_org"] != org["id"] {
		t.Fatalf("owner_org: %v", created)
	}
	r := e.do("POST", "/api/3/action/package_patch", "application/json", []byte(`{"id":"doxo","notes":"bearer"}`), "Authorization", "Bearer tok-editor")
	mustOK(t, r)

	// anonymous write: 403 with CKAN's message
	r = e.ckanapi("package_create", "", map[string]any{"name": "anon", "owner_org": "lab"})
	if r.status != 403 || r.errType() != "Authorization Error" {
		t.Fatalf("anonymous create: %d %s", r.status, r.raw)
	}
	// a bad token stays anonymous (no 401)
	r = e.ckanapi("package_show", "nope", map[string]any{"id": "doxo"})
	mustOK(t, r)

	// GET with query string, both paths; envelope and content type
	r = e.do("GET", "/api/3/action/package_show?id=doxo", "", nil)
	d := mustOK(t, r).(map[string]any)
	if d["notes"] != "bearer" || r.ctype != "application/json;charset=utf-8" || !strings.HasSuffix(r.body["help"].(string), "/api/3/action/help_show?name=package_show") {
		t.Fatalf("GET show: %s %s", r.ctype, r.raw)
	}
	if !strings.Contains(string(r.raw), `"success": true`) {
		t.Fatalf("not simplejson separators: %s", r.raw)
	}
	// curl -d '{"id":"doxo"}' (form content type, JSON as the field name)
	r = e.do("POST", "/api/3/action/package_show", "application/x-www-form-urlencoded", []byte(`{"id":"doxo"}`))
	mustOK(t, r)

	// ckanapi action with k=v strings: everything arrives as strings
	r = e.ckanapi("package_search", "tok-editor", map[string]any{"q": "doxorubicin", "rows": "5", "include_private": "true", "facet.field": `["organization"]`})
	res := mustOK(t, r).(map[string]any)
	if res["count"].(float64) != 1 {
		t.Fatalf("search: %s", r.raw)
	}

	// errors on the wire
	r = e.do("GET", "/api/3/action/no_such_action", "", nil)
	if r.status != 400 || string(r.raw) != `"Bad request - Action name not known: no_such_action"` {
		t.Fatalf("unknown action: %d %s", r.status, r.raw)
	}
	r = e.do("GET", "/api/3/action/package_create?name=x", "", nil)
	if r.status != 400 || string(r.raw) != `"Bad request - JSON Error: Invalid request. Please use POST method for your request"` {
		t.Fatalf("GET of POST action: %d %s", r.status, r.raw)
	}
	r = e.do("GET", "/api/3/action/package_show?id=missing", "", nil)
	if r.status != 404 || r.errType() != "Not Found Error" || r.body["success"] != false {
		t.Fatalf("404: %d %s", r.status, r.raw)
	}
	r = e.ckanapi("package_search", "", map[string]any{"limit": 5})
	if r.status != 400 || r.errType() != "Search Query Error" {
		t.Fatalf("search limit: %d %s", r.status, r.raw)
	}
}

// TestCKANAPIDumpLoadAndPaging replays ckanapi's dump datasets --all, load
// datasets (into a second catalog database) and search datasets paging.
func TestCKANAPIDumpLoadAndPaging(t *testing.T) {
	src := newEnv(t, envOpts{})
	mustOK(t, src.ckanapi("organization_create", "tok-sysadmin", map[string]any{"name": "lab", "title": "Lab"}))
	for i := range 7 {
		mustOK(t, src.ckanapi("package_create", "tok-sysadmin", map[string]any{
			"name": fmt.Sprintf("set-%02d", i), "owner_org": "lab", "notes": "assay data",
			"tags":      []any{map[string]any{"name": "assay"}},
			"resources": []any{map[string]any{"url": "http://x.org/d.csv", "name": "data", "datastore_active": false}},
		}))
	}
	// dump --all: package_list with ckanapi's keys, then package_show per name
	names := mustOK(t, src.ckanapi("package_list", "tok-sysadmin", map[string]any{"include_private": false, "include_drafts": false, "include_deleted": false})).([]any)
	if len(names) != 7 {
		t.Fatalf("package_list: %v", names)
	}
	var dump []map[string]any
	for _, n := range names {
		r := src.ckanapi("package_show", "tok-sysadmin", map[string]any{"id": n, "include_datasets": false, "include_password_hash": true, "include_users": false})
		dump = append(dump, mustOK(t, r).(map[string]any))
	}

	// load into another catalog: show by id, show by name, then create
	dst := newEnv(t, envOpts{})
	mustOK(t, dst.ckanapi("organization_create", "tok-sysadmin", map[string]any{"name": "lab", "title": "Lab"}))
	load := func(rec map[string]any) string {
		r := dst.ckanapi("package_show", "tok-sysadmin", map[string]any{"id": rec["id"], "include_datasets": false, "include_password_hash": true, "include_users": true})
		if r.errType() == "Not Found Error" {
			r = dst.ckanapi("package_show", "tok-sysadmin", map[string]any{"id": rec["name"]})
		}
		if r.body["success"] == true {
			rec["id"] = r.result().(map[string]any)["id"]
			mustOK(t, dst.ckanapi("package_update", "tok-sysadmin", rec))
			return "update"
		}
		if r.errType() != "Not Found Error" {
			t.Fatalf("load show: %s", r.raw)
		}
		// the whole record, server fields included; owner_org names the source org id
		rec["owner_org"] = "lab"
		got := mustOK(t, dst.ckanapi("package_create", "tok-sysadmin", rec)).(map[string]any)
		if got["id"] != rec["id"] {
			t.Fatalf("sysadmin-supplied id not kept: %v vs %v", got["id"], rec["id"])
		}
		return "create"
	}
	for _, rec := range dump {
		if op := load(rec); op != "create" {
			t.Fatalf("first load: %s", op)
		}
	}
	for _, rec := range dump {
		if op := load(rec); op != "update" {
			t.Fatalf("second load: %s", op)
		}
	}
	loaded := mustOK(t, dst.ckanapi("package_show", "", map[string]any{"id": "set-03"})).(map[string]any)
	if len(loaded["resources"].([]any)) != 1 || loaded["tags"].([]any)[0].(map[string]any)["name"] != "assay" {
		t.Fatalf("loaded record: %v", loaded)
	}

	// search datasets: rows/start paging until an empty page
	var seen []string
	for start := 0; ; {
		q := url.Values{"q": {"*:*"}, "rows": {"3"}, "start": {fmt.Sprint(start)}, "sort": {"name asc"}}
		page := mustOK(t, dst.do("GET", "/api/action/package_search?"+q.Encode(), "", nil)).(map[string]any)
		results := page["results"].([]any)
		if len(results) == 0 {
			break
		}
		for _, r := range results {
			seen = append(seen, r.(map[string]any)["name"].(string))
		}
		start += len(results)
	}
	if len(seen) != 7 || !sort.StringsAreSorted(seen) {
		t.Fatalf("paging: %v", seen)
	}
	b, _ := json.Marshal(seen)
	t.Logf("paged: %s", b)
}

// TestGRPCTransportServesTheSameAPI runs the catalog over the alternative
// gRPC transport.
func TestGRPCTransportServesTheSameAPI(t *testing.T) {
	e := newEnv(t, envOpts{cfg: func(c *Config) { c.Transport = "grpc" }})
	mustOK(t, e.ckanapi("organization_create", "tok-sysadmin", map[string]any{"name": "lab"}))
	mustOK(t, e.ckanapi("package_create", "tok-sysadmin", map[string]any{"name": "over-grpc", "owner_org": "lab"}))
	d := mustOK(t, e.do("GET", "/api/3/action/package_show?id=over-grpc", "", nil)).(map[string]any)
	if d["name"] != "over-grpc" {
		t.Fatal(d)
	}
	if r := e.do("GET", "/api/3/action/nope", "", nil); r.status != 400 {
		t.Fatal(r.status)
	}
}
