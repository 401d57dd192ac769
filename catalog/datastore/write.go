package datastore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"toxgate/catalog/ckan"
)

// notFound is CKAN's error for a resource without a DataStore table.
func notFound(id string) error {
	return ckan.NotFound(fmt.Sprintf("Resource \"%s\" was not found.", id))
}

// Create is datastore_create on resource id by w: it creates the table
// (owned by w) or adds fields to it, sets its primary key and indexes and
// inserts the records, within the owner's quotas (quota.go).
func (s *Store) Create(ctx context.Context, id string, data map[string]any, w Writer) (map[string]any, error) {
	fieldDicts, _, err := dictList(data, "fields")
	if err != nil {
		return nil, err
	}
	records, _, err := dictList(data, "records")
	if err != nil {
		return nil, err
	}
	if err := s.checkRowCount(len(records)); err != nil {
		return nil, err
	}
	pkGiven := data["primary_key"] != nil
	pk, err := stringList(data, "primary_key")
	if err != nil {
		return nil, err
	}
	idxGiven := data["indexes"] != nil
	indexes, err := stringList(data, "indexes")
	if err != nil {
		return nil, err
	}
	includeRecords, err := boolParam(data, "include_records", false)
	if err != nil {
		return nil, err
	}
	var fields []Field
	seen := map[string]bool{}
	for _, fd := range fieldDicts {
		fid, _ := fd["id"].(string)
		if !validFieldName(fid) {
			return nil, ckan.FieldError("fields", fmt.Sprintf("%q is not a valid field name", fid))
		}
		if seen[fid] {
			return nil, ckan.FieldError("fields", fmt.Sprintf("duplicate column: %s", fid))
		}
		seen[fid] = true
		ft, _ := fd["type"].(string)
		if ft == "" {
			ft = guessFromRecords(records, fid)
		}
		if _, ok := parseType(ft); !ok {
			return nil, ckan.FieldError("fields", fmt.Sprintf("%q is not a valid field type", ft))
		}
		f := Field{ID: fid, Type: ft}
		if info, ok := fd["info"].(map[string]any); ok {
			f.Info = info
		} else if fd["info"] != nil {
			return nil, ckan.FieldError("fields", fmt.Sprintf("info of %q is not a dict", fid))
		}
		fields = append(fields, f)
	}
	// fields that come only with the records get a guessed type
	for _, r := range records {
		for _, k := range sortedKeys(r) {
			if !seen[k] && k != "_id" {
				if !validFieldName(k) {
					return nil, ckan.FieldError("records", fmt.Sprintf("%q is not a valid field name", k))
				}
				seen[k] = true
				fields = append(fields, Field{ID: k, Type: guessFromRecords(records, k)})
			}
		}
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	t, err := s.loadTable(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	created := t == nil
	if created {
		t = &table{ID: id, kinds: map[string]kind{}, rowsKnown: true}
		if err := s.createTable(ctx, tx, id, fields); err != nil {
			return nil, err
		}
		for _, f := range fields {
			k, _ := parseType(f.Type)
			t.kinds[f.ID] = k
		}
		t.Fields = fields
	} else if err := s.addFields(ctx, tx, t, fields); err != nil {
		return nil, err
	}
	if len(t.Fields) > s.lim.MaxColumns {
		return nil, ckan.FieldError("fields", fmt.Sprintf("too many fields: %d, at most %d (datastore.max_columns)", len(t.Fields), s.lim.MaxColumns))
	}
	if t.Owner == "" {
		t.Owner = w.UserID
	}
	if err := s.countRows(ctx, tx, t); err != nil {
		return nil, err
	}
	if pkGiven {
		if err := s.setUnique(ctx, tx, t, pk); err != nil {
			return nil, err
		}
	}
	if idxGiven {
		if err := s.setIndexes(ctx, tx, t, indexes); err != nil {
			return nil, err
		}
	}
	if len(records) > 0 {
		if err := s.write(ctx, tx, t, "insert", records); err != nil {
			return nil, err
		}
		t.Rows += int64(len(records))
	}
	if err := s.checkQuotas(ctx, tx, t, w, created); err != nil {
		return nil, err
	}
	if err := s.saveTable(ctx, tx, t); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("datastore: commit: %w", err)
	}
	if pkGiven || idxGiven {
		s.analyze(ctx, id)
	}
	out := map[string]any{"resource_id": id, "fields": t.Fields, "method": "insert"}
	if pkGiven {
		out["primary_key"] = nonNil(t.PrimaryKey)
	}
	if idxGiven {
		out["indexes"] = nonNil(t.Indexes)
	}
	if includeRecords {
		out["records"] = records
	}
	return out, nil
}

// guessFromRecords is the type of field k over every record's value: the
// values' common type, widened (int → int8 → float8) where numbers differ,
// and text where kinds disagree.
func guessFromRecords(records []map[string]any, k string) string {
	t := ""
	for _, r := range records {
		v := r[k]
		if v == nil {
			continue
		}
		g := guessType(v)
		switch {
		case t == "" || t == g:
			t = g
		case numericRank[t] > 0 && numericRank[g] > 0:
			if numericRank[g] > numericRank[t] {
				t = g
			}
		default:
			return "text"
		}
	}
	if t == "" {
		return "text"
	}
	return t
}

var numericRank = map[string]int{"int": 1, "int8": 2, "float8": 3}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *Store) checkRowCount(n int) error {
	if n > s.lim.MaxRowsPerCall {
		return ckan.FieldError("records", fmt.Sprintf("too many records: %d, at most %d per call (datastore.max_rows_per_call)", n, s.lim.MaxRowsPerCall))
	}
	return nil
}

