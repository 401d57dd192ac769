package datastore

import (
	"strings"
	"testing"
)

// FuzzRewriteTables rewrites hostile statements' table names: a statement
// either is refused (not one statement, as SearchSQL would refuse it) or
// reads the same with every quoted resource id replaced, and nothing in
// strings or comments changes.
func FuzzRewriteTables(f *testing.F) {
	const res = "5b7c1f1e-0000-4000-8000-000000000001"
	for _, q := range []string{
		`SELECT * FROM "` + res + `"`,
		`SELECT '"` + res + `"' FROM "` + res + `" -- "` + res + `"`,
		`SELECT * FROM "` + res + `" a JOIN "other" b ON a.x = b.x`,
		`SELECT "` + res + `"."x" FROM "` + res + `"; SELECT 1`,
		`/* "` + res + `" */ SELECT 1`,
		`SELECT * FROM "unterminated`,
		`SELECT * FROM "a""b"`,
	} {
		f.Add(q, true)
		f.Add(q, false)
	}
	snap := SnapshotName("v", res)
	f.Fuzz(func(t *testing.T, q string, pg bool) {
		out, ok := rewriteTables(q, pg, map[string]string{res: snap})
		_, _, single := scanStatement(q, pg)
		if ok != single {
			t.Fatalf("rewrite ok %v, statement reading %v: %q", ok, single, q)
		}
		if !ok {
			return
		}
		if strings.Contains(q, `"`+res+`"`) == false && out != q {
			t.Fatalf("rewrote a statement without the table: %q -> %q", q, out)
		}
		if back := strings.ReplaceAll(out, `"`+snap+`"`, `"`+res+`"`); !strings.Contains(q, snap) && back != q {
			t.Fatalf("rewrite changed more than table names: %q -> %q", q, out)
		}
	})
}
