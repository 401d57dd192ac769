package datastore_test

import (
	"fmt"
	"strings"
	"testing"
)

// Every action's success path and its documented errors, through the real
// gateway and catalog plugin, on both engines.
func TestDataStoreActions(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, env)
		ed := s.tok["eddie"]
		rid := s.dataset("assay", false, nil)

		if show := s.ok("", "resource_show", map[string]any{"id": rid}); show["datastore_active"] != false {
			t.Fatalf("datastore_active before a table: %v", show["datastore_active"])
		}
		created := s.ok(ed, "datastore_create", map[string]any{
			"resource_id": rid,
			"fields": []any{
				map[string]any{"id": "compound", "type": "text", "info": map[string]any{"label": "Compound"}},
				map[string]any{"id": "conc", "type": "float8"},
				map[string]any{"id": "n", "type": "int"},
				map[string]any{"id": "active", "type": "bool"},
				map[string]any{"id": "day", "type": "date"},
				map[string]any{"id": "at", "type": "timestamp"},
				map[string]any{"id": "meta", "type": "json"},
				map[string]any{"id": "tags", "type": "_text"},
				map[string]any{"id": "reps", "type": "int4[]"},
			},
			"primary_key": "compound",
			"indexes":     []any{"n"},
			"records": []any{
				map[string]any{"compound": "caffeine", "conc": 1.5, "n": 3, "active": true, "day": "2024-01-02", "at": "2024-01-02T03:04:05", "meta": map[string]any{"a": []any{1, 2}}, "tags": []any{"x", "y"}, "reps": []any{1, 2}},
				map[string]any{"compound": "aspirin", "conc": "0.25", "n": "7", "active": "false", "day": "", "meta": nil},
				map[string]any{"compound": "Ibuprofen, 200 mg", "conc": 10, "n": 1},
			},
		})
		if created["resource_id"] != rid || created["method"] != "insert" || len(created["fields"].([]any)) != 9 || jsonText(created["primary_key"]) != `["compound"]` {
			t.Fatalf("datastore_create result: %v", created)
		}
		if show := s.ok("", "resource_show", map[string]any{"id": rid}); show["datastore_active"] != true {
			t.Fatalf("datastore_active after datastore_create: %v", show["datastore_active"])
		}
		pkg := s.ok("", "package_show", map[string]any{"id": "assay"})
		if pkg["resources"].([]any)[0].(map[string]any)["datastore_active"] != true {
			t.Fatalf("package_show does not report datastore_active")
		}

		// search: defaults, types and order
		r := s.search("", map[string]any{"resource_id": rid})
		recs := records(r)
		if r["total"].(float64) != 3 || len(recs) != 3 || r["limit"].(float64) != 100 || r["records_format"] != "objects" || r["total_was_estimated"] != false {
			t.Fatalf("search: %v", r)
		}
		want := `{"_id":1,"active":true,"at":"2024-01-02T03:04:05","compound":"caffeine","conc":1.5,"day":"2024-01-02","meta":{"a":[1,2]},"n":3,"reps":[1,2],"tags":["x","y"]}`
		if got := jsonText(recs[0]); got != want {
			t.Errorf("first record:\n got %s\nwant %s", got, want)
		}
		if got := jsonText(recs[1]); got != `{"_id":2,"active":false,"at":null,"compound":"aspirin","conc":0.25,"day":null,"meta":null,"n":7,"reps":null,"tags":null}` {
			t.Errorf("second record: %s", got)
		}
		fields := r["fields"].([]any)
		if jsonText(fields[0]) != `{"id":"_id","type":"int"}` || jsonText(fields[1]) != `{"id":"compound","info":{"label":"Compound"},"type":"text"}` {
			t.Errorf("fields: %s", jsonText(fields))
		}
		links := r["_links"].(map[string]any)
		if !strings.HasPrefix(links["start"].(string), "/api/action/datastore_search?") || !strings.Contains(links["next"].(string), "offset=100") {
			t.Errorf("_links: %v", links)
		}

		// filters (value and list), q (all fields and per field), sort, fields, paging, distinct
		check := func(name string, data map[string]any, total int, ids ...int) map[string]any {
			t.Helper()
			data["resource_id"] = rid
			r := s.search("", data)
			var got []int
			for _, rec := range records(r) {
				got = append(got, int(rec["_id"].(float64)))
			}
			if fmt.Sprint(got) != fmt.Sprint(ids) || (total >= 0 && int(r["total"].(float64)) != total) {
				t.Errorf("%s: ids %v total %v, want %v total %d", name, got, r["total"], ids, total)
			}
			return r
		}
		check("filter value", map[string]any{"filters": map[string]any{"n": 7}}, 1, 2)
		check("filter list", map[string]any{"filters": map[string]any{"compound": []any{"caffeine", "aspirin"}}}, 2, 1, 2)
		check("filters as JSON text", map[string]any{"filters": `{"active": true}`}, 1, 1)
		check("q", map[string]any{"q": "IBUPROFEN"}, 1, 3)
		check("q per field", map[string]any{"q": map[string]any{"compound": "spir"}}, 1, 2)
		check("q two words", map[string]any{"q": "caffeine 1.5"}, 1, 1)
		check("sort", map[string]any{"sort": "conc desc"}, 3, 3, 1, 2)
		check("sort list", map[string]any{"sort": []any{"n asc"}}, 3, 3, 1, 2)
		check("limit offset", map[string]any{"sort": "_id", "limit": 1, "offset": 1}, 3, 2)
		check("no total", map[string]any{"include_total": false, "limit": 1}, -1, 1)
		dr := s.search("", map[string]any{"resource_id": rid, "fields": "n", "distinct": true, "sort": "n"})
		if jsonText(dr["records"]) != `[{"n":1},{"n":3},{"n":7}]` {
			t.Errorf("distinct: %s", jsonText(dr["records"]))
		}
		lr := s.search("", map[string]any{"resource_id": rid, "fields": []any{"compound", "n"}, "records_format": "lists", "sort": "_id"})
		if jsonText(lr["records"]) != `[["caffeine",3],["aspirin",7],["Ibuprofen, 200 mg",1]]` {
			t.Errorf("lists: %s", jsonText(lr["records"]))
		}
		cr := s.search("", map[string]any{"resource_id": rid, "fields": "compound,n", "records_format": "csv", "sort": "_id"})
		if cr["records"] != "caffeine,3\naspirin,7\n\"Ibuprofen, 200 mg\",1\n" {
			t.Errorf("csv: %q", cr["records"])
		}
		tr := s.search("", map[string]any{"resource_id": rid, "fields": "compound,n", "records_format": "tsv", "limit": 1})
		if tr["records"] != "caffeine\t3\n" {
			t.Errorf("tsv: %q", tr["records"])
		}
		// json and array fields sort and take part in distinct on both engines
		if js := s.search("", map[string]any{"resource_id": rid, "fields": "meta,tags", "distinct": true, "sort": "meta, tags"}); js["total"].(float64) != 2 {
			t.Errorf("distinct over json and array fields: %v", js)
		}
		big := s.search("", map[string]any{"resource_id": rid, "limit": 50000})
		if big["limit"].(float64) != 32000 {
			t.Errorf("limit above the maximum is not capped: %v", big["limit"])
		}
		est := s.search("", map[string]any{"resource_id": rid, "total_estimation_threshold": 1000})
		if est["total"].(float64) != 3 || est["total_was_estimated"] != false {
			t.Errorf("total_estimation_threshold: %v %v", est["total"], est["total_was_estimated"])
		}

		// search errors
		s.fail("", "datastore_search", map[string]any{"resource_id": rid, "filters": map[string]any{"nope": 1}}, 409, "Validation Error")
		s.fail("", "datastore_search", map[string]any{"resource_id": rid, "sort": "nope"}, 409, "Validation Error")
		s.fail("", "datastore_search", map[string]any{"resource_id": rid, "sort": "n; DROP TABLE x"}, 409, "Validation Error")
		s.fail("", "datastore_search", map[string]any{"resource_id": rid, "fields": "nope"}, 409, "Validation Error")
		s.fail("", "datastore_search", map[string]any{"resource_id": rid, "filters": map[string]any{"n": "seven"}}, 409, "Validation Error")
		s.fail("", "datastore_search", map[string]any{"resource_id": rid, "limit": -1}, 409, "Validation Error")
		s.fail("", "datastore_search", map[string]any{"resource_id": rid, "records_format": "xml"}, 409, "Validation Error")
		e := s.fail("", "datastore_search", map[string]any{"resource_id": "no-such-resource"}, 404, "Not Found Error")
		if !strings.Contains(e["message"].(string), "was not found") {
			t.Errorf("not found message: %v", e)
		}
		s.fail("", "datastore_search", map[string]any{}, 409, "Validation Error")

		// malformed input is a 4xx, never a 5xx
		for i, c := range []struct {
			action string
			data   map[string]any
		}{
			{"datastore_search", map[string]any{"resource_id": rid, "fields": []any{1, 2}}},
			{"datastore_search", map[string]any{"resource_id": rid, "limit": "many"}},
			{"datastore_search", map[string]any{"resource_id": rid, "offset": -5}},
			{"datastore_search", map[string]any{"resource_id": rid, "filters": []any{"n", 1}}},
			{"datastore_search", map[string]any{"resource_id": rid, "q": []any{"x"}}},
			{"datastore_search", map[string]any{"resource_id": rid, "q": map[string]any{"compound": 5}}},
			{"datastore_search", map[string]any{"resource_id": rid, "sort": map[string]any{"n": "asc"}}},
			{"datastore_search", map[string]any{"resource_id": rid, "filters": map[string]any{"meta": "x"}}},
			{"datastore_search", map[string]any{"resource_id": rid, "include_total": "maybe"}},
			{"datastore_search", map[string]any{"resource_id": rid, "total_estimation_threshold": "x"}},
			{"datastore_search", map[string]any{"resource_id": 42}},
			{"datastore_create", map[string]any{"resource_id": rid, "fields": "not a list"}},
			{"datastore_create", map[string]any{"resource_id": rid, "fields": []any{"n"}}},
			{"datastore_create", map[string]any{"resource_id": rid, "records": map[string]any{"a": 1}}},
			{"datastore_create", map[string]any{"resource_id": rid, "primary_key": "nope"}},
			{"datastore_create", map[string]any{"resource_id": rid, "indexes": []any{"nope"}}},
			{"datastore_create", map[string]any{"resource": map[string]any{"name": "no package"}}},
			{"datastore_create", map[string]any{"resource_id": rid, "records": []any{map[string]any{"day": "yesterday"}}}},
			{"datastore_create", map[string]any{"resource_id": rid, "records": []any{map[string]any{"n": 1e12}}}},
			{"datastore_create", map[string]any{"resource_id": rid, "records": []any{map[string]any{"tags": "not json"}}}},
			{"datastore_upsert", map[string]any{"resource_id": rid, "records": "x"}},
			{"datastore_upsert", map[string]any{"resource_id": rid, "dry_run": "perhaps"}},
			{"datastore_delete", map[string]any{"resource_id": rid, "filters": "x"}},
			{"datastore_search_sql", map[string]any{"sql": 5}},
			{"datastore_search_sql", map[string]any{"sql": "   "}},
			{"datastore_info", map[string]any{}},
		} {
			code, out := s.call(ed, c.action, c.data)
			if code < 400 || code >= 500 {
				t.Errorf("bad input %d to %s: %d %v", i, c.action, code, out)
			}
		}

		// upsert: upsert by primary key, insert, update, dry_run
		s.ok(ed, "datastore_upsert", map[string]any{"resource_id": rid, "records": []any{
			map[string]any{"compound": "caffeine", "n": 4}, map[string]any{"compound": "paracetamol", "n": 9}}})
		// (an upsert that updates may still use up an _id, on both engines)
		if up := records(s.search("", map[string]any{"resource_id": rid, "filters": map[string]any{"compound": []any{"caffeine", "paracetamol"}}, "sort": "n", "fields": "compound,n"})); jsonText(up) != `[{"compound":"caffeine","n":4},{"compound":"paracetamol","n":9}]` {
			t.Errorf("after upsert: %s", jsonText(up))
		}
		if c := records(s.search("", map[string]any{"resource_id": rid, "filters": map[string]any{"compound": "caffeine"}}))[0]; c["n"].(float64) != 4 || c["conc"].(float64) != 1.5 {
			t.Errorf("upsert changed other fields or not n: %v", c)
		}
		s.ok(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "insert", "records": []any{map[string]any{"compound": "theophylline"}}})
		s.ok(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "update", "records": []any{map[string]any{"compound": "theophylline", "n": 2}}})
		thID := records(s.search("", map[string]any{"resource_id": rid, "filters": map[string]any{"compound": "theophylline"}}))[0]["_id"]
		s.ok(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "update", "records": []any{map[string]any{"_id": thID, "conc": 2.5}}})
		dry := s.ok(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "insert", "dry_run": true, "records": []any{map[string]any{"compound": "dry"}}})
		if dry["method"] != "insert" {
			t.Errorf("dry run result: %v", dry)
		}
		check("dry run wrote nothing", map[string]any{"q": "dry"}, 0)
		th := records(s.search("", map[string]any{"resource_id": rid, "filters": map[string]any{"compound": "theophylline"}}))[0]
		if th["n"].(float64) != 2 || th["conc"].(float64) != 2.5 {
			t.Errorf("update: %v", th)
		}
		s.fail(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "update", "records": []any{map[string]any{"compound": "nobody", "n": 1}}}, 409, "Validation Error")
		s.fail(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "insert", "records": []any{map[string]any{"compound": "caffeine"}}}, 409, "Validation Error")
		s.fail(ed, "datastore_upsert", map[string]any{"resource_id": rid, "records": []any{map[string]any{"n": 1}}}, 409, "Validation Error")
		s.fail(ed, "datastore_upsert", map[string]any{"resource_id": rid, "records": []any{map[string]any{"compound": "x", "extra": 1}}}, 409, "Validation Error")
		s.fail(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "merge", "records": []any{}}, 409, "Validation Error")
		s.fail(ed, "datastore_upsert", map[string]any{"resource_id": rid, "records": []any{map[string]any{"compound": "x", "n": 1.5}}}, 409, "Validation Error")

		// create again: new fields are added, a type change is refused
		s.ok(ed, "datastore_create", map[string]any{"resource_id": rid, "fields": []any{map[string]any{"id": "note", "type": "text"}}})
		s.fail(ed, "datastore_create", map[string]any{"resource_id": rid, "fields": []any{map[string]any{"id": "n", "type": "text"}}}, 409, "Validation Error")
		s.fail(ed, "datastore_create", map[string]any{"resource_id": rid, "fields": []any{map[string]any{"id": "_bad", "type": "text"}}}, 409, "Validation Error")
		s.fail(ed, "datastore_create", map[string]any{"resource_id": rid, "fields": []any{map[string]any{"id": "x", "type": "money"}}}, 409, "Validation Error")

		// info
		info := s.ok("", "datastore_info", map[string]any{"id": rid})
		if info["meta"].(map[string]any)["count"].(float64) != 5 || len(info["fields"].([]any)) != 10 {
			t.Errorf("datastore_info: %v", info)
		}

		// records delete and delete with filters keep the table
		s.fail(ed, "datastore_records_delete", map[string]any{"resource_id": rid}, 409, "Validation Error")
		s.ok(ed, "datastore_records_delete", map[string]any{"resource_id": rid, "filters": map[string]any{"compound": "paracetamol"}})
		s.ok(ed, "datastore_delete", map[string]any{"resource_id": rid, "filters": map[string]any{"compound": "theophylline"}})
		check("after deletes", map[string]any{"sort": "_id"}, 3, 1, 2, 3)
		s.ok(ed, "datastore_records_delete", map[string]any{"resource_id": rid, "filters": map[string]any{}})
		check("after deleting every row", map[string]any{}, 0)

		// delete without filters drops the table
		s.ok(ed, "datastore_delete", map[string]any{"resource_id": rid})
		if show := s.ok("", "resource_show", map[string]any{"id": rid}); show["datastore_active"] != false {
			t.Errorf("datastore_active after datastore_delete: %v", show["datastore_active"])
		}
		s.fail("", "datastore_search", map[string]any{"resource_id": rid}, 404, "Not Found Error")
		s.fail(ed, "datastore_delete", map[string]any{"resource_id": rid}, 404, "Not Found Error")

		// datastore_create with "resource" makes the resource; fields guessed from records
		made := s.ok(ed, "datastore_create", map[string]any{"resource": map[string]any{"package_id": "assay", "name": "made"},
			"records": []any{map[string]any{"a": 1, "b": 2.5, "c": "x", "d": "2024-05-06", "e": map[string]any{"k": 1}, "f": true, "g": 5000000000, "h": 0, "i": 1},
				map[string]any{"a": 2, "h": 0.5, "i": "one"}}})
		mid := made["resource_id"].(string)
		types := map[string]string{}
		for _, f := range made["fields"].([]any) {
			fm := f.(map[string]any)
			types[fm["id"].(string)] = fm["type"].(string)
		}
		if fmt.Sprint(types) != "map[a:int b:float8 c:text d:timestamp e:json f:bool g:int8 h:float8 i:text]" {
			t.Errorf("guessed types: %v", types)
		}
		if show := s.ok("", "resource_show", map[string]any{"id": mid}); show["datastore_active"] != true || show["package_id"] == nil {
			t.Errorf("resource made by datastore_create: %v", show)
		}
		// resource_delete drops the table
		s.ok(ed, "resource_delete", map[string]any{"id": mid})
		s.fail(s.admin, "datastore_search", map[string]any{"resource_id": mid}, 404, "Not Found Error")
	})
}

