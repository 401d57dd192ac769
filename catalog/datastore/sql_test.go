package datastore_test

import (
	"strings"
	"testing"
)

// Private datasets' tables are invisible to non-members; writes need edit
// rights on the dataset.
func TestDataStoreAuthorization(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, env)
		ed, mo, ol := s.tok["eddie"], s.tok["molly"], s.tok["olga"]
		priv := s.dataset("secret", true, nil)
		pub := s.dataset("open", false, nil)
		for _, rid := range []string{priv, pub} {
			s.ok(ed, "datastore_create", map[string]any{"resource_id": rid, "records": []any{map[string]any{"v": 1}}})
		}
		for name, tok := range map[string]string{"anonymous": "", "outsider": ol} {
			s.fail(tok, "datastore_search", map[string]any{"resource_id": priv}, 403, "Authorization Error")
			s.fail(tok, "datastore_info", map[string]any{"resource_id": priv}, 403, "Authorization Error")
			s.fail(tok, "datastore_search_sql", map[string]any{"sql": `SELECT * FROM "` + priv + `"`}, 403, "Authorization Error")
			s.fail(tok, "datastore_search_sql", map[string]any{"sql": `SELECT * FROM "` + pub + `" JOIN "` + priv + `" ON true`}, 403, "Authorization Error")
			s.fail(tok, "xloader_status", map[string]any{"resource_id": priv}, 403, "Authorization Error")
			if r := s.search(tok, map[string]any{"resource_id": pub}); r["total"].(float64) != 1 {
				t.Errorf("%s reading the public table: %v", name, r)
			}
			s.fail(tok, "datastore_upsert", map[string]any{"resource_id": pub, "method": "insert", "records": []any{map[string]any{"v": 2}}}, 403, "Authorization Error")
			s.fail(tok, "datastore_create", map[string]any{"resource_id": pub, "records": []any{map[string]any{"w": 2}}}, 403, "Authorization Error")
			s.fail(tok, "datastore_delete", map[string]any{"resource_id": pub}, 403, "Authorization Error")
		}
		// a member reads but does not write
		if r := s.search(mo, map[string]any{"resource_id": priv}); r["total"].(float64) != 1 {
			t.Errorf("member reading the private table: %v", r)
		}
		if r := s.ok(mo, "datastore_search_sql", map[string]any{"sql": `SELECT count(*) AS n FROM "` + priv + `"`}); jsonText(r["records"]) != `[{"n":1}]` {
			t.Errorf("member search_sql: %v", r)
		}
		s.fail(mo, "datastore_upsert", map[string]any{"resource_id": priv, "method": "insert", "records": []any{map[string]any{"v": 2}}}, 403, "Authorization Error")
		s.fail(mo, "datastore_records_delete", map[string]any{"resource_id": priv, "filters": map[string]any{}}, 403, "Authorization Error")
		s.fail(mo, "xloader_submit", map[string]any{"resource_id": priv}, 403, "Authorization Error")
		// the editor writes
		s.ok(ed, "datastore_upsert", map[string]any{"resource_id": priv, "method": "insert", "records": []any{map[string]any{"v": 2}}})
		if r := s.search(s.admin, map[string]any{"resource_id": priv}); r["total"].(float64) != 2 {
			t.Errorf("sysadmin reading the private table: %v", r)
		}
	})
}