// createTable creates the SQL table name with _id and fields.
func (s *Store) createTable(ctx context.Context, tx querier, name string, fields []Field) error {
	cols := []string{s.d.idColumn()}
	for _, f := range fields {
		k, _ := parseType(f.Type)
		cols = append(cols, quote(f.ID)+" "+s.d.columnType(k))
	}
	if len(fields) > s.lim.MaxColumns {
		return ckan.FieldError("fields", fmt.Sprintf("too many fields: %d, at most %d (datastore.max_columns)", len(fields), s.lim.MaxColumns))
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE "+quote(name)+" ("+strings.Join(cols, ", ")+")"); err != nil {
		return fmt.Errorf("datastore: create table %s: %w", name, err)
	}
	return nil
}

// addFields adds the fields t does not have; a field given again with
// another type is refused.
func (s *Store) addFields(ctx context.Context, tx querier, t *table, fields []Field) error {
	for _, f := range fields {
		k, _ := parseType(f.Type)
		if old, ok := t.kinds[f.ID]; ok {
			if old != k {
				return ckan.FieldError("fields", fmt.Sprintf("field %q cannot change type from %s to %s", f.ID, typeName(old), f.Type))
			}
			for i := range t.Fields {
				if t.Fields[i].ID == f.ID && f.Info != nil {
					t.Fields[i].Info = f.Info
				}
			}
			continue
		}
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+quote(t.ID)+" ADD COLUMN "+quote(f.ID)+" "+s.d.columnType(k)); err != nil {
			return fmt.Errorf("datastore: add column %s: %w", f.ID, err)
		}
		t.Fields = append(t.Fields, f)
		t.kinds[f.ID] = k
	}
	return nil
}

func typeName(k kind) string {
	if k.array {
		return "_" + k.base
	}
	return k.base
}

