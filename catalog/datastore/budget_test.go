package datastore_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite", to lock the engine's file
)

// The recursive doubling query of the security review: strings of 512 MiB
// built in the plugin (SQLite) or the server (PostgreSQL).
const doubling = `WITH RECURSIVE r(n,s) AS (SELECT 1,'xxxxxxxxxxxxxxxx' UNION ALL SELECT n+1,s||s FROM r WHERE n<26) SELECT n,length(s) FROM r WHERE n>=24`

// datastore_search_sql runs within a budget the engine enforces: the
// longest value, the plugin's memory, the time (also between rows), the
// answer's size. Each refusal is a 409 naming the limit.
func TestSearchSQLBudget(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, append(env, "TOXGATE_DATASTORE_SQL_TIMEOUT=3s", "TOXGATE_DATASTORE_MAX_RESULT_BYTES=10000"))
		rid := s.dataset("budget", false, nil)
		var recs []any
		for i := 0; i < 300; i++ {
			recs = append(recs, map[string]any{"n": i, "t": strings.Repeat("v", 40)})
		}
		s.ok(s.tok["eddie"], "datastore_create", map[string]any{"resource_id": rid, "records": recs})
		tbl := `"` + rid + `"`

		// the strings of the review: a clean 409, and the plugin's peak
		// memory stays far below the 2.9 GB the query took without limits
		e := s.fail("", "datastore_search_sql", map[string]any{"sql": doubling}, 409, "Validation Error")
		if msg := jsonText(e); !strings.Contains(msg, "sql_max_value_bytes") && !strings.Contains(msg, "temp_file_limit") && !strings.Contains(msg, "took too long") {
			t.Errorf("doubling query: %s", msg)
		}
		if peak := peakRSS(t, pluginPID(t, s)); peak > 512<<20 {
			t.Errorf("the plugin's peak memory is %d MiB", peak>>20)
		}
		// a single row larger than sql_max_value_bytes (16 MiB): SQLite
		// refuses to build it, the plugin refuses to read it from PostgreSQL
		big := `WITH RECURSIVE r(n,s) AS (SELECT 1,'xxxxxxxxxxxxxxxx' UNION ALL SELECT n+1,s||s FROM r WHERE n<21) SELECT s FROM r WHERE n=21`
		if isPG(env) {
			big = `SELECT lpad('', 20000000, 'x') AS s`
		}
		if e := s.fail("", "datastore_search_sql", map[string]any{"sql": big}, 409, "Validation Error"); !strings.Contains(jsonText(e), "sql_max_value_bytes") {
			t.Errorf("row of 32 MiB: %v", e)
		}
		// the time limit holds between rows too: the first row comes at
		// once, the second never within the limit
		slow := `SELECT 1 AS c UNION ALL SELECT count(*) FROM ` + tbl + ` a, ` + tbl + ` b, ` + tbl + ` c, ` + tbl + ` d, ` + tbl + ` e`
		if e := s.fail("", "datastore_search_sql", map[string]any{"sql": slow}, 409, "Validation Error"); !strings.Contains(jsonText(e), "took too long") {
			t.Errorf("slow second row: %v", e)
		}
		// the answer's size
		if e := s.fail("", "datastore_search_sql", map[string]any{"sql": `SELECT * FROM ` + tbl}, 409, "Validation Error"); !strings.Contains(jsonText(e), "max_result_bytes") {
			t.Errorf("large answer: %v", e)
		}
		if r := s.ok("", "datastore_search_sql", map[string]any{"sql": `SELECT n FROM ` + tbl + ` WHERE n < 5`}); len(r["records"].([]any)) != 5 {
			t.Errorf("small answer: %v", r)
		}
		// the statement's length
		long := `SELECT n FROM ` + tbl + ` WHERE n IN (` + strings.Repeat("1,", 40000) + `1)`
		if e := s.fail("", "datastore_search_sql", map[string]any{"sql": long}, 409, "Validation Error"); !strings.Contains(jsonText(e), "sql_max_length") {
			t.Errorf("long statement: %v", e)
		}
		// after all this the plugin answers as before
		if r := s.ok("", "datastore_search_sql", map[string]any{"sql": `SELECT count(*) AS c FROM ` + tbl}); jsonText(r["records"]) != `[{"c":300}]` {
			t.Errorf("count after the refusals: %v", r["records"])
		}
	})
}

