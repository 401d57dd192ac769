package datastore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// DiffRows is the most rows of each kind (added, removed, changed) a
// table diff lists; the counts are always whole.
const DiffRows = 1000

// Diff compares table from with table to (either may be "": no table) and
// answers what changed: the fields (added, removed, retyped) and the rows
// (added, removed, changed), at most limit rows of each kind with whole
// counts. Rows are matched by the primary key when both tables have the
// same one, else by their content (a changed row is then one removed and
// one added; identical rows count once). Only the fields both tables have
// with the same type are compared; _id is not compared.
func (s *Store) Diff(ctx context.Context, from, to string, limit int) (map[string]any, error) {
	if limit < 0 || limit > DiffRows {
		limit = DiffRows
	}
	ctx, cancel := context.WithTimeout(ctx, s.lim.SQLTimeout)
	defer cancel()
	conn, err := s.readConn(ctx)
	if err != nil {
		return nil, s.queryError(ctx, err)
	}
	defer conn.Close()
	var ft, tt *table
	if from != "" {
		if ft, err = s.loadTable(ctx, conn, from); err != nil {
			return nil, s.queryError(ctx, err)
		}
	}
	if to != "" {
		if tt, err = s.loadTable(ctx, conn, to); err != nil {
			return nil, s.queryError(ctx, err)
		}
	}
	out := map[string]any{}
	fields := map[string]any{"added": []Field{}, "removed": []Field{}, "changed": []map[string]any{}}
	out["fields"] = fields
	empty := func() map[string]any { return map[string]any{"count": 0, "records": []any{}} }
	rows := map[string]any{"added": empty(), "removed": empty(), "changed": empty()}
	out["rows"] = rows
	switch {
	case ft == nil && tt == nil:
		out["by"] = "none"
		return out, nil
	case ft == nil || tt == nil:
		one, side := tt, "added"
		if ft != nil {
			one, side = ft, "removed"
		}
		fields[side] = one.Fields
		out["by"] = "content"
		r, err := s.diffAll(ctx, conn, one, limit)
		if err != nil {
			return nil, err
		}
		rows[side] = r
		return out, nil
	}
	var common []string
	var added, removed []Field
	var retyped []map[string]any
	for _, f := range tt.Fields {
		k, ok := ft.kinds[f.ID]
		switch {
		case !ok:
			added = append(added, f)
		case k != tt.kinds[f.ID]:
			retyped = append(retyped, map[string]any{"id": f.ID, "from": typeName(k), "to": f.Type})
		default:
			common = append(common, f.ID)
		}
	}
	for _, f := range ft.Fields {
		if _, ok := tt.kinds[f.ID]; !ok {
			removed = append(removed, f)
		}
	}
	if added != nil {
		fields["added"] = added
	}
	if removed != nil {
		fields["removed"] = removed
	}
	if retyped != nil {
		fields["changed"] = retyped
	}
	if len(common) == 0 {
		out["by"] = "none"
		return out, nil
	}
	key := sameKey(ft, tt, common)
	var d *rowDiff
	if key != nil {
		out["by"], out["primary_key"] = "primary_key", key
		d, err = s.diffByKey(ctx, conn, ft, tt, key, common, limit)
	} else {
		out["by"] = "content"
		d, err = s.diffByContent(ctx, conn, ft, tt, common, limit)
	}
	if err != nil {
		return nil, err
	}
	rows["added"], rows["removed"], rows["changed"] = d.added, d.removed, d.changed
	return out, nil
}

// sameKey is the primary key both tables have, when all its fields are
// compared; else nil.
func sameKey(a, b *table, common []string) []string {
	if len(a.PrimaryKey) == 0 || len(a.PrimaryKey) != len(b.PrimaryKey) {
		return nil
	}
	in := map[string]bool{}
	for _, c := range common {
		in[c] = true
	}
	for i, k := range a.PrimaryKey {
		if b.PrimaryKey[i] != k || !in[k] {
			return nil
		}
	}
	return a.PrimaryKey
}

type rowDiff struct{ added, removed, changed map[string]any }

// diffAll lists every row of t (a table added or removed whole).
func (s *Store) diffAll(ctx context.Context, conn *readConn, t *table, limit int) (map[string]any, error) {
	var names []string
	for _, f := range t.Fields {
		names = append(names, f.ID)
	}
	return s.diffList(ctx, conn, t, names, "FROM "+quote(t.ID)+" AS x", `x."_id"`, limit)
}

// diffList counts the rows of from (a FROM clause whose rows are x) and
// lists at most limit of them, ordered by order, with the named fields of
// t.
func (s *Store) diffList(ctx context.Context, conn *readConn, t *table, names []string, from, order string, limit int) (map[string]any, error) {
	var n int64
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) "+from).Scan(&n); err != nil {
		return nil, s.queryError(ctx, err)
	}
	recs, err := s.readRecords(ctx, conn, t, names, "x", from+" ORDER BY "+order, limit)
	if err != nil {
		return nil, err
	}
	return map[string]any{"count": n, "records": recs}, nil
}

