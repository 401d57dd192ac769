package datastore

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"toxgate/catalog/ckan"
)

// The tables of the fuzzed DataStore: one the caller may read, one it may
// not, and a table that is not a DataStore table at all. The last two and
// the jobs' metadata hold the secret.
const (
	fuzzPublic  = "0a000000-0000-4000-8000-000000000001"
	fuzzPrivate = "0a000000-0000-4000-8000-000000000002"
	fuzzSecret  = "TOPSECRET"
)

// FuzzSQLGuard feeds statements to datastore_search_sql on the embedded
// engine. It holds that the guard never panics, never fails as an
// internal error, never answers with the secret, that every statement it
// accepts is one read-only SELECT, WITH or VALUES as SQLite's own parser
// reads it, and that a statement its reading (either dialect) takes for
// one is a prefix of the input.
func FuzzSQLGuard(f *testing.F) {
	pub, priv := `"`+fuzzPublic+`"`, `"`+fuzzPrivate+`"`
	for _, q := range []string{
		`SELECT * FROM ` + pub,
		`SELECT v, count(*) FROM ` + pub + ` GROUP BY v;`,
		`WITH x AS (SELECT v FROM ` + pub + `) SELECT * FROM x -- done`,
		`VALUES (1), (2)`,
		`SELECT * FROM ` + priv,
		`SELECT * FROM ` + pub + ` JOIN ` + priv + ` ON true`,
		`SELECT * FROM secret_t`,
		`SELECT * FROM _datastore_jobs`,
		`SELECT * FROM sqlite_schema`,
		`SELECT 1; SELECT * FROM secret_t`,
		`SELECT ' \'' AS a, * FROM ` + pub + `; SELECT * FROM ` + priv + ` --'`,
		`SELECT E'\'' AS a; SELECT * FROM ` + priv + `; --'`,
		`SELECT 1 /* /* */ ' */ ; SELECT * FROM ` + priv + `; --'`,
		"SELECT 1 --\r'\n; SELECT * FROM " + priv + "; --'",
		`SELECT $a('x) ; SELECT * FROM ` + priv + `; --'`,
		`SELECT 1 [ ; SELECT * FROM ` + priv + ` ]`,
		"SELECT 1;\v SELECT * FROM secret_t",
		"SELECT 1 \x00; SELECT * FROM secret_t",
		`WITH d AS (DELETE FROM ` + pub + ` RETURNING v) SELECT * FROM d`,
		`WITH x AS (SELECT 1) DELETE FROM ` + pub,
		`ATTACH DATABASE '/tmp/x.db' AS x`,
		`PRAGMA writable_schema = 1`,
		`SELECT load_extension('/tmp/evil.so')`,
		`SELECT randomblob(1000000000)`,
		`SELECT * FROM pragma_table_info('_datastore_tables')`,
		`WITH RECURSIVE r(n,s) AS (SELECT 1,'xxxxxxxxxxxxxxxx' UNION ALL SELECT n+1,s||s FROM r WHERE n<26) SELECT n,length(s) FROM r WHERE n>=24`,
		`SELECT (SELECT v FROM ` + priv + `)`,
		`(SELECT 1)`,
		`/* a */ SELECT 1 /* b */ ; -- c`,
	} {
		f.Add(q)
	}
	s, db := fuzzStore(f)
	canRead := func(id string) error {
		if id != fuzzPublic {
			return ckan.NotAuthorized("not this one")
		}
		return nil
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, pg := range []bool{false, true} {
			if stmt, _, ok := scanStatement(q, pg); ok && !strings.HasPrefix(q, stmt) {
				t.Fatalf("pg=%v: the statement %q is not a prefix of %q", pg, stmt, q)
			}
		}
		stmt, first, single := scanStatement(q, false)
		if single && errors.Is(sqliteSingleStatement(db, stmt), errNotSingle) {
			t.Fatalf("read as one statement, SQLite reads more: %q", q)
		}
		out, err := s.SearchSQL(context.Background(), map[string]any{"sql": q}, "", canRead)
		if err != nil {
			var ce *ckan.Error
			if !errors.As(err, &ce) || ce.Status >= 500 {
				t.Fatalf("%q: %v", q, err)
			}
			return
		}
		b, _ := json.Marshal(out)
		if strings.Contains(string(b), fuzzSecret) {
			t.Fatalf("%q revealed the secret: %s", q, b)
		}
		if !single || !selectKeywords[first] || sqliteSingleStatement(db, stmt) != nil || !sqliteReadOnly(t, db, stmt) {
			t.Fatalf("accepted, but not one read-only SELECT: %q", q)
		}
	})
}