// Statements the engine reads as two though a naive reading sees one
// (CKAN's GHSA-h7j7-3rx6-xvcg class), and functions that run SQL given as
// text (ts_rewrite, query_to_xml: the same advisory), are refused.
func TestSearchSQLStatementReading(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, env)
		ed := s.tok["eddie"]
		pub := s.dataset("open", false, nil)
		priv := s.dataset("closed", true, nil)
		for _, rid := range []string{pub, priv} {
			s.ok(ed, "datastore_create", map[string]any{"resource_id": rid, "records": []any{map[string]any{"secret": "TOPSECRET"}}})
		}
		p, q := `"`+pub+`"`, `"`+priv+`"`
		// each is one statement or two depending on the engine's reading;
		// where the engine reads two it is refused, and no reading reveals
		// the private table
		const sqlite, pg = 1, 2
		hostile := map[string]int{
			`SELECT ' \'' AS a, * FROM ` + p + `; SELECT * FROM ` + q + ` --'`: 0, // a string on both (CKAN's sqlparse read \' as a quote)
			`SELECT E'\'' AS a; SELECT * FROM ` + q + `; --'`:                  pg,
			`SELECT 1 /* /* */ ' */ ; SELECT * FROM ` + q + `; --'`:            pg, // PostgreSQL nests comments
			"SELECT 1 --\r'\n; SELECT * FROM " + q + "; --'":                   sqlite | pg,
			"SELECT 1 --x\r; SELECT * FROM " + q:                               pg, // PostgreSQL ends a line comment at CR
			`SELECT $a('x) ; SELECT * FROM ` + q + `; --'`:                     sqlite | pg,
			`SELECT 1 [ ; SELECT * FROM ` + q + ` ]`:                           pg, // [..] quotes only on SQLite
			`SELECT 1e'\''; SELECT * FROM ` + q + `; --'`:                      sqlite | pg,
			"SELECT 1;\v SELECT * FROM " + q:                                   sqlite | pg,
			"SELECT 1 \x00; SELECT * FROM " + q:                                sqlite | pg,
		}
		engine := sqlite
		if isPG(env) {
			engine = pg
		}
		for sql, refused := range hostile {
			code, out := s.call("", "datastore_search_sql", map[string]any{"sql": sql})
			if code >= 500 || strings.Contains(jsonText(out), "TOPSECRET") || (refused&engine != 0 && code == 200) {
				t.Errorf("%q: %d %.300s", sql, code, jsonText(out))
			}
		}
		if isPG(env) {
			for _, sql := range []string{
				`SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, (SELECT secret FROM ` + strings.ReplaceAll(q, `'`, `''`) + `)::tsquery')`,
				`SELECT query_to_xml('SELECT * FROM ` + q + `', true, true, '')`,
			} {
				s.fail("", "datastore_search_sql", map[string]any{"sql": sql}, 403, "Authorization Error")
			}
		}
	})
}

// peakRSS is a process's peak resident memory (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// engineLock holds a lock in the DataStore's engine from outside the
// plugin until release: on PostgreSQL the statement given (in a
// transaction), on SQLite the database's write lock.
func engineLock(t *testing.T, s *site, env []string, pgStmt string) (release func()) {
	t.Helper()
	ctx := context.Background()
	var db *sql.DB
	var err error
	if isPG(env) {
		db, err = sql.Open("pgx", strings.TrimPrefix(env[0], "TOXGATE_DATASTORE_URL="))
	} else {
		db, err = sql.Open("sqlite", "file:"+filepath.Join(s.g.DataDir, "datastore", "datastore.db")+"?_pragma=busy_timeout(30000)")
	}
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"BEGIN IMMEDIATE"}
	if isPG(env) {
		stmts = []string{"BEGIN", pgStmt}
	}
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			t.Errorf("release the lock: %v", err)
		}
		conn.Close()
		db.Close()
	}
	t.Cleanup(release)
	return release
}

// waitFor polls cond until it holds, failing after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type callResult struct {
	code int
	out  map[string]any
}

// goCall runs an action in the background.
func (s *site) goCall(token, action string, data map[string]any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		code, out := s.call(token, action, data)
		ch <- callResult{code, out}
	}()
	return ch
}

// The calls one caller runs at once are bounded: two anonymous calls while
// the first one waits for a lock the test holds in PostgreSQL: one is
// refused with 429 naming the limit, the other completes once the lock
// goes; a user's calls are counted apart from the anonymous ones. (On
// SQLite no lock can hold a reader from outside; the bound is the same
// code for both engines.)
func TestSearchSQLConcurrentCalls(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		if !isPG(env) {
			t.Skip("a SQLite reader cannot be held from outside the plugin")
		}
		s := newSite(t, append(env, "TOXGATE_DATASTORE_SQL_CALLS_ANONYMOUS=1", "TOXGATE_DATASTORE_SQL_CALLS_PER_USER=1", "TOXGATE_DATASTORE_SQL_TIMEOUT=50s"))
		ed := s.tok["eddie"]
		held := s.dataset("held", false, nil)
		free := s.dataset("free", false, nil)
		for _, rid := range []string{held, free} {
			s.ok(ed, "datastore_create", map[string]any{"resource_id": rid, "records": []any{map[string]any{"v": 1}}})
		}
		q := map[string]any{"sql": `SELECT count(*) AS c FROM "` + held + `"`}
		for _, who := range []string{"", ed} {
			release := engineLock(t, s, env, `LOCK TABLE "`+held+`" IN ACCESS EXCLUSIVE MODE`)
			a, b := s.goCall(who, "datastore_search_sql", q), s.goCall(who, "datastore_search_sql", q)
			var first callResult
			var other <-chan callResult
			select {
			case first = <-a:
				other = b
			case first = <-b:
				other = a
			}
			limit := "sql_calls_anonymous"
			if who != "" {
				limit = "sql_calls_per_user"
			}
			if e, _ := first.out["error"].(map[string]any); first.code != 429 || e["__type"] != "Validation Error" || !strings.Contains(jsonText(e), limit) {
				t.Fatalf("caller %q: want 429 naming %s, got %d %v", who, limit, first.code, first.out)
			}
			if who == "" {
				// a user is not held up by the anonymous callers' bound
				if r := s.ok(ed, "datastore_search_sql", map[string]any{"sql": `SELECT count(*) AS c FROM "` + free + `"`}); jsonText(r["records"]) != `[{"c":1}]` {
					t.Errorf("user call while the anonymous one waits: %v", r)
				}
			}
			release()
			if r := <-other; r.code != 200 {
				t.Fatalf("caller %q: the held call: %d %v", who, r.code, r.out)
			}
		}
	})
}

