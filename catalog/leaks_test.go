package catalog

import (
	"fmt"
	"slices"
	"testing"
)

// leakFixture has one public and one private dataset in tox-lab (and in
// the group tox-group); only the private one has the tag "secret-tag",
// the format "SECRETFMT" and the resource name "secret-res".
func leakFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.ok("sysadmin", "group_create", map[string]any{"name": "tox-group", "users": []any{map[string]any{"name": "editor", "capacity": "editor"}}})
	f.ok("editor", "package_create", map[string]any{"name": "open-set", "owner_org": "tox-lab",
		"groups": []any{map[string]any{"name": "tox-group"}}, "tags": []any{map[string]any{"name": "open-tag"}},
		"resources": []any{map[string]any{"url": "http://example.org/a.csv", "format": "CSV", "name": "open-res"}}})
	f.ok("editor", "package_create", map[string]any{"name": "closed-set", "owner_org": "tox-lab", "private": true,
		"groups": []any{map[string]any{"name": "tox-group"}}, "tags": []any{map[string]any{"name": "secret-tag"}},
		"resources": []any{map[string]any{"url": "http://example.org/b.bin", "format": "SECRETFMT", "name": "secret-res"}}})
	return f
}

// Private metadata does not leak through lists, counts, autocompletes,
// facets and shows: each counts and lists with the caller's permissions.
func TestPrivateMetadataDoesNotLeak(t *testing.T) {
	base := leakFixture(t)
	outsiders := []string{"", "outsider"}
	// each subtest reports through its own t
	on := func(t *testing.T) *fixture { c := *base; c.t = t; return &c }

	t.Run("format_autocomplete", func(t *testing.T) {
		f := on(t)
		for _, who := range outsiders {
			if l := f.list(who, "format_autocomplete", map[string]any{"q": "secret"}); len(l) != 0 {
				t.Errorf("%q: %v", who, l)
			}
		}
		if l := f.list("member", "format_autocomplete", map[string]any{"q": "secret"}); fmt.Sprint(l) != "[secretfmt]" {
			t.Errorf("member: %v", l)
		}
	})

	t.Run("tag_show", func(t *testing.T) {
		f := on(t)
		for _, who := range outsiders {
			f.fail(who, "tag_show", map[string]any{"id": "secret-tag"}, 404)
		}
		f.ok("member", "tag_show", map[string]any{"id": "secret-tag"})
		f.ok("", "tag_show", map[string]any{"id": "open-tag"})
	})

	t.Run("tag_delete", func(t *testing.T) {
		f := on(t)
		// the same refusal whether the tag exists or not
		for _, tag := range []string{"secret-tag", "no-such-tag"} {
			f.fail("", "tag_delete", map[string]any{"id": tag}, 403)
			f.fail("outsider", "tag_delete", map[string]any{"id": tag}, 403)
		}
	})

	t.Run("organization_list_for_user", func(t *testing.T) {
		f := on(t)
		// the editor's organizations, counted with the caller's permissions
		l := f.list("outsider", "organization_list_for_user", map[string]any{"id": "editor"})
		if len(l) != 1 || l[0].(map[string]any)["package_count"] != float64(1) {
			t.Errorf("outsider: %v", l)
		}
		l = f.list("editor", "organization_list_for_user", nil)
		if len(l) != 1 || l[0].(map[string]any)["package_count"] != float64(2) {
			t.Errorf("editor: %v", l)
		}
	})

	t.Run("user_package_counts", func(t *testing.T) {
		f := on(t)
		editor := f.users["editor"].UserID
		if m := f.ok("sysadmin", "user_package_counts", nil); m[editor] != float64(1) {
			t.Errorf("public: %v", m)
		}
		if m := f.ok("sysadmin", "user_package_counts", map[string]any{"include_private": true}); m[editor] != float64(2) {
			t.Errorf("with private: %v", m)
		}
		f.fail("editor", "user_package_counts", nil, 403)
		// the gateway asks as a sysadmin without a name
		if m, e := callSvc(t, f.svc, Caller{Sysadmin: true}, "user_package_counts", nil); e != nil || m.(map[string]any)[editor] != float64(1) {
			t.Errorf("the gateway's call: %v %v", m, e)
		}
	})

	t.Run("organization and group counts", func(t *testing.T) {
		f := on(t)
		for _, who := range outsiders {
			l := f.list(who, "organization_list", map[string]any{"all_fields": true})
			if len(l) != 1 || l[0].(map[string]any)["package_count"] != float64(1) {
				t.Errorf("%q organization_list: %v", who, l)
			}
			if o := f.ok(who, "organization_show", map[string]any{"id": "tox-lab", "include_datasets": true}); o["package_count"] != float64(1) || len(o["packages"].([]any)) != 1 {
				t.Errorf("%q organization_show: %v %v", who, o["package_count"], o["packages"])
			}
			l = f.list(who, "group_list", map[string]any{"all_fields": true})
			if len(l) != 1 || l[0].(map[string]any)["package_count"] != float64(1) {
				t.Errorf("%q group_list: %v", who, l)
			}
			if g := f.ok(who, "group_show", map[string]any{"id": "tox-group", "include_datasets": true}); g["package_count"] != float64(1) || len(g["packages"].([]any)) != 1 {
				t.Errorf("%q group_show: %v", who, g["package_count"])
			}
			if l := f.list(who, "member_list", map[string]any{"id": "tox-lab", "object_type": "package"}); len(l) != 1 {
				t.Errorf("%q member_list: %v", who, l)
			}
		}
		if o := f.ok("member", "organization_show", map[string]any{"id": "tox-lab"}); o["package_count"] != float64(2) {
			t.Errorf("member: %v", o["package_count"])
		}
	})

	t.Run("tags and search", func(t *testing.T) {
		f := on(t)
		for _, who := range outsiders {
			if l := f.list(who, "tag_list", nil); slices.Contains(l, any("secret-tag")) {
				t.Errorf("%q tag_list: %v", who, l)
			}
			if l := f.list(who, "tag_autocomplete", map[string]any{"query": "secret"}); len(l) != 0 {
				t.Errorf("%q tag_autocomplete: %v", who, l)
			}
			if s := f.ok(who, "tag_search", map[string]any{"query": "secret"}); s["count"] != float64(0) {
				t.Errorf("%q tag_search: %v", who, s)
			}
			s := f.ok(who, "package_search", map[string]any{"include_private": true, "facet.field": `["tags","res_format","organization","groups"]`})
			facets := s["facets"].(map[string]any)
			if s["count"] != float64(1) || facets["tags"].(map[string]any)["secret-tag"] != nil ||
				facets["res_format"].(map[string]any)["SECRETFMT"] != nil || facets["organization"].(map[string]any)["tox-lab"] != float64(1) ||
				facets["groups"].(map[string]any)["tox-group"] != float64(1) {
				t.Errorf("%q package_search: %v %v", who, s["count"], facets)
			}
			if r := f.ok(who, "resource_search", map[string]any{"query": "name:secret"}); r["count"] != float64(0) {
				t.Errorf("%q resource_search: %v", who, r)
			}
			if l := f.list(who, "package_autocomplete", map[string]any{"q": "closed"}); len(l) != 0 {
				t.Errorf("%q package_autocomplete: %v", who, l)
			}
			if l := f.list(who, "recently_changed_packages_activity_list", nil); len(l) != 1 {
				t.Errorf("%q recently changed: %d activities", who, len(l))
			}
		}
		s := f.ok("member", "package_search", map[string]any{"include_private": true, "facet.field": `["tags"]`})
		if s["count"] != float64(2) || s["facets"].(map[string]any)["tags"].(map[string]any)["secret-tag"] != float64(1) {
			t.Errorf("member package_search: %v", s)
		}
	})
}
