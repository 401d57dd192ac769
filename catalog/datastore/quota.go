package datastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"toxgate/catalog/ckan"
)

// Writer is who calls a write action (datastore_create, datastore_upsert).
type Writer struct {
	// UserID owns the tables the call creates, and a table nobody owns
	// yet ("" none).
	UserID string
	// Sysadmin calls are not held to the quotas.
	Sysadmin bool
}

// Quotas: the tables one user owns may together hold at most
// datastore.quota_bytes (their logical size, as datastore.max_table_bytes
// counts it), datastore.quota_rows and datastore.quota_tables tables. A
// table is owned by the user whose call created it (for a table the loader
// made, the user whose write queued the load: Adopt). A write is checked
// against its table's owner's usage, in the write's transaction; a write
// over a quota is refused with 403 and changes nothing.

// usage is what the tables of one owner hold together.
type usage struct{ tables, bytes, rows int64 }

func (s *Store) quotasOn() bool {
	return s.lim.QuotaBytes > 0 || s.lim.QuotaTables > 0 || s.lim.QuotaRows > 0
}

// usageOf sums the tables of owner but except (a table id, "" none).
func (s *Store) usageOf(ctx context.Context, q querier, owner, except string) (usage, error) {
	var u usage
	p := s.d.ph
	err := q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(bytes), 0), COALESCE(SUM(CASE WHEN row_count > 0 THEN row_count ELSE 0 END), 0) FROM `+tablesTable+
		` WHERE owner = `+p(1)+` AND id <> `+p(2), owner, except).Scan(&u.tables, &u.bytes, &u.rows)
	if err != nil {
		return u, fmt.Errorf("datastore: usage of %s: %w", owner, err)
	}
	return u, nil
}

// lockOwner serializes, until the end of transaction q, the quota checks
// of one owner (PostgreSQL runs writes in parallel; SQLite has one
// writer).
func (s *Store) lockOwner(ctx context.Context, q querier, owner string) error {
	if !s.d.pg() {
		return nil
	}
	if _, err := q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(1146442829, hashtext($1))`, owner); err != nil {
		return fmt.Errorf("datastore: lock quota of %s: %w", owner, err)
	}
	return nil
}

// checkQuotas refuses a write that leaves t's owner over a quota; created
// says the write creates t (only then does the table count grow).
func (s *Store) checkQuotas(ctx context.Context, q querier, t *table, w Writer, created bool) error {
	if w.Sysadmin || t.Owner == "" || !s.quotasOn() {
		return nil
	}
	if err := s.lockOwner(ctx, q, t.Owner); err != nil {
		return err
	}
	u, err := s.usageOf(ctx, q, t.Owner, t.ID)
	if err != nil {
		return err
	}
	u.tables++
	u.bytes += t.Bytes
	u.rows += max(t.Rows, 0)
	whose := "the tables of this table's owner"
	if t.Owner == w.UserID {
		whose = "your DataStore tables"
	}
	switch {
	case created && s.lim.QuotaTables > 0 && u.tables > s.lim.QuotaTables:
		return quotaError(fmt.Sprintf("DataStore quota exceeded: %s would be %d tables, at most %d (datastore.quota_tables)", whose, u.tables, s.lim.QuotaTables))
	case s.lim.QuotaBytes > 0 && u.bytes > s.lim.QuotaBytes:
		return quotaError(fmt.Sprintf("DataStore quota exceeded: %s would hold %d bytes, at most %d (datastore.quota_bytes)", whose, u.bytes, s.lim.QuotaBytes))
	case s.lim.QuotaRows > 0 && u.rows > s.lim.QuotaRows:
		return quotaError(fmt.Sprintf("DataStore quota exceeded: %s would hold %d rows, at most %d (datastore.quota_rows)", whose, u.rows, s.lim.QuotaRows))
	}
	return nil
}

func quotaError(msg string) error { return ckan.NotAuthorized(msg) }

// CheckLoadQuota reports, before a load of resource id by owner is queued,
// whether owner has room for it: 403 when the owner's tables are already
// at the bytes or rows quota, or at the tables quota and id has no table
// of theirs yet. The load's own size is bounded by datastore.max_load_bytes.
func (s *Store) CheckLoadQuota(ctx context.Context, owner, id string) error {
	if owner == "" || !s.quotasOn() {
		return nil
	}
	u, err := s.usageOf(ctx, s.rd, owner, id)
	if err != nil {
		return err
	}
	t, err := s.loadTable(ctx, s.rd, id)
	if err != nil {
		return err
	}
	if t != nil && t.Owner == owner {
		u.tables++
		u.bytes += t.Bytes
		u.rows += max(t.Rows, 0)
	} else if s.lim.QuotaTables > 0 && u.tables >= s.lim.QuotaTables {
		return quotaError(fmt.Sprintf("DataStore quota exceeded: your DataStore tables are %d, at most %d (datastore.quota_tables)", u.tables, s.lim.QuotaTables))
	}
	switch {
	case s.lim.QuotaBytes > 0 && u.bytes >= s.lim.QuotaBytes:
		return quotaError(fmt.Sprintf("DataStore quota exceeded: your DataStore tables hold %d bytes, at most %d (datastore.quota_bytes)", u.bytes, s.lim.QuotaBytes))
	case s.lim.QuotaRows > 0 && u.rows >= s.lim.QuotaRows:
		return quotaError(fmt.Sprintf("DataStore quota exceeded: your DataStore tables hold %d rows, at most %d (datastore.quota_rows)", u.rows, s.lim.QuotaRows))
	}
	return nil
}

// Adopt gives table id, when it has no owner (a table the loader made), to
// the user whose write queued its load, else to fallback; and counts its
// rows when they are not counted yet.
func (s *Store) Adopt(ctx context.Context, id, fallback string) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	t, err := s.loadTable(ctx, tx, id)
	if err != nil || t == nil || (t.Owner != "" && t.rowsKnown) {
		return err
	}
	if t.Owner == "" {
		var submitter sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT submitter FROM `+jobsTable+` WHERE resource_id = `+s.d.ph(1), id).Scan(&submitter)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("datastore: submitter of the load of %s: %w", id, err)
		}
		t.Owner = submitter.String
		if t.Owner == "" {
			t.Owner = fallback
		}
	}
	if err := s.countRows(ctx, tx, t); err != nil {
		return err
	}
	if err := s.saveTable(ctx, tx, t); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("datastore: commit: %w", err)
	}
	return nil
}

// countRows counts t's rows when they are not counted yet.
func (s *Store) countRows(ctx context.Context, q querier, t *table) error {
	if t.rowsKnown {
		return nil
	}
	return s.recountRows(ctx, q, t)
}

// recountRows counts t's rows.
func (s *Store) recountRows(ctx context.Context, q querier, t *table) error {
	if err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+quote(t.ID)).Scan(&t.Rows); err != nil {
		return fmt.Errorf("datastore: count rows of %s: %w", t.ID, err)
	}
	t.rowsKnown = true
	return nil
}
