package catalog

import (
	"encoding/json"
	"testing"
)

func TestPackageRevise(t *testing.T) {
	f := newFixture(t)
	d := f.ok("editor", "package_create", map[string]any{"name": "xyz", "owner_org": "tox-lab", "notes": "old notes",
		"tags": []any{map[string]any{"name": "herg"}},
		"resources": []any{
			map[string]any{"url": "http://example.org/a.csv", "name": "first"},
			map[string]any{"url": "http://example.org/b.csv", "name": "second"},
		}})
	id := d["id"].(string)
	res := d["resources"].([]any)
	firstID, secondID := res[0].(map[string]any)["id"].(string), res[1].(map[string]any)["id"].(string)
	pkg := func(out map[string]any) map[string]any { return out["package"].(map[string]any) }

	// match + update
	out := f.ok("editor", "package_revise", map[string]any{"match": map[string]any{"notes": "old notes", "name": "xyz"}, "update": map[string]any{"notes": "new notes"}})
	if p := pkg(out); p["notes"] != "new notes" || p["id"] != id || len(p["resources"].([]any)) != 2 || len(p["tags"].([]any)) != 1 {
		t.Fatalf("revise: %v", p)
	}
	// the match no longer holds: nothing changes
	e := f.fail("editor", "package_revise", map[string]any{"match": map[string]any{"notes": "old notes", "name": "xyz"}, "update": map[string]any{"notes": "lost"}}, 409)
	if errJSON(e) != `{"__type":"Validation Error","match":["notes"]}` {
		t.Fatal(errJSON(e))
	}
	// flattened keys, as strings (a form or query), JSON decoded where they hold JSON
	out = f.ok("editor", "package_revise", map[string]any{"match__name": "xyz", "match__resources__0__name": "first",
		"update__resources__-1__name": "last one", "update__title": "Revised"})
	p := pkg(out)
	if p["title"] != "Revised" || p["resources"].([]any)[1].(map[string]any)["name"] != "last one" {
		t.Fatalf("flattened: %v", p)
	}
	// extend a list, then reach the new item in the same call; by id prefix
	out = f.ok("editor", "package_revise", map[string]any{"match__id": id,
		"update__resources__extend":          `[{"name": "new resource", "url": "http://example.com/c.csv"}]`,
		"update__resources__2__format":       "CSV",
		"update__resources__" + secondID[:8]: map[string]any{"description": "right one for sure"}})
	rs := pkg(out)["resources"].([]any)
	if len(rs) != 3 || rs[2].(map[string]any)["name"] != "new resource" || rs[2].(map[string]any)["format"] != "CSV" ||
		rs[1].(map[string]any)["description"] != "right one for sure" || rs[1].(map[string]any)["id"] != secondID {
		t.Fatalf("extend: %v", rs)
	}
	// filter: drop the first resource; include: only the names
	out = f.ok("editor", "package_revise", map[string]any{"match": `{"id": "` + id + `"}`, "filter": "-resources__0",
		"include": []any{"-package__resources__0__url", "+package__name", "+package__resources", "-package__*"}})
	p = pkg(out)
	if len(p) != 2 || p["name"] != "xyz" {
		t.Fatalf("include: %v", p)
	}
	rs = p["resources"].([]any)
	if len(rs) != 2 || rs[0].(map[string]any)["id"] != secondID || rs[0].(map[string]any)["url"] != nil {
		t.Fatalf("filter: %v", rs)
	}
	// the dropped resource is gone from the dataset
	f.fail("", "resource_show", map[string]any{"id": firstID}, 404)
	// "+resources", "-*": fields at the dataset level are cleared, id kept
	out = f.ok("editor", "package_revise", map[string]any{"match": map[string]any{"id": id}, "filter": []any{"+resources", "+owner_org", "+name", "-*"},
		"update": map[string]any{"title": "Fresh Start"}})
	if p := pkg(out); p["notes"] != nil || p["title"] != "Fresh Start" || len(p["tags"].([]any)) != 0 || len(p["resources"].([]any)) != 2 {
		t.Fatalf("filter -*: %v", p)
	}
	// include "-*" returns nothing
	if out := f.ok("editor", "package_revise", map[string]any{"match__id": id, "include": "-*"}); len(out) != 0 {
		t.Fatalf("include -*: %v", out)
	}

	// documented errors
	e = f.fail("editor", "package_revise", map[string]any{"update": map[string]any{"notes": "x"}}, 409)
	if errJSON(e) != `{"__type":"Validation Error","match__id":["Missing value"]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("editor", "package_revise", map[string]any{"match": "[1]", "filter": map[string]any{}, "extra": 1}, 409)
	if errJSON(e) != `{"__type":"Validation Error","extra":["The input field extra was not expected."],"filter":["Not a list"],"match":["Must be a dict"]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("editor", "package_revise", map[string]any{"match__id": id, "update__resources__9__name": "x"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","resources__9__name":["Unmatched key resources__9"]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("editor", "package_revise", map[string]any{"match__id": id, "update": map[string]any{"resources": map[string]any{"a": 1}}}, 409)
	if errJSON(e) != `{"__type":"Validation Error","update":["Expected list for resources"]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("editor", "package_revise", map[string]any{"match__id": id, "match__resources__7__name": "x"}, 400)
	if e.Type != "Integrity Error" || e.Message != "Unmatched key resources__7" {
		t.Fatal(errJSON(e))
	}
	// validation of the result is package_update's
	e = f.fail("editor", "package_revise", map[string]any{"match__id": id, "update__name": "A B"}, 409)
	if b, _ := json.Marshal(e.Fields["name"]); string(b) != `["Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_"]` {
		t.Fatal(errJSON(e))
	}
	// files are not taken through flattened keys
	e = f.fail("editor", "package_revise", map[string]any{"match__id": id, "update__resources__0__upload": "data.csv"}, 409)
	if b, _ := json.Marshal(e.Fields["resources"]); string(b) != `[{"upload":["Send the file as a multipart/form-data field named upload"]},{}]` {
		t.Fatal(errJSON(e))
	}
	f.fail("editor", "package_revise", map[string]any{"match__id": "nope"}, 404)
	e = f.fail("member", "package_revise", map[string]any{"match__id": id, "update__notes": "x"}, 403)
	if e.Message != "Access denied: User member not authorized to edit package "+id {
		t.Fatal(e.Message)
	}
	e = f.fail("", "package_revise", map[string]any{"match__id": id, "update__notes": "x"}, 403)
	if e.Message != "Access denied: Action package_revise requires an authenticated user" {
		t.Fatal(e.Message)
	}
	f.ok("editor", "package_patch", map[string]any{"id": id, "private": true})
	e = f.fail("outsider", "package_revise", map[string]any{"match__id": id}, 403)
	if e.Message != "Access denied: User outsider not authorized to read package "+id {
		t.Fatal(e.Message)
	}
}

// A revision keeps what it does not name: groups, vocabulary tags,
// collaborators.
func TestPackageReviseKeepsGroupsTagsAndCollaborators(t *testing.T) {
	f := newFixture(t)
	f.withOptions(Options{AllowCollaborators: true, Auth: AuthOptions{UserCreateGroups: true}})
	v := f.ok("sysadmin", "vocabulary_create", map[string]any{"name": "toxin", "tags": []any{map[string]any{"name": "microcystin"}}})
	f.ok("editor", "group_create", map[string]any{"name": "hepatotox"})
	f.ok("editor", "package_create", map[string]any{"name": "kept", "owner_org": "tox-lab", "private": true,
		"groups": []any{map[string]any{"name": "hepatotox"}},
		"tags":   []any{map[string]any{"name": "free"}, map[string]any{"name": "microcystin", "vocabulary_id": v["id"]}}})
	f.ok("admin", "package_collaborator_create", map[string]any{"id": "kept", "user_id": "outsider", "capacity": "editor"})
	out := f.ok("outsider", "package_revise", map[string]any{"match__name": "kept", "update__notes": "revised by a collaborator"})
	p := out["package"].(map[string]any)
	if p["notes"] != "revised by a collaborator" || tagsOf(p) != tagsOf(f.ok("admin", "package_show", map[string]any{"id": "kept"})) || len(p["tags"].([]any)) != 2 {
		t.Fatalf("tags: %v", tagsOf(p))
	}
	if gs := p["groups"].([]any); len(gs) != 1 || gs[0].(map[string]any)["name"] != "hepatotox" {
		t.Fatalf("groups: %v", p["groups"])
	}
	if l := f.list("admin", "package_collaborator_list", map[string]any{"id": "kept"}); len(l) != 1 {
		t.Fatalf("collaborators: %v", l)
	}
}
