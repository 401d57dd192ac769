package datastore

import (
	"context"
	"strings"

	"toxgate/catalog/ckan"
)

// SearchSQLAsOf is datastore_search_sql as of a dataset version: every
// quoted identifier of the statement that names a key of tables (a
// resource id, as in "SELECT * FROM \"<id>\"") reads the table its value
// names (the version's snapshot) instead. Identifiers are found by the
// same reading of the statement as SearchSQL's (strings and comments are
// never rewritten). canRead is asked with the resource id of a snapshot
// the statement reads, and with the id of any other table.
func (s *Store) SearchSQLAsOf(ctx context.Context, data map[string]any, user string, canRead SQLAccess, tables map[string]string) (map[string]any, error) {
	query, _ := data["sql"].(string)
	rewritten, ok := rewriteTables(query, s.d.pg(), tables)
	if !ok {
		return nil, notSingle()
	}
	back := make(map[string]string, len(tables))
	for res, snap := range tables {
		back[snap] = res
	}
	d := make(map[string]any, len(data))
	for k, v := range data {
		d[k] = v
	}
	d["sql"] = rewritten
	out, err := s.SearchSQL(ctx, d, user, func(id string) error {
		if res, ok := back[id]; ok {
			return canRead(res)
		}
		if IsSnapshot(id) {
			return ckan.NotAuthorized("Not authorized to read table " + id)
		}
		return canRead(id)
	})
	if out != nil {
		out["sql"] = query
	}
	return out, err
}

// rewriteTables replaces each quoted identifier of q whose name is a key
// of tables by the value's quoted name; false when q is not one statement.
func rewriteTables(q string, pg bool, tables map[string]string) (string, bool) {
	var b strings.Builder
	last := 0
	_, _, ok := scanStatementIdents(q, pg, func(i, j int) {
		if q[i] != '"' || j-i < 2 {
			return
		}
		name := strings.ReplaceAll(q[i+1:j-1], `""`, `"`)
		snap, hit := tables[name]
		if !hit {
			return
		}
		b.WriteString(q[last:i])
		b.WriteString(quote(snap))
		last = j
	})
	if !ok {
		return "", false
	}
	b.WriteString(q[last:])
	return b.String(), true
}