// readRecords reads at most limit rows of "SELECT <names of alias> <rest>"
// as records.
func (s *Store) readRecords(ctx context.Context, conn *readConn, t *table, names []string, alias, rest string, limit int) ([]orderedRecord, error) {
	recs := []orderedRecord{}
	if limit == 0 || len(names) == 0 {
		return recs, nil
	}
	sel := make([]string, len(names))
	kinds := make([]kind, len(names))
	for i, n := range names {
		kinds[i] = t.kinds[n]
		sel[i] = alias + "." + quote(n)
		if s.d.pg() && kinds[i].array {
			sel[i] = "to_json(" + sel[i] + ")"
		}
	}
	rows, err := conn.QueryContext(ctx, "SELECT "+strings.Join(sel, ", ")+" "+rest+" LIMIT "+strconv.Itoa(limit))
	if err != nil {
		return nil, s.queryError(ctx, err)
	}
	defer rows.Close()
	return s.scanRecords(ctx, rows, names, kinds, "; ask for fewer rows (limit)")
}

// diffByKey matches rows on key.
func (s *Store) diffByKey(ctx context.Context, conn *readConn, ft, tt *table, key, common []string, limit int) (*rowDiff, error) {
	joinOn := func(a, b string) string {
		on := make([]string, len(key))
		for i, k := range key {
			on[i] = a + "." + quote(k) + " = " + b + "." + quote(k)
		}
		return strings.Join(on, " AND ")
	}
	join := joinOn("f", "t")
	order := func(alias string) string {
		l := make([]string, len(key))
		for i, k := range key {
			l[i] = alias + "." + quote(k)
		}
		return strings.Join(l, ", ")
	}
	toNames := fieldNames(tt)
	fromNames := fieldNames(ft)
	d := &rowDiff{}
	var err error
	// x is the side listed
	addedFrom := "FROM " + quote(tt.ID) + " AS x WHERE NOT EXISTS (SELECT 1 FROM " + quote(ft.ID) + " AS f WHERE " + joinOn("f", "x") + ")"
	if d.added, err = s.diffList(ctx, conn, tt, toNames, addedFrom, order("x"), limit); err != nil {
		return nil, err
	}
	removedFrom := "FROM " + quote(ft.ID) + " AS x WHERE NOT EXISTS (SELECT 1 FROM " + quote(tt.ID) + " AS t WHERE " + joinOn("x", "t") + ")"
	if d.removed, err = s.diffList(ctx, conn, ft, fromNames, removedFrom, order("x"), limit); err != nil {
		return nil, err
	}
	var differs []string
	for _, c := range common {
		if !contains(key, c) {
			differs = append(differs, "f."+quote(c)+" IS DISTINCT FROM t."+quote(c))
		}
	}
	d.changed = map[string]any{"count": 0, "records": []any{}}
	if len(differs) == 0 {
		return d, nil
	}
	changedFrom := " FROM " + quote(ft.ID) + " AS f JOIN " + quote(tt.ID) + " AS t ON " + join + " WHERE " + strings.Join(differs, " OR ")
	var n int64
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*)"+changedFrom).Scan(&n); err != nil {
		return nil, s.queryError(ctx, err)
	}
	// the old and the new row, side by side: f's fields, then t's
	before, err := s.readRecords(ctx, conn, ft, fromNames, "f", changedFrom+" ORDER BY "+order("f"), limit)
	if err != nil {
		return nil, err
	}
	after, err := s.readRecords(ctx, conn, tt, toNames, "t", changedFrom+" ORDER BY "+order("f"), limit)
	if err != nil {
		return nil, err
	}
	list := make([]map[string]any, 0, len(before))
	for i := range before {
		if i >= len(after) {
			break
		}
		k := map[string]any{}
		var changed []string
		for j, name := range before[i].keys {
			if contains(key, name) {
				k[name] = before[i].vals[j]
			}
		}
		for _, c := range common {
			if !contains(key, c) && !sameValue(before[i].get(c), after[i].get(c)) {
				changed = append(changed, c)
			}
		}
		list = append(list, map[string]any{"key": k, "from": before[i], "to": after[i], "fields": changed})
	}
	d.changed = map[string]any{"count": n, "records": list}
	return d, nil
}

// diffByContent matches rows on the content of the common fields.
func (s *Store) diffByContent(ctx context.Context, conn *readConn, ft, tt *table, common []string, limit int) (*rowDiff, error) {
	cols := quoteList(common)
	d := &rowDiff{changed: map[string]any{"count": 0, "records": []any{}}}
	var err error
	addedFrom := "FROM (SELECT " + cols + " FROM " + quote(tt.ID) + " EXCEPT SELECT " + cols + " FROM " + quote(ft.ID) + ") AS x"
	if d.added, err = s.diffList(ctx, conn, tt, common, addedFrom, orderAll("x", common), limit); err != nil {
		return nil, err
	}
	removedFrom := "FROM (SELECT " + cols + " FROM " + quote(ft.ID) + " EXCEPT SELECT " + cols + " FROM " + quote(tt.ID) + ") AS x"
	if d.removed, err = s.diffList(ctx, conn, ft, common, removedFrom, orderAll("x", common), limit); err != nil {
		return nil, err
	}
	return d, nil
}

func orderAll(alias string, names []string) string {
	l := make([]string, len(names))
	for i, n := range names {
		l[i] = alias + "." + quote(n)
	}
	return strings.Join(l, ", ")
}

func fieldNames(t *table) []string {
	out := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		out[i] = f.ID
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// get is the value of field k ("" none).
func (r orderedRecord) get(k string) any {
	for i, n := range r.keys {
		if n == k {
			return r.vals[i]
		}
	}
	return nil
}

// sameValue compares two decoded values by their JSON text.
func sameValue(a, b any) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}
