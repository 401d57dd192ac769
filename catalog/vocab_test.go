package catalog

import (
	"fmt"
	"testing"
)

// tagsOf lists a dataset dict's tags as name/vocabulary pairs.
func tagsOf(d map[string]any) string {
	var out []string
	for _, t := range d["tags"].([]any) {
		m := t.(map[string]any)
		out = append(out, fmt.Sprintf("%v/%v", m["name"], m["vocabulary_id"]))
	}
	return fmt.Sprint(out)
}

func TestVocabularies(t *testing.T) {
	f := newFixture(t)

	// create: sysadmins only; name rules; tags validated
	e := f.fail("admin", "vocabulary_create", map[string]any{"name": "toxin"}, 403)
	if e.Message != "Access denied" {
		t.Fatal(e.Message)
	}
	f.fail("", "vocabulary_create", map[string]any{"name": "toxin"}, 403)
	v := f.ok("sysadmin", "vocabulary_create", map[string]any{"name": "toxin",
		"tags": []any{map[string]any{"name": "microcystin"}, map[string]any{"name": "saxitoxin"}}})
	vid := v["id"].(string)
	if v["name"] != "toxin" || len(v["tags"].([]any)) != 2 {
		t.Fatalf("vocabulary_create: %v", v)
	}
	if tg := v["tags"].([]any)[0].(map[string]any); tg["vocabulary_id"] != vid || tg["name"] != "microcystin" || tg["display_name"] != "microcystin" || tg["id"] == "" {
		t.Fatalf("vocabulary tag: %v", tg)
	}
	e = f.fail("sysadmin", "vocabulary_create", map[string]any{"name": "toxin"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","name":["That vocabulary name is already in use."]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("sysadmin", "vocabulary_create", map[string]any{"name": "x", "tags": []any{map[string]any{"name": "ok"}, map[string]any{"name": "b@d"}}}, 409)
	if errJSON(e) != `{"__type":"Validation Error","name":["Name must be at least 2 characters long"],"tags":[{},{"name":["Tag \"b@d\" must be alphanumeric characters or symbols: -_."]}]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("sysadmin", "vocabulary_create", map[string]any{"id": "abc", "name": "medium"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","id":["The input field id was not expected."]}` {
		t.Fatal(errJSON(e))
	}
	f.ok("sysadmin", "vocabulary_create", map[string]any{"name": "medium", "tags": []any{map[string]any{"name": "BG-11"}}})

	// show / list
	if s := f.ok("", "vocabulary_show", map[string]any{"id": "toxin"}); s["id"] != vid {
		t.Fatalf("show by name: %v", s)
	}
	e = f.fail("", "vocabulary_show", map[string]any{"id": "nope"}, 404)
	if e.Message != `Not found: Could not find vocabulary "nope"` {
		t.Fatal(e.Message)
	}
	e = f.fail("", "vocabulary_show", nil, 409)
	if errJSON(e) != `{"__type":"Validation Error","id":"id not in data"}` {
		t.Fatal(errJSON(e))
	}
	if l := f.list("", "vocabulary_list", nil); len(l) != 2 || l[0].(map[string]any)["name"] != "medium" {
		t.Fatalf("vocabulary_list: %v", l)
	}

	// tag_create / tag_list?vocabulary_id
	tg := f.ok("sysadmin", "tag_create", map[string]any{"name": "anatoxin-a", "vocabulary_id": vid})
	if tg["vocabulary_id"] != vid || tg["name"] != "anatoxin-a" {
		t.Fatalf("tag_create: %v", tg)
	}
	e = f.fail("sysadmin", "tag_create", map[string]any{"name": "anatoxin-a", "vocabulary_id": vid}, 409)
	if errJSON(e) != `{"__type":"Validation Error","vocabulary_id":["Tag anatoxin-a already belongs to vocabulary `+vid+`"]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("sysadmin", "tag_create", map[string]any{"name": "x1", "vocabulary_id": "nope"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","vocabulary_id":["Tag vocabulary was not found."]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("sysadmin", "tag_create", map[string]any{"name": "x1"}, 409)
	if errJSON(e) != `{"__type":"Validation Error","vocabulary_id":["Missing value"]}` {
		t.Fatal(errJSON(e))
	}
	f.fail("admin", "tag_create", map[string]any{"name": "x1", "vocabulary_id": vid}, 403)
	if l := f.list("", "tag_list", map[string]any{"vocabulary_id": "toxin"}); fmt.Sprint(l) != "[anatoxin-a microcystin saxitoxin]" {
		t.Fatalf("tag_list vocabulary: %v", l)
	}
	if l := f.list("", "tag_list", map[string]any{"vocabulary_id": vid, "query": "toxin", "all_fields": true}); len(l) != 2 || l[0].(map[string]any)["vocabulary_id"] != vid {
		t.Fatalf("tag_list vocabulary all_fields: %v", l)
	}
	e = f.fail("", "tag_list", map[string]any{"vocabulary_id": "nope"}, 404)
	if e.Message != "Not found: could not find vocabulary 'nope'" {
		t.Fatal(e.Message)
	}

	// datasets: vocabulary tags must be in the vocabulary; free tags as before
	tags := func(extra ...map[string]any) []any {
		out := []any{map[string]any{"name": "cyanobacteria"}}
		for _, x := range extra {
			out = append(out, x)
		}
		return out
	}
	e = f.fail("editor", "package_create", map[string]any{"name": "bloom", "owner_org": "tox-lab",
		"tags": tags(map[string]any{"name": "ricin", "vocabulary_id": vid})}, 409)
	if errJSON(e) != `{"__type":"Validation Error","tags":["Tag ricin does not belong to vocabulary toxin"]}` {
		t.Fatal(errJSON(e))
	}
	e = f.fail("editor", "package_create", map[string]any{"name": "bloom", "owner_org": "tox-lab",
		"tags": tags(map[string]any{"name": "ricin", "vocabulary_id": "nope"})}, 409)
	if errJSON(e) != `{"__type":"Validation Error","tags":["Tag vocabulary was not found."]}` {
		t.Fatal(errJSON(e))
	}
	d := f.ok("editor", "package_create", map[string]any{"name": "bloom", "owner_org": "tox-lab",
		"tags": tags(map[string]any{"name": "microcystin", "vocabulary_id": vid}, map[string]any{"name": "BG-11", "vocabulary_id": "medium"})})
	if tagsOf(d) != "[BG-11/"+f.ok("", "vocabulary_show", map[string]any{"id": "medium"})["id"].(string)+" cyanobacteria/<nil> microcystin/"+vid+"]" || d["num_tags"].(float64) != 3 {
		t.Fatalf("dataset tags: %v", tagsOf(d))
	}
	f.ok("editor", "package_create", map[string]any{"name": "bloom-2", "owner_org": "tox-lab",
		"tags": []any{map[string]any{"name": "saxitoxin", "vocabulary_id": vid}}})
	// package_patch keeps the vocabulary tags
	if d := f.ok("editor", "package_patch", map[string]any{"id": "bloom", "notes": "a bloom"}); d["num_tags"].(float64) != 3 {
		t.Fatalf("patch lost tags: %v", tagsOf(d))
	}

	// search: vocab_<name> fields for fq and facets; tags holds free tags only
	s := f.ok("", "package_search", map[string]any{"fq": `vocab_toxin:"microcystin"`, "facet.field": `["vocab_toxin","tags"]`})
	if s["count"].(float64) != 1 {
		t.Fatalf("fq vocab_toxin: %v", s["count"])
	}
	s = f.ok("", "package_search", map[string]any{"facet.field": `["vocab_toxin","tags"]`})
	facets := s["facets"].(map[string]any)
	if fmt.Sprint(facets["vocab_toxin"]) != "map[microcystin:1 saxitoxin:1]" || fmt.Sprint(facets["tags"]) != "map[cyanobacteria:1]" {
		t.Fatalf("facets: %v", facets)
	}
	if s := f.ok("", "package_search", map[string]any{"q": "saxitoxin"}); s["count"].(float64) != 1 {
		t.Fatalf("q on a vocabulary tag: %v", s["count"])
	}
	if l := f.list("", "tag_list", nil); fmt.Sprint(l) != "[cyanobacteria]" {
		t.Fatalf("free tag_list: %v", l)
	}

	// tag_show: vocabulary tags by name with vocabulary_id, free tags by name
	ts := f.ok("", "tag_show", map[string]any{"id": "microcystin", "vocabulary_id": "toxin", "include_datasets": true})
	if ts["vocabulary_id"] != vid || len(ts["packages"].([]any)) != 1 {
		t.Fatalf("tag_show: %v", ts)
	}
	f.fail("", "tag_show", map[string]any{"id": "microcystin"}, 404) // not a free tag
	if ts := f.ok("", "tag_show", map[string]any{"id": "cyanobacteria"}); ts["vocabulary_id"] != nil {
		t.Fatalf("free tag_show: %v", ts)
	}

	// vocabulary_update renames (re-indexing) and replaces the tags;
	// tags taken out leave the datasets
	f.fail("admin", "vocabulary_update", map[string]any{"id": vid, "name": "toxins"}, 403)
	u := f.ok("sysadmin", "vocabulary_update", map[string]any{"id": vid, "name": "toxins",
		"tags": []any{map[string]any{"name": "microcystin"}, map[string]any{"name": "anatoxin-a"}}})
	if u["name"] != "toxins" || len(u["tags"].([]any)) != 2 {
		t.Fatalf("vocabulary_update: %v", u)
	}
	if s := f.ok("", "package_search", map[string]any{"fq": `vocab_toxins:microcystin`}); s["count"].(float64) != 1 {
		t.Fatalf("renamed vocabulary not re-indexed: %v", s["count"])
	}
	if d := f.ok("", "package_show", map[string]any{"id": "bloom-2"}); d["num_tags"].(float64) != 0 {
		t.Fatalf("removed tag still on dataset: %v", tagsOf(d))
	}

	// tag_delete and vocabulary_delete
	e = f.fail("sysadmin", "tag_delete", map[string]any{"id": "nope", "vocabulary_id": vid}, 404)
	if e.Message != `Not found: Could not find tag "nope"` {
		t.Fatal(e.Message)
	}
	f.fail("admin", "tag_delete", map[string]any{"id": "microcystin", "vocabulary_id": vid}, 403)
	f.ok("sysadmin", "tag_delete", map[string]any{"id": "microcystin", "vocabulary_id": vid})
	if d := f.ok("", "package_show", map[string]any{"id": "bloom"}); tagsOf(d) != "[BG-11/"+d["tags"].([]any)[0].(map[string]any)["vocabulary_id"].(string)+" cyanobacteria/<nil>]" {
		t.Fatalf("after tag_delete: %v", tagsOf(d))
	}
	f.ok("sysadmin", "vocabulary_delete", map[string]any{"id": "medium"})
	if d := f.ok("", "package_show", map[string]any{"id": "bloom"}); tagsOf(d) != "[cyanobacteria/<nil>]" {
		t.Fatalf("after vocabulary_delete: %v", tagsOf(d))
	}
	f.fail("", "vocabulary_show", map[string]any{"id": "medium"}, 404)
	f.fail("sysadmin", "vocabulary_delete", map[string]any{"id": "medium"}, 404)
}

// TestVocabulariesSeenByAnotherInstance checks vocabularies written
// through one catalog are used by another on the same store and survive a
// restart.
func TestVocabulariesSeenByAnotherInstance(t *testing.T) {
	f := newFixture(t)
	other := f.open(Options{})
	v := f.ok("sysadmin", "vocabulary_create", map[string]any{"name": "toxin", "tags": []any{map[string]any{"name": "microcystin"}}})
	if _, cerr := callSvc(t, other, f.users["editor"], "package_create", map[string]any{"name": "bloom", "owner_org": "tox-lab",
		"tags": []any{map[string]any{"name": "microcystin", "vocabulary_id": v["id"]}}}); cerr != nil {
		t.Fatalf("other instance does not know the vocabulary: %v", cerr)
	}
	if s := f.ok("", "package_search", map[string]any{"fq": "vocab_toxin:microcystin"}); s["count"].(float64) != 1 {
		t.Fatalf("first instance: %v", s["count"])
	}
	restarted := f.open(Options{})
	got, cerr := callSvc(t, restarted, Caller{}, "package_search", map[string]any{"fq": "vocab_toxin:microcystin", "facet.field": `["vocab_toxin"]`})
	if cerr != nil || got.(map[string]any)["count"].(float64) != 1 {
		t.Fatalf("after restart: %v %v", got, cerr)
	}
	if _, cerr := callSvc(t, other, f.users["sysadmin"], "vocabulary_delete", map[string]any{"id": "toxin"}); cerr != nil {
		t.Fatal(cerr)
	}
	f.fail("", "vocabulary_show", map[string]any{"id": "toxin"}, 404)
	if s := f.ok("", "package_search", map[string]any{"fq": "vocab_toxin:microcystin"}); s["count"].(float64) != 0 {
		t.Fatalf("deleted vocabulary still searched: %v", s["count"])
	}
}