// randomName is an index name unique in the database.
func randomName(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// indexNames lists the names of the indexes on table name.
func (s *Store) indexNames(ctx context.Context, q querier, name string) ([]string, error) {
	var rows *sql.Rows
	var err error
	if s.d.pg() {
		rows, err = q.QueryContext(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1 AND indexname LIKE 'dsx%'`, name)
	} else {
		rows, err = q.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND name LIKE 'dsx%'`, name)
	}
	if err != nil {
		return nil, fmt.Errorf("datastore: list indexes: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// setUnique replaces the primary key (a unique index over its fields).
func (s *Store) setUnique(ctx context.Context, tx querier, t *table, pk []string) error {
	for _, f := range pk {
		if _, ok := t.kinds[f]; !ok {
			return ckan.FieldError("primary_key", fmt.Sprintf("field %q not in table", f))
		}
	}
	names, err := s.indexNames(ctx, tx, t.ID)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasPrefix(n, "dsxu") {
			if _, err := tx.ExecContext(ctx, "DROP INDEX "+quote(n)); err != nil {
				return fmt.Errorf("datastore: drop index: %w", err)
			}
		}
	}
	t.PrimaryKey = pk
	if len(pk) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "CREATE UNIQUE INDEX "+quote(randomName("dsxu"))+" ON "+quote(t.ID)+" ("+quoteList(pk)+")"); err != nil {
		if isConstraint(err) {
			return ckan.Validation(map[string]any{"constraints": []string{"Cannot insert records or create index because of uniqueness constraint"}})
		}
		return fmt.Errorf("datastore: create unique index: %w", err)
	}
	return nil
}

// setIndexes replaces the plain indexes (one per field).
func (s *Store) setIndexes(ctx context.Context, tx querier, t *table, indexes []string) error {
	for _, f := range indexes {
		if _, ok := t.kinds[f]; !ok && f != "_id" {
			return ckan.FieldError("indexes", fmt.Sprintf("field %q not in table", f))
		}
	}
	names, err := s.indexNames(ctx, tx, t.ID)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasPrefix(n, "dsxi") {
			if _, err := tx.ExecContext(ctx, "DROP INDEX "+quote(n)); err != nil {
				return fmt.Errorf("datastore: drop index: %w", err)
			}
		}
	}
	t.Indexes = indexes
	for _, f := range indexes {
		if _, err := tx.ExecContext(ctx, "CREATE INDEX "+quote(randomName("dsxi"))+" ON "+quote(t.ID)+" ("+quote(f)+")"); err != nil {
			return fmt.Errorf("datastore: create index: %w", err)
		}
	}
	return nil
}

func quoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = quote(id)
	}
	return strings.Join(q, ", ")
}

// dataError turns an engine's refusal of a value (PostgreSQL's data
// exceptions, class 22: a date out of range, a number too large) into a
// validation error; anything else is returned as is.
func dataError(err error, row int) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && strings.HasPrefix(pe.Code, "22") {
		return ckan.FieldError("records", fmt.Sprintf("row %d: %s", row, pe.Message))
	}
	return err
}

// isConstraint reports a uniqueness violation on either engine.
func isConstraint(err error) bool {
	if err == nil {
		return false
	}
	m := err.Error()
	return strings.Contains(m, "UNIQUE constraint failed") || strings.Contains(m, "SQLSTATE 23505") || strings.Contains(m, "duplicate key value")
}