// fuzzStore opens a DataStore in a temporary directory with the tables of
// FuzzSQLGuard, and the SQLite handle of one of its read connections.
func fuzzStore(f *testing.F) (*Store, uintptr) {
	ctx := context.Background()
	s, err := Open(ctx, Config{Dir: f.TempDir(), Limits: Limits{SQLTimeout: 300 * time.Millisecond, SQLMaxValueBytes: 1 << 20,
		SQLMaxLength: 64 << 10, MaxResultBytes: 1 << 20}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.Close() })
	for id, v := range map[string]string{fuzzPublic: "public", fuzzPrivate: fuzzSecret} {
		if _, err := s.Create(ctx, id, map[string]any{"records": []any{map[string]any{"v": v}}}, Writer{UserID: "u"}); err != nil {
			f.Fatal(err)
		}
	}
	for _, q := range []string{
		`CREATE TABLE secret_t (v TEXT)`,
		`INSERT INTO secret_t VALUES ('` + fuzzSecret + `')`,
		`INSERT INTO ` + jobsTable + ` (resource_id, state, source, created, updated) VALUES ('x', 'error', '` + fuzzSecret + `', '', '')`,
	} {
		if _, err := s.rw.ExecContext(ctx, q); err != nil {
			f.Fatal(err)
		}
	}
	c, err := s.readConn(ctx)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = c.Close() })
	return s, c.db
}

// sqliteReadOnly asks SQLite whether the one statement q only reads
// (sqlite3_stmt_readonly).
func sqliteReadOnly(t *testing.T, db uintptr, q string) bool {
	tls := libc.NewTLS()
	defer tls.Close()
	cq, err := libc.CString(q)
	if err != nil {
		t.Fatal(err)
	}
	defer libc.Xfree(tls, cq)
	const ptr = int(unsafe.Sizeof(uintptr(0)))
	out := tls.Alloc(2 * ptr)
	defer tls.Free(2 * ptr)
	if rc := sqlite3.Xsqlite3_prepare_v2(tls, db, cq, -1, out, out+uintptr(ptr)); rc != sqlite3.SQLITE_OK {
		t.Fatalf("prepare %q: %s", q, libc.GoString(sqlite3.Xsqlite3_errmsg(tls, db)))
	}
	stmt, _ := readPointers(out, ptr)
	defer sqlite3.Xsqlite3_finalize(tls, stmt)
	return sqlite3.Xsqlite3_stmt_readonly(tls, stmt) != 0
}

// The statement readings where the two engines differ, each read as its
// engine reads it.
func TestScanStatement(t *testing.T) {
	cases := []struct {
		q          string
		sqlite, pg bool // one statement on SQLite, on PostgreSQL
		first      string
	}{
		{`SELECT 1`, true, true, "select"},
		{`  ( (select 1))`, true, true, "select"},
		{`/* x */ -- y` + "\n" + `WITH a AS (SELECT 1) SELECT * FROM a;  -- end`, true, true, "with"},
		{`SELECT 'a;b' ; `, true, true, "select"},
		{`SELECT 1; SELECT 2`, false, false, "select"},
		{`SELECT ' \'' AS a; SELECT 2 --'`, true, true, "select"},
		{`SELECT E'\'' AS a; SELECT 2; --'`, true, false, "select"},
		{`SELECT 1 /* /* */ ' */ ; SELECT 2; --'`, true, false, "select"},
		{"SELECT 1 --x\r; SELECT 2", true, false, "select"},
		{"SELECT 1 --\r'\n; SELECT 2; --'", false, true, "select"},
		{`SELECT 1 [ ; SELECT 2 ]`, true, false, "select"},
		{"SELECT `a;b`", true, false, "select"},
		{`SELECT $1`, false, true, "select"},
		{`SELECT $$;$$`, false, false, "select"},
		{`SELECT a$b FROM t`, true, true, "select"},
		{`SELECT 1e'x'`, false, false, "select"},
		{"SELECT 1;\v", false, true, "select"},
		{"SELECT 1 \x00", false, false, "select"},
		{`SELECT 'unterminated`, false, false, "select"},
		{`SELECT 1 /* unterminated`, false, false, "select"},
		{`DELETE FROM t`, true, true, "delete"},
		{`"select" 1`, true, true, ""},
		{`;`, false, false, ""},
	}
	for _, c := range cases {
		for _, pg := range []bool{false, true} {
			want := c.sqlite
			if pg {
				want = c.pg
			}
			_, first, single := scanStatement(c.q, pg)
			if single != want || (single && first != c.first) {
				t.Errorf("pg=%v %q: single %v first %q, want %v %q", pg, c.q, single, first, want, c.first)
			}
		}
	}
}
