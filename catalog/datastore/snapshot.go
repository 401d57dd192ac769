package datastore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// A snapshot is a frozen copy of a table, made for a dataset version: a
// table of its own (with its own metadata row), which no DataStore action
// writes, so later writes to the resource's table never change it. Its
// name is SnapshotName(version, resource): "ver_" and 32 hex digits, a
// name no resource id has (those are UUIDs) and short enough for
// PostgreSQL's 63-byte identifiers.

// snapshotPrefix starts every snapshot table's name.
const snapshotPrefix = "ver_"

// SnapshotName is the name of the snapshot of resource's table made for
// version.
func SnapshotName(version, resource string) string {
	h := sha256.Sum256([]byte(version + "/" + resource))
	return snapshotPrefix + hex.EncodeToString(h[:16])
}

// IsSnapshot reports whether a table name is a snapshot's.
func IsSnapshot(name string) bool {
	return len(name) == len(snapshotPrefix)+32 && strings.HasPrefix(name, snapshotPrefix)
}

// Snapshot copies table src into a new table dst in one transaction: the
// fields, the primary key (as a unique index) and every row with its _id.
// It reports false when src has no table. A dst left by an earlier,
// interrupted copy is replaced.
func (s *Store) Snapshot(ctx context.Context, src, dst string) (bool, error) {
	if !IsSnapshot(dst) {
		return false, fmt.Errorf("datastore: %q is not a snapshot name", dst)
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	t, err := s.loadTable(ctx, tx, src)
	if err != nil || t == nil {
		return false, err
	}
	if err := s.dropTable(ctx, tx, dst); err != nil {
		return false, err
	}
	if err := s.createTable(ctx, tx, dst, t.Fields); err != nil {
		return false, err
	}
	cols := []string{`"_id"`}
	for _, f := range t.Fields {
		cols = append(cols, quote(f.ID))
	}
	list := strings.Join(cols, ", ")
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+quote(dst)+" ("+list+") SELECT "+list+" FROM "+quote(src)); err != nil {
		return false, fmt.Errorf("datastore: copy %s into %s: %w", src, dst, err)
	}
	c := &table{ID: dst, Fields: t.Fields, kinds: t.kinds, Bytes: t.Bytes}
	if err := s.setUnique(ctx, tx, c, t.PrimaryKey); err != nil {
		return false, err
	}
	if err := s.recountRows(ctx, tx, c); err != nil {
		return false, err
	}
	if err := s.saveTable(ctx, tx, c); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("datastore: commit snapshot %s: %w", dst, err)
	}
	s.analyze(ctx, dst)
	return true, nil
}

// DropSnapshot removes a snapshot table; a missing one is no error.
func (s *Store) DropSnapshot(ctx context.Context, name string) error {
	if !IsSnapshot(name) {
		return fmt.Errorf("datastore: %q is not a snapshot name", name)
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	if err := s.dropTable(ctx, tx, name); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("datastore: commit drop of %s: %w", name, err)
	}
	return nil
}

// Snapshots lists the snapshot tables there are.
func (s *Store) Snapshots(ctx context.Context) ([]string, error) {
	rows, err := s.rw.QueryContext(ctx, "SELECT id FROM "+tablesTable+" WHERE substr(id, 1, 4) = "+s.d.ph(1), snapshotPrefix)
	if err != nil {
		return nil, fmt.Errorf("datastore: list snapshots: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("datastore: list snapshots: %w", err)
		}
		if IsSnapshot(id) {
			out = append(out, id)
		}
	}
	return out, rows.Err()
}

// HasTable reports whether table id exists.
func (s *Store) HasTable(ctx context.Context, id string) (bool, error) {
	t, err := s.loadTable(ctx, s.rw, id)
	return t != nil, err
}
