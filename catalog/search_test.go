package catalog

import (
	"fmt"
	"testing"
)

func TestPackageSearch(t *testing.T) {
	f := newFixture(t)
	// users who are not sysadmins create organizations here (ckan.auth.user_create_organizations)
	f.withOptions(Options{Auth: AuthOptions{UserCreateOrganizations: true}})
	f.ok("admin", "organization_create", map[string]any{"name": "heart-lab", "title": "Heart Lab"})
	mk := func(name, title, notes, org string, tags ...string) {
		var ts []any
		for _, tg := range tags {
			ts = append(ts, map[string]any{"name": tg})
		}
		f.ok("sysadmin", "package_create", map[string]any{"name": name, "title": title, "notes": notes, "owner_org": org, "tags": ts, "license_id": "cc-by",
			"resources": []any{map[string]any{"url": "http://x.org/" + name + ".csv", "description": "raw " + name}}})
	}
	mk("herg-blockers", "hERG blockers", "Potassium channel inhibition", "tox-lab", "cardiotox", "herg")
	mk("liver-enzymes", "Liver enzymes", "Mentions herg once in the notes", "tox-lab", "hepatotox")
	mk("qt-prolongation", "QT prolongation", "Clinical cardiotoxicity", "heart-lab", "cardiotox")

	// relevance: a name/title match outranks a notes match
	s := f.ok("", "package_search", map[string]any{"q": "herg"})
	res := s["results"].([]any)
	if s["count"].(float64) != 2 || res[0].(map[string]any)["name"] != "herg-blockers" {
		t.Fatalf("relevance: %v", names(res))
	}
	// several terms: all must match (mm for 2 terms)
	if s := f.ok("", "package_search", map[string]any{"q": "clinical cardiotoxicity"}); s["count"].(float64) != 1 {
		t.Fatalf("two terms: %v", s["count"])
	}
	// fq: field terms, quoted values, negation, several terms
	cases := map[string]int{
		`tags:cardiotox`:                         2,
		`tags:cardiotox -organization:heart-lab`: 1,
		`organization:"heart-lab"`:               1,
		`res_format:CSV license_id:cc-by`:        3,
		`tags:(herg OR hepatotox)`:               2,
		`name:liver-enzymes`:                     1,
		`-tags:cardiotox`:                        1,
	}
	for fq, want := range cases {
		if s := f.ok("", "package_search", map[string]any{"fq": fq}); int(s["count"].(float64)) != want {
			t.Errorf("fq %s: got %v want %d", fq, s["count"], want)
		}
	}
	// Lucene q with a field, resource descriptions are searchable
	if s := f.ok("", "package_search", map[string]any{"q": "res_description:raw"}); s["count"].(float64) != 3 {
		t.Errorf("res_description: %v", s["count"])
	}
	// sort and paging
	s = f.ok("", "package_search", map[string]any{"sort": "name desc", "rows": "2", "start": "1"})
	if got := names(s["results"].([]any)); fmt.Sprint(got) != "[liver-enzymes herg-blockers]" || s["count"].(float64) != 3 {
		t.Fatalf("sort/paging: %v", got)
	}
	s = f.ok("", "package_search", map[string]any{"sort": "title asc"})
	if got := names(s["results"].([]any)); fmt.Sprint(got) != "[herg-blockers liver-enzymes qt-prolongation]" {
		t.Fatalf("title asc: %v", got)
	}
	// default sort: newest modified first
	s = f.ok("", "package_search", nil)
	if got := names(s["results"].([]any)); got[0] != "qt-prolongation" || s["sort"] != "score desc, metadata_modified desc" {
		t.Fatalf("default sort: %v %v", got, s["sort"])
	}
	if len(s["facets"].(map[string]any)) != 0 || len(s["search_facets"].(map[string]any)) != 0 {
		t.Fatalf("facets without facet.field: %v", s["facets"])
	}
	// facets
	s = f.ok("", "package_search", map[string]any{"facet.field": `["tags","organization","license_id"]`, "facet.limit": 2})
	tags := s["facets"].(map[string]any)["tags"].(map[string]any)
	if len(tags) != 2 || tags["cardiotox"].(float64) != 2 {
		t.Fatalf("tag facet: %v", tags)
	}
	org := s["search_facets"].(map[string]any)["organization"].(map[string]any)
	items := org["items"].([]any)
	if org["title"] != "organization" || items[0].(map[string]any)["display_name"] != "Toxicology Lab" || items[1].(map[string]any)["display_name"] != "Heart Lab" {
		t.Fatalf("organization search_facets (display_name descending): %v", items)
	}
	lic := s["search_facets"].(map[string]any)["license_id"].(map[string]any)["items"].([]any)[0].(map[string]any)
	if lic["display_name"] != "Creative Commons Attribution" || lic["count"].(float64) != 3 {
		t.Fatalf("license facet: %v", lic)
	}
	// rows are clamped to 1000; bad parameters
	if s := f.ok("", "package_search", map[string]any{"rows": 5000}); len(s["results"].([]any)) != 3 {
		t.Fatal("rows clamp")
	}
	e := f.fail("", "package_search", map[string]any{"limit": 5, "offset": 1}, 400)
	if e.Message != `Search Query is invalid: "Invalid search parameters: ['limit', 'offset']"` {
		t.Fatal(e.Message)
	}
	f.fail("", "package_search", map[string]any{"sort": "bogus desc"}, 409)
	// a change is found by the very next request
	f.ok("sysadmin", "package_patch", map[string]any{"id": "liver-enzymes", "title": "Hepatic transaminases"})
	if s := f.ok("", "package_search", map[string]any{"q": "transaminases"}); s["count"].(float64) != 1 {
		t.Fatal("change not found at once")
	}
	// drafts appear only with include_drafts, for those who may see them
	f.ok("sysadmin", "package_create", map[string]any{"name": "draft-set", "owner_org": "tox-lab", "state": "draft"})
	if s := f.ok("member", "package_search", map[string]any{"q": "name:draft-set"}); s["count"].(float64) != 0 {
		t.Fatal("draft without include_drafts")
	}
	if s := f.ok("member", "package_search", map[string]any{"q": "name:draft-set", "include_drafts": "true"}); s["count"].(float64) != 1 {
		t.Fatal("draft hidden from member")
	}
	if s := f.ok("outsider", "package_search", map[string]any{"q": "name:draft-set", "include_drafts": "true"}); s["count"].(float64) != 0 {
		t.Fatal("draft shown to outsider")
	}
	// tag_list and license_list
	tl := f.list("", "tag_list", nil)
	if fmt.Sprint(tl) != "[cardiotox hepatotox herg]" {
		t.Fatalf("tag_list: %v", tl)
	}
	if l := f.list("", "license_list", nil); len(l) != 15 {
		t.Fatalf("license_list: %d", len(l))
	}
	if st := f.ok("", "status_show", nil); st["ckan_version"] != CKANVersion || st["site_url"] != site {
		t.Fatalf("status_show: %v", st)
	}
}

func names(results []any) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.(map[string]any)["name"].(string))
	}
	return out
}