// datastore_search_sql: CKAN's rules, and the hostile list, on both
// engines. Every refusal changes nothing.
func TestSearchSQLRules(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, append(env, "TOXGATE_DATASTORE_SQL_TIMEOUT=1s"))
		ed := s.tok["eddie"]
		rid := s.dataset("sqltable", false, nil)
		var recs []any
		for i := 0; i < 300; i++ {
			recs = append(recs, map[string]any{"author": []string{"bob", "jane", "foo; bar"}[i%3], "n": i})
		}
		s.ok(ed, "datastore_create", map[string]any{"resource_id": rid, "fields": []any{map[string]any{"id": "author", "type": "text"}, map[string]any{"id": "n", "type": "int"}}, "records": recs})
		tbl := `"` + rid + `"`

		good := map[string]string{
			"select":                `SELECT author, n FROM ` + tbl + ` WHERE n < 2 ORDER BY n`,
			"semicolon in a string": `SELECT n FROM ` + tbl + ` WHERE author = 'foo; bar' ORDER BY n LIMIT 1`,
			"trailing semicolon":    `SELECT n FROM ` + tbl + ` WHERE n = 1;`,
			"comment":               `SELECT n FROM ` + tbl + ` /* a comment; with a semicolon */ WHERE n = 1 -- and another`,
			"functions":             `SELECT upper(author) AS a, count(*) AS c, max(n) AS m FROM ` + tbl + ` GROUP BY upper(author) ORDER BY a`,
			"with":                  `WITH x AS (SELECT n FROM ` + tbl + ` WHERE n < 3) SELECT sum(n) AS s FROM x`,
		}
		for name, q := range good {
			code, out := s.call("", "datastore_search_sql", map[string]any{"sql": q})
			if code != 200 {
				t.Errorf("%s: %d %v", name, code, out)
			}
		}
		r := s.ok("", "datastore_search_sql", map[string]any{"sql": good["select"]})
		if jsonText(r["records"]) != `[{"author":"bob","n":0},{"author":"jane","n":1}]` || jsonText(r["fields"]) != `[{"id":"author","type":"text"},{"id":"n","type":"int4"}]` {
			t.Errorf("select result: %s %s", jsonText(r["records"]), jsonText(r["fields"]))
		}
		if r := s.ok("", "datastore_search_sql", map[string]any{"sql": good["functions"]}); jsonText(r["records"]) != `[{"a":"BOB","c":100,"m":297},{"a":"FOO; BAR","c":100,"m":299},{"a":"JANE","c":100,"m":298}]` {
			t.Errorf("functions result: %s", jsonText(r["records"]))
		}

		type refusal struct {
			sql    string
			status int
			typ    string
		}
		hostile := map[string]refusal{
			"drop":                 {`DROP TABLE ` + tbl, 403, "Authorization Error"},
			"update":               {`UPDATE ` + tbl + ` SET n = 0`, 403, "Authorization Error"},
			"delete":               {`DELETE FROM ` + tbl, 403, "Authorization Error"},
			"insert":               {`INSERT INTO ` + tbl + ` (n) VALUES (1)`, 403, "Authorization Error"},
			"chained":              {`SELECT 1; DROP TABLE ` + tbl, 409, "Validation Error"},
			"chained after select": {`SELECT * FROM ` + tbl + `; DELETE FROM ` + tbl + `;`, 409, "Validation Error"},
			"comment hides end":    {`SELECT 1 /* ; */ ; DROP TABLE ` + tbl + ` --`, 409, "Validation Error"},
			"line comment":         {"SELECT 1 -- ;\n; UPDATE " + tbl + " SET n = 0", 409, "Validation Error"},
			"unterminated comment": {`SELECT 1 /* ; DROP TABLE ` + tbl, 409, "Validation Error"},
			"comment first":        {`/* x */ DELETE FROM ` + tbl, 403, "Authorization Error"},
			"cte delete":           {`WITH d AS (DELETE FROM ` + tbl + ` RETURNING n) SELECT * FROM d`, 0, ""},
			"metadata table":       {`SELECT * FROM _datastore_tables`, 403, "Authorization Error"},
			"jobs table":           {`SELECT * FROM _datastore_jobs`, 403, "Authorization Error"},
			"system catalog":       {systemCatalog(env), 403, "Authorization Error"},
			"system join":          {`SELECT t.n FROM ` + tbl + ` t JOIN ` + systemCatalog2(env) + ` s ON true`, 403, "Authorization Error"},
			"subquery system":      {`SELECT n, (SELECT count(*) FROM ` + systemCatalog2(env) + `) FROM ` + tbl, 403, "Authorization Error"},
			"file function":        {fileFunction(env), 403, "Authorization Error"},
			"sleep":                {sleepFunction(env), 403, "Authorization Error"},
			"settings":             {settingsFunction(env), 403, "Authorization Error"},
			"table function":       {tableFunction(env), 403, "Authorization Error"},
			"not a table":          {`SELECT * FROM "no-such-table"`, 409, "Validation Error"},
			"syntax":               {`SELECT ** FROM ` + tbl, 409, "Validation Error"},
			"huge cross join":      {`SELECT count(*) FROM ` + tbl + ` a, ` + tbl + ` b, ` + tbl + ` c, ` + tbl + ` d, ` + tbl + ` e`, 409, "Validation Error"},
			"attach":               {`ATTACH DATABASE '/tmp/x.db' AS x`, 403, "Authorization Error"},
			"pragma":               {`PRAGMA writable_schema = 1`, 403, "Authorization Error"},
			"vacuum":               {`VACUUM`, 403, "Authorization Error"},
			"select into":          {`SELECT * INTO stolen FROM ` + tbl, 0, ""},
			"for update":           {`SELECT * FROM ` + tbl + ` FOR UPDATE`, 0, ""},
		}
		for name, h := range hostile {
			code, out := s.call(ed, "datastore_search_sql", map[string]any{"sql": h.sql})
			e, _ := out["error"].(map[string]any)
			if h.status == 0 { // any refusal (a syntax error on one engine, read-only on the other)
				if code == 200 || code >= 500 {
					t.Errorf("%s: want a refusal, got %d %v", name, code, out)
				}
				continue
			}
			if code != h.status || e["__type"] != h.typ {
				t.Errorf("%s: want %d %s, got %d %v", name, h.status, h.typ, code, out)
			}
		}
		if e := s.fail("", "datastore_search_sql", map[string]any{"sql": hostile["huge cross join"].sql}, 409, "Validation Error"); !strings.Contains(jsonText(e), "took too long") {
			t.Errorf("time limit message: %v", e)
		}
		if e := s.fail("", "datastore_search_sql", map[string]any{"sql": hostile["chained"].sql}, 409, "Validation Error"); !strings.Contains(jsonText(e), "Query is not a single statement") {
			t.Errorf("single statement message: %v", e)
		}
		// nothing changed
		if r := s.search("", map[string]any{"resource_id": rid, "limit": 0}); r["total"].(float64) != 300 {
			t.Fatalf("the table changed: total %v", r["total"])
		}
		if r := s.ok("", "datastore_search_sql", map[string]any{"sql": `SELECT sum(n) AS s FROM ` + tbl}); jsonText(r["records"]) != `[{"s":44850}]` {
			t.Errorf("the table's values changed: %v", r["records"])
		}
	})
}

func isPG(env []string) bool {
	return len(env) > 0 && strings.Contains(strings.Join(env, " "), "postgres://")
}

func systemCatalog(env []string) string {
	if isPG(env) {
		return `SELECT rolname, rolpassword FROM pg_authid`
	}
	return `SELECT * FROM sqlite_schema`
}

func systemCatalog2(env []string) string {
	if isPG(env) {
		return `pg_catalog.pg_class`
	}
	return `sqlite_master`
}

func fileFunction(env []string) string {
	if isPG(env) {
		return `SELECT pg_read_file('/etc/passwd')`
	}
	return `SELECT load_extension('/tmp/evil.so')`
}

func sleepFunction(env []string) string {
	if isPG(env) {
		return `SELECT pg_sleep(30)`
	}
	return `SELECT randomblob(1000000000)`
}

func settingsFunction(env []string) string {
	if isPG(env) {
		return `SELECT current_setting('data_directory')`
	}
	return `SELECT sqlite_version()`
}

func tableFunction(env []string) string {
	if isPG(env) {
		return `SELECT * FROM generate_series(1, 1000000000)`
	}
	return `SELECT * FROM pragma_table_info('_datastore_tables')`
}