// The limits of datastore.* each give a clear error and change nothing.
func TestDataStoreLimits(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		env = append(env, "TOXGATE_DATASTORE_MAX_ROWS_PER_CALL=3", "TOXGATE_DATASTORE_MAX_COLUMNS=3",
			"TOXGATE_DATASTORE_MAX_CELL_BYTES=10", "TOXGATE_DATASTORE_MAX_TABLE_BYTES=40")
		s := newSite(t, env)
		ed := s.tok["eddie"]
		rid := s.dataset("limits", false, nil)
		s.ok(ed, "datastore_create", map[string]any{"resource_id": rid, "fields": []any{map[string]any{"id": "a", "type": "text"}}})
		rows := func(n int, v string) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = map[string]any{"a": v}
			}
			return out
		}
		msg := func(e map[string]any) string { return jsonText(e) }
		if e := s.fail(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "insert", "records": rows(4, "x")}, 409, "Validation Error"); !strings.Contains(msg(e), "max_rows_per_call") {
			t.Errorf("rows per call: %v", e)
		}
		if e := s.fail(ed, "datastore_create", map[string]any{"resource_id": rid, "fields": []any{map[string]any{"id": "b"}, map[string]any{"id": "c"}, map[string]any{"id": "d"}}}, 409, "Validation Error"); !strings.Contains(msg(e), "max_columns") {
			t.Errorf("columns: %v", e)
		}
		if e := s.fail(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "insert", "records": rows(1, "01234567890")}, 409, "Validation Error"); !strings.Contains(msg(e), "max_cell_bytes") {
			t.Errorf("cell: %v", e)
		}
		s.ok(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "insert", "records": rows(3, "0123456789")})
		if e := s.fail(ed, "datastore_upsert", map[string]any{"resource_id": rid, "method": "insert", "records": rows(2, "0123456789")}, 409, "Validation Error"); !strings.Contains(msg(e), "max_table_bytes") {
			t.Errorf("table size: %v", e)
		}
		if r := s.search("", map[string]any{"resource_id": rid}); r["total"].(float64) != 3 {
			t.Errorf("a refused call changed the table: total %v", r["total"])
		}
	})
}
