package datastore_test

import (
	"testing"
)

// A dataset version's table copy on each engine: json, array and numeric
// columns survive later upserts and deletes as they were, searches and SQL
// as of the version read the copy, and the diff by primary key names the
// inserted, updated (also inside a json value) and deleted rows.
func TestVersionSnapshotAndDiffOnEachEngine(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, env)
		ed := s.tok["eddie"]
		rid := s.dataset("tox", false, nil)
		s.ok(ed, "datastore_create", map[string]any{"resource_id": rid, "primary_key": "id",
			"fields": []any{map[string]any{"id": "id", "type": "int"}, map[string]any{"id": "meta", "type": "json"},
				map[string]any{"id": "tags", "type": "_text"}, map[string]any{"id": "ic50", "type": "numeric"}},
			"records": []any{
				map[string]any{"id": 1, "meta": map[string]any{"assay": "hERG"}, "tags": []any{"a"}, "ic50": 1.5},
				map[string]any{"id": 2, "meta": map[string]any{"assay": "AhR"}, "tags": []any{"b"}, "ic50": 2.5},
				map[string]any{"id": 3, "meta": nil, "tags": nil, "ic50": nil},
			}})
		v := s.ok(ed, "dataset_version_create", map[string]any{"dataset": "tox", "name": "v1"})["id"].(string)
		s.ok(ed, "datastore_upsert", map[string]any{"resource_id": rid, "records": []any{
			map[string]any{"id": 1, "meta": map[string]any{"assay": "hERG", "run": 2}, "tags": []any{"a"}, "ic50": 1.5},
			map[string]any{"id": 3, "meta": nil, "tags": []any{"c"}, "ic50": nil},
			map[string]any{"id": 4, "meta": nil, "tags": nil, "ic50": 4},
		}})
		s.ok(ed, "datastore_records_delete", map[string]any{"resource_id": rid, "filters": map[string]any{"id": 2}})

		old := s.search(s.tok["molly"], map[string]any{"resource_id": rid, "version": "v1", "sort": "id"})
		if got := jsonText(old["records"]); got != jsonText([]any{
			map[string]any{"_id": 1, "id": 1, "meta": map[string]any{"assay": "hERG"}, "tags": []any{"a"}, "ic50": 1.5},
			map[string]any{"_id": 2, "id": 2, "meta": map[string]any{"assay": "AhR"}, "tags": []any{"b"}, "ic50": 2.5},
			map[string]any{"_id": 3, "id": 3, "meta": nil, "tags": nil, "ic50": nil},
		}) {
			t.Fatalf("rows as of v1: %s", got)
		}
		sql := s.ok(s.tok["molly"], "datastore_search_sql", map[string]any{"sql": `SELECT id FROM "` + rid + `" WHERE id = 2`, "version": v})
		if len(records(sql)) != 1 {
			t.Fatalf("SQL as of v1: %v", sql)
		}
		d := s.ok(s.tok["molly"], "dataset_version_diff", map[string]any{"dataset": "tox", "from": "v1"})
		tbl := d["tables"].(map[string]any)[rid].(map[string]any)
		rows := tbl["rows"].(map[string]any)
		counts := map[string]float64{}
		for _, k := range []string{"added", "removed", "changed"} {
			counts[k] = rows[k].(map[string]any)["count"].(float64)
		}
		if tbl["by"] != "primary_key" || counts["added"] != 1 || counts["removed"] != 1 || counts["changed"] != 2 {
			t.Fatalf("diff: %s", jsonText(tbl))
		}
	})
}
