package datastore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// TableIDs lists the resource ids of every DataStore table, for indexes
// kept beside the DataStore (the catalog's structure index).
func (s *Store) TableIDs(ctx context.Context) ([]string, error) {
	rows, err := s.rd.QueryContext(ctx, `SELECT id FROM `+tablesTable+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("datastore: list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("datastore: list tables: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("datastore: list tables: %w", err)
	}
	return out, nil
}

// Fields returns the fields of resource id's table, nil when it has none.
func (s *Store) Fields(ctx context.Context, id string) ([]Field, error) {
	t, err := s.loadTable(ctx, s.rd, id)
	if err != nil || t == nil {
		return nil, err
	}
	return t.Fields, nil
}

// ScanText reads up to limit rows of id's table with _id above after, in
// _id order: their _id and the given columns as text (NULL is ""). It is
// the page reader of the catalog's indexes; it goes around the per-call
// limits of the read actions, so its callers bound what they read.
func (s *Store) ScanText(ctx context.Context, id string, columns []string, after int64, limit int) ([]int64, [][]string, error) {
	sel := make([]string, len(columns))
	for i, c := range columns {
		sel[i] = "CAST(" + quote(c) + " AS TEXT)"
	}
	q := `SELECT "_id", ` + strings.Join(sel, ", ") + ` FROM ` + quote(id) + ` WHERE "_id" > ` + s.d.ph(1) +
		` ORDER BY "_id" LIMIT ` + strconv.Itoa(limit)
	rows, err := s.rd.QueryContext(ctx, q, after)
	if err != nil {
		return nil, nil, fmt.Errorf("datastore: scan %s: %w", id, err)
	}
	defer rows.Close()
	var ids []int64
	var vals [][]string
	raw := make([]sql.NullString, len(columns))
	ptrs := make([]any, len(columns)+1)
	var rid int64
	ptrs[0] = &rid
	for i := range raw {
		ptrs[i+1] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, fmt.Errorf("datastore: scan %s: %w", id, err)
		}
		row := make([]string, len(columns))
		for i, r := range raw {
			row[i] = r.String
		}
		ids = append(ids, rid)
		vals = append(vals, row)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("datastore: scan %s: %w", id, err)
	}
	return ids, vals, nil
}