// datastore_search runs within the same time limit, and its q, filters,
// fields and sort are bounded: repeated words count once, too many words
// or values are a 409 naming the limit.
func TestSearchBounds(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, append(env, "TOXGATE_DATASTORE_MAX_Q_WORDS=3", "TOXGATE_DATASTORE_MAX_Q_BYTES=2000", "TOXGATE_DATASTORE_MAX_FILTER_VALUES=5",
			"TOXGATE_DATASTORE_MAX_RESULT_BYTES=50000"))
		ed := s.tok["eddie"]
		rid := s.dataset("bounded", false, nil)
		var recs []any
		for i := 0; i < 2000; i++ {
			recs = append(recs, map[string]any{"a": fmt.Sprintf("alpha %d", i), "b": "beta", "n": i})
		}
		s.ok(ed, "datastore_create", map[string]any{"resource_id": rid, "records": recs})
		search := func(data map[string]any) (int, map[string]any) {
			data["resource_id"] = rid
			return s.call("", "datastore_search", data)
		}
		// the review's request: one word 990 times is one word
		if code, out := search(map[string]any{"q": strings.Repeat("x ", 990), "offset": 1990}); code != 200 || out["result"].(map[string]any)["total"].(float64) != 0 {
			t.Errorf("repeated word: %d %v", code, out)
		}
		if code, out := search(map[string]any{"q": "alpha beta alpha 19", "limit": 1}); code != 200 || out["result"].(map[string]any)["total"].(float64) != 139 {
			t.Errorf("three words: %d %v", code, out)
		}
		refused := map[string]struct {
			data  map[string]any
			limit string
		}{
			"words":          {map[string]any{"q": "a b c d"}, "max_q_words"},
			"words by field": {map[string]any{"q": map[string]any{"a": "a b", "b": "c d"}}, "max_q_words"},
			"q bytes":        {map[string]any{"q": strings.Repeat("y", 2001)}, "max_q_bytes"},
			"filter values":  {map[string]any{"filters": map[string]any{"n": []any{1, 2, 3}, "b": []any{"x", "y", "z"}}}, "max_filter_values"},
			"fields":         {map[string]any{"fields": []any{"a", "a", "a", "a", "a"}}, "too many fields"},
			"sort":           {map[string]any{"sort": "a, a, a, a, a"}, "too many sort terms"},
			"answer size":    {map[string]any{"limit": 2000}, "max_result_bytes"},
		}
		for name, c := range refused {
			code, out := search(c.data)
			if e, _ := out["error"].(map[string]any); code != 409 || e["__type"] != "Validation Error" || !strings.Contains(jsonText(e), c.limit) {
				t.Errorf("%s: want 409 naming %s, got %d %v", name, c.limit, code, out)
			}
		}
		// the time limit: a search that takes the engine longer than it
		// is stopped by the engine and answered with a 409 (a full-text
		// match of every one of 50,000 rows, sorted on an unindexed
		// column: far more than a millisecond of work on any machine)
		s2 := newSite(t, append(env, "TOXGATE_DATASTORE_SQL_TIMEOUT=1ms"))
		rid2 := s2.dataset("slow", false, nil)
		var many []any
		for i := 0; i < 50000; i++ {
			many = append(many, map[string]any{"a": fmt.Sprintf("alpha %d", i), "b": "beta", "n": i})
		}
		s2.ok(s2.tok["eddie"], "datastore_create", map[string]any{"resource_id": rid2, "records": many})
		e := s2.fail("", "datastore_search", map[string]any{"resource_id": rid2, "q": "beta", "offset": 40000, "sort": "a desc, n"}, 409, "Validation Error")
		if !strings.Contains(jsonText(e), "took too long") {
			t.Errorf("time limit: %v", e)
		}
	})
}