// Upsert is datastore_upsert by w: method insert, upsert (default) or
// update, within the table owner's quotas; dry_run checks and rolls back.
func (s *Store) Upsert(ctx context.Context, id string, data map[string]any, w Writer) (map[string]any, error) {
	records, _, err := dictList(data, "records")
	if err != nil {
		return nil, err
	}
	if err := s.checkRowCount(len(records)); err != nil {
		return nil, err
	}
	method, _ := data["method"].(string)
	if method == "" {
		method = "upsert"
	}
	if method != "insert" && method != "upsert" && method != "update" {
		return nil, ckan.FieldError("method", fmt.Sprintf("%q is not a valid method", method))
	}
	dry, err := boolParam(data, "dry_run", false)
	if err != nil {
		return nil, err
	}
	includeRecords, err := boolParam(data, "include_records", false)
	if err != nil {
		return nil, err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck
	t, err := s.loadTable(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, notFound(id)
	}
	if t.Owner == "" {
		t.Owner = w.UserID
	}
	if err := s.countRows(ctx, tx, t); err != nil {
		return nil, err
	}
	if err := s.write(ctx, tx, t, method, records); err != nil {
		return nil, err
	}
	switch {
	case method == "insert":
		t.Rows += int64(len(records))
	case method == "upsert" && len(records) > 0:
		// an upsert inserts or updates each record: count what it left
		if err := s.recountRows(ctx, tx, t); err != nil {
			return nil, err
		}
	}
	if err := s.checkQuotas(ctx, tx, t, w, false); err != nil {
		return nil, err
	}
	if dry {
		_ = tx.Rollback()
	} else {
		if err := s.saveTable(ctx, tx, t); err != nil {
			return nil, err
		}
		if err := tx.Commit(); err != nil {
			return nil, fmt.Errorf("datastore: commit: %w", err)
		}
	}
	out := map[string]any{"resource_id": id, "method": method}
	if includeRecords {
		out["records"] = records
	}
	return out, nil
}

// write applies records to t with method, inside tx.
func (s *Store) write(ctx context.Context, tx querier, t *table, method string, records []map[string]any) error {
	for i, r := range records {
		cols := make([]string, 0, len(r))
		for _, k := range sortedKeys(r) {
			if _, ok := t.field(k); !ok {
				return ckan.FieldError("records", fmt.Sprintf("row %d has extra keys %q", i+1, k))
			}
			cols = append(cols, k)
		}
		vals := make([]any, len(cols))
		size := int64(0)
		for j, c := range cols {
			k, _ := t.field(c)
			v, err := coerce(k, r[c])
			if err != nil {
				return ckan.FieldError("records", fmt.Sprintf("row %d, field %q: %v", i+1, c, err))
			}
			n := cellSize(v)
			if n > s.lim.MaxCellBytes {
				return ckan.FieldError("records", fmt.Sprintf("row %d, field %q: value of %d bytes is larger than %d (datastore.max_cell_bytes)", i+1, c, n, s.lim.MaxCellBytes))
			}
			size += int64(n)
			vals[j] = s.d.encode(k, v)
		}
		t.Bytes += size
		if t.Bytes > s.lim.MaxTableBytes {
			return ckan.FieldError("records", fmt.Sprintf("table would exceed %d bytes (datastore.max_table_bytes)", s.lim.MaxTableBytes))
		}
		if err := s.writeRow(ctx, tx, t, method, cols, vals, i); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) writeRow(ctx context.Context, tx querier, t *table, method string, cols []string, vals []any, i int) error {
	phs := make([]string, len(cols))
	for j := range cols {
		phs[j] = s.d.ph(j + 1)
	}
	key := t.PrimaryKey
	hasID := false
	for _, c := range cols {
		if c == "_id" {
			hasID = true
		}
	}
	if hasID && method != "insert" {
		key = []string{"_id"}
	}
	if method != "insert" && len(key) == 0 {
		return ckan.FieldError("table", "table does not have a unique key defined")
	}
	if method == "insert" {
		_, err := tx.ExecContext(ctx, "INSERT INTO "+quote(t.ID)+" ("+quoteList(cols)+") VALUES ("+strings.Join(phs, ", ")+")", vals...)
		if isConstraint(err) {
			return ckan.Validation(map[string]any{"constraints": []string{"Cannot insert records or create index because of uniqueness constraint"}, "info": map[string]any{"details": fmt.Sprintf("row %d", i+1)}})
		}
		if err != nil {
			return dataError(fmt.Errorf("datastore: insert: %w", err), i+1)
		}
		return nil
	}
	keyVals := map[string]any{}
	var missing []string
	for _, k := range key {
		found := false
		for j, c := range cols {
			if c == k {
				keyVals[k], found = vals[j], true
			}
		}
		if !found || keyVals[k] == nil {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return ckan.FieldError("key", fmt.Sprintf("fields \"%s\" are missing but needed as key", strings.Join(missing, ", ")))
	}
	var sets []string
	var args []any
	for j, c := range cols {
		isKey := false
		for _, k := range key {
			isKey = isKey || k == c
		}
		if !isKey {
			sets = append(sets, quote(c)+" = "+s.d.ph(len(args)+1))
			args = append(args, vals[j])
		}
	}
	if method == "update" || key[0] == "_id" {
		var where []string
		for _, k := range key {
			where = append(where, quote(k)+" = "+s.d.ph(len(args)+1))
			args = append(args, keyVals[k])
		}
		if len(sets) == 0 {
			sets = []string{quote(key[0]) + " = " + quote(key[0])}
		}
		res, err := tx.ExecContext(ctx, "UPDATE "+quote(t.ID)+" SET "+strings.Join(sets, ", ")+" WHERE "+strings.Join(where, " AND "), args...)
		if err != nil {
			if isConstraint(err) {
				return ckan.Validation(map[string]any{"constraints": []string{"Cannot insert records or create index because of uniqueness constraint"}})
			}
			return dataError(fmt.Errorf("datastore: update: %w", err), i+1)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			kv := make([]string, len(key))
			for j, k := range key {
				kv[j] = fmt.Sprint(keyVals[k])
			}
			return ckan.FieldError("key", fmt.Sprintf("key \"[%s]\" not found", strings.Join(kv, ", ")))
		}
		return nil
	}
	upd := make([]string, 0, len(cols))
	for _, c := range cols {
		isKey := false
		for _, k := range key {
			isKey = isKey || k == c
		}
		if !isKey {
			upd = append(upd, quote(c)+" = excluded."+quote(c))
		}
	}
	conflict := " ON CONFLICT (" + quoteList(key) + ") DO NOTHING"
	if len(upd) > 0 {
		conflict = " ON CONFLICT (" + quoteList(key) + ") DO UPDATE SET " + strings.Join(upd, ", ")
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+quote(t.ID)+" ("+quoteList(cols)+") VALUES ("+strings.Join(phs, ", ")+")"+conflict, vals...); err != nil {
		return dataError(fmt.Errorf("datastore: upsert: %w", err), i+1)
	}
	return nil
}

// Delete is datastore_delete: with filters it deletes the matching rows,
// without them the whole table. dropped reports the latter.
func (s *Store) Delete(ctx context.Context, id string, data map[string]any) (result map[string]any, dropped bool, err error) {
	filters, given, err := dict(data, "filters")
	if err != nil {
		return nil, false, err
	}
	if given {
		out, err := s.deleteRows(ctx, id, filters)
		return out, false, err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback() //nolint:errcheck
	t, err := s.loadTable(ctx, tx, id)
	if err != nil {
		return nil, false, err
	}
	if t == nil {
		return nil, false, notFound(id)
	}
	if err := s.dropTable(ctx, tx, id); err != nil {
		return nil, false, err
	}
	if err := tx.Commit(); err != nil {
		return nil, false, fmt.Errorf("datastore: commit: %w", err)
	}
	return map[string]any{"resource_id": id}, true, nil
}

// dropTable removes table id and its metadata.
func (s *Store) dropTable(ctx context.Context, tx querier, id string) error {
	if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+quote(id)); err != nil {
		return fmt.Errorf("datastore: drop %s: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+tablesTable+" WHERE id = "+s.d.ph(1), id); err != nil {
		return fmt.Errorf("datastore: drop metadata of %s: %w", id, err)
	}
	return nil
}

// RecordsDelete is datastore_records_delete: filters are required ({}
// deletes every row and keeps the table).
func (s *Store) RecordsDelete(ctx context.Context, id string, data map[string]any) (map[string]any, error) {
	filters, given, err := dict(data, "filters")
	if err != nil {
		return nil, err
	}
	if !given {
		return nil, ckan.FieldError("filters", ckan.MsgMissing)
	}
	return s.deleteRows(ctx, id, filters)
}

func (s *Store) deleteRows(ctx context.Context, id string, filters map[string]any) (map[string]any, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck
	t, err := s.loadTable(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, notFound(id)
	}
	where, args, err := s.filterSQL(t, filters, nil, 0)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+quote(id)+where, args...); err != nil {
		return nil, fmt.Errorf("datastore: delete rows: %w", err)
	}
	if err := s.recount(ctx, tx, t); err != nil {
		return nil, err
	}
	if err := s.saveTable(ctx, tx, t); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("datastore: commit: %w", err)
	}
	return map[string]any{"resource_id": id, "filters": filters}, nil
}

// recount recomputes t's logical size and row count after rows were
// deleted.
func (s *Store) recount(ctx context.Context, q querier, t *table) error {
	if err := s.recountRows(ctx, q, t); err != nil {
		return err
	}
	if len(t.Fields) == 0 {
		t.Bytes = 0
		return nil
	}
	parts := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		parts[i] = "COALESCE(length(CAST(" + quote(f.ID) + " AS TEXT)), 0)"
	}
	var n sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT SUM("+strings.Join(parts, " + ")+") FROM "+quote(t.ID)).Scan(&n); err != nil {
		return fmt.Errorf("datastore: table size: %w", err)
	}
	t.Bytes = n.Int64
	return nil
}
