package datastore_test

import (
	"fmt"
	"strings"
	"testing"
)

// A DataStore write holds the catalog's write lock only for its catalog
// change: while a datastore_create is held in the middle (its resource is
// created, its rows wait for a lock the test holds in the engine), a
// package_patch of the same dataset completes; then the create completes.
func TestDataStoreWriteLeavesCatalogFree(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, env)
		ed := s.tok["eddie"]
		s.dataset("busy", false, nil)
		// PostgreSQL: the rows go in, the metadata row waits; SQLite: the
		// write transaction waits for the file's write lock
		release := engineLock(t, s, env, `LOCK TABLE _datastore_tables IN EXCLUSIVE MODE`)
		var recs []any
		for i := 0; i < 5000; i++ {
			recs = append(recs, map[string]any{"n": i, "v": fmt.Sprintf("value %d", i)})
		}
		created := s.goCall(ed, "datastore_create", map[string]any{"resource": map[string]any{"package_id": "busy", "name": "big"}, "records": recs})
		// the resource exists: the create is past its catalog change
		var rid string
		waitFor(t, "the resource of the held create", func() bool {
			select {
			case r := <-created:
				t.Fatalf("datastore_create ended while its engine was locked: %d %v", r.code, r.out)
			default:
			}
			for _, r := range s.ok(ed, "package_show", map[string]any{"id": "busy"})["resources"].([]any) {
				if res := r.(map[string]any); res["name"] == "big" {
					rid = res["id"].(string)
					return true
				}
			}
			return false
		})
		if p := s.ok(ed, "package_patch", map[string]any{"id": "busy", "title": "Patched while rows are written"}); p["title"] != "Patched while rows are written" {
			t.Fatalf("package_patch: %v", p)
		}
		select {
		case r := <-created:
			t.Fatalf("datastore_create ended before its engine lock was released (%d %v): the package_patch waited for it", r.code, r.out)
		default:
		}
		release()
		r := <-created
		if r.code != 200 {
			t.Fatalf("datastore_create after the release: %d %v", r.code, r.out)
		}
		if total := s.search("", map[string]any{"resource_id": rid, "limit": 0})["total"].(float64); total != 5000 {
			t.Errorf("rows: %v", total)
		}
		if show := s.ok("", "resource_show", map[string]any{"id": rid}); show["datastore_active"] != true {
			t.Errorf("datastore_active: %v", show["datastore_active"])
		}
	})
}

// Per-user quotas of tables, rows and bytes: a write past one is refused
// with 403 naming it and changes nothing; a sysadmin's writes are not
// held to them; a load is not queued for a dataset whose creator is at a
// quota.
func TestDataStoreQuotas(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, append(env, "TOXGATE_DATASTORE_QUOTA_BYTES=100", "TOXGATE_DATASTORE_QUOTA_ROWS=3", "TOXGATE_DATASTORE_QUOTA_TABLES=2"))
		ed := s.tok["eddie"]
		one, two, three := s.dataset("one", false, nil), s.dataset("two", false, nil), s.dataset("three", false, nil)
		refused := func(action string, data map[string]any, quota string) {
			t.Helper()
			e := s.fail(ed, action, data, 403, "Authorization Error")
			if msg := jsonText(e); !strings.Contains(msg, "DataStore quota exceeded") || !strings.Contains(msg, quota) {
				t.Errorf("%s: want the quota %s named: %s", action, quota, msg)
			}
		}
		rec := func(v string) []any { return []any{map[string]any{"v": v}} }
		s.ok(ed, "datastore_create", map[string]any{"resource_id": one, "records": rec(strings.Repeat("a", 60))})
		refused("datastore_upsert", map[string]any{"resource_id": one, "method": "insert", "records": rec(strings.Repeat("b", 50))}, "datastore.quota_bytes")
		s.ok(ed, "datastore_upsert", map[string]any{"resource_id": one, "method": "insert", "records": []any{map[string]any{"v": "c"}, map[string]any{"v": "d"}}})
		refused("datastore_upsert", map[string]any{"resource_id": one, "method": "insert", "records": rec("e")}, "datastore.quota_rows")
		s.ok(ed, "datastore_create", map[string]any{"resource_id": two, "fields": []any{map[string]any{"id": "v", "type": "text"}}})
		refused("datastore_create", map[string]any{"resource_id": three, "fields": []any{map[string]any{"id": "v", "type": "text"}}}, "datastore.quota_tables")
		// nothing changed
		if total := s.search("", map[string]any{"resource_id": one, "limit": 0})["total"].(float64); total != 3 {
			t.Errorf("rows after the refusals: %v", total)
		}
		s.fail("", "datastore_search", map[string]any{"resource_id": three}, 404, "Not Found Error")
		// a load for a dataset of this creator is not queued
		refused("xloader_submit", map[string]any{"resource_id": two}, "datastore.quota_rows")
		// deleting rows frees the quota
		s.ok(ed, "datastore_records_delete", map[string]any{"resource_id": one, "filters": map[string]any{"v": "c"}})
		s.ok(ed, "datastore_upsert", map[string]any{"resource_id": one, "method": "insert", "records": rec("f")})
		// a sysadmin is not held to the quotas
		s.ok(s.admin, "datastore_upsert", map[string]any{"resource_id": one, "method": "insert", "records": rec(strings.Repeat("g", 90))})
		s.ok(s.admin, "datastore_create", map[string]any{"resource_id": three, "records": rec("h")})
	})
}
