package catalog

import (
	"strings"
	"testing"
)

// Names starting with ReservedDatasetPrefix are for sysadmins: an ordinary
// user can neither create such a dataset nor rename one to it (by
// package_update, package_patch or package_revise); a sysadmin can, and a
// dataset keeps a reserved name it has when others edit it.
func TestReservedDatasetNames(t *testing.T) {
	f := newFixture(t)
	want := `{"__type":"Validation Error","name":["Names starting with \"model-\" are reserved for the datasets of the models the gateway serves"]}`
	for _, user := range []string{"editor", "admin"} {
		e := f.fail(user, "package_create", map[string]any{"name": "model-herg", "owner_org": "tox-lab"}, 409)
		if got := errJSON(e); got != want {
			t.Fatalf("package_create as %s:\n got %s\nwant %s", user, got, want)
		}
	}
	d := f.ok("editor", "package_create", map[string]any{"name": "assay", "owner_org": "tox-lab"})
	for _, c := range []struct {
		action string
		data   map[string]any
	}{
		{"package_patch", map[string]any{"id": "assay", "name": "model-x"}},
		{"package_update", map[string]any{"id": d["id"], "name": "model-x", "owner_org": "tox-lab"}},
		{"package_revise", map[string]any{"match": `{"id": "` + d["id"].(string) + `"}`, "update": `{"name": "model-x"}`}},
	} {
		e := f.fail("editor", c.action, c.data, 409)
		if !strings.Contains(errJSON(e), `"name":["Names starting with \"model-\" are reserved`) {
			t.Fatalf("%s renaming to model-x: %s", c.action, errJSON(e))
		}
	}
	// Prefixes of other shapes are free.
	f.ok("editor", "package_create", map[string]any{"name": "models-of-herg", "owner_org": "tox-lab"})
	f.ok("editor", "package_create", map[string]any{"name": "my-model-herg", "owner_org": "tox-lab"})
	// A sysadmin may create and rename; an editor then edits the dataset,
	// which keeps its name.
	f.ok("sysadmin", "package_create", map[string]any{"name": "model-legacy", "owner_org": "tox-lab"})
	f.ok("sysadmin", "package_patch", map[string]any{"id": "assay", "name": "model-assay"})
	if got := f.ok("editor", "package_patch", map[string]any{"id": "model-assay", "notes": "kept"}); got["name"] != "model-assay" {
		t.Fatalf("editing a dataset with a reserved name: %v", got["name"])
	}
	e := f.fail("editor", "package_patch", map[string]any{"id": "model-assay", "name": "model-other"}, 409)
	if !strings.Contains(errJSON(e), "reserved") {
		t.Fatalf("renaming between reserved names: %s", errJSON(e))
	}
}
