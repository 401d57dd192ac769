package datastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"toxgate/catalog/ckan"
)

// readConn is a read connection of datastore_search or datastore_search_sql
// with the read limits in force: on SQLite the longest value and row
// (sqlite3_limit) and an interrupt when the call's context ends,
// also between rows; on PostgreSQL the pool's bound on a row (pgread.go)
// and the driver's cancel request at the context's end. Close it before
// the call returns.
type readConn struct {
	*sql.Conn
	db   uintptr // SQLite's handle (0 on PostgreSQL)
	stop func()
}

func (s *Store) readConn(ctx context.Context) (*readConn, error) {
	c, err := s.rd.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("datastore: read connection: %w", err)
	}
	rc := &readConn{Conn: c, stop: func() {}}
	if !s.d.pg() {
		if err := sqliteLimits(c, s.lim.SQLMaxValueBytes); err != nil {
			_ = c.Close()
			return nil, err
		}
		if rc.db, err = sqliteHandle(c); err != nil {
			_ = c.Close()
			return nil, err
		}
		rc.stop = interruptAt(ctx, rc.db)
	}
	return rc, nil
}

// Close stops the interrupt and returns the connection to the pool.
func (c *readConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// limitError is the CKAN error of a read stopped by a limit (time, size,
// memory, temporary files), or nil when err is something else.
func (s *Store) limitError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	m := err.Error()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || isTimeout(err):
		return ckan.FieldError("query", "Search took too long")
	case errors.Is(err, errRowTooLarge):
		return ckan.FieldError("query", fmt.Sprintf("a result row is larger than %d bytes (datastore.sql_max_value_bytes)", s.lim.SQLMaxValueBytes))
	case strings.Contains(m, "string or blob too big"):
		return ckan.FieldError("query", fmt.Sprintf("a value or row would be larger than %d bytes (datastore.sql_max_value_bytes)", s.lim.SQLMaxValueBytes))
	case strings.Contains(m, "out of memory") || strings.Contains(m, "SQLSTATE 53200"):
		return ckan.FieldError("query", "the query needs more memory than the DataStore allows (datastore.sqlite_heap_limit, datastore.pg_work_mem)")
	case strings.Contains(m, "temp_file_limit"):
		return ckan.FieldError("query", engineMessage(err)+" (datastore.pg_temp_file_limit)")
	}
	return nil
}

// readError maps a failed datastore_search_sql query: a limit, or the
// engine's message (409).
func (s *Store) readError(ctx context.Context, err error) error {
	if le := s.limitError(ctx, err); le != nil {
		return le
	}
	return ckan.Validation(map[string]any{"query": []string{engineMessage(err)}})
}

// resultBudget counts the bytes of an answer's values (and their keys)
// against datastore.max_result_bytes.
type resultBudget struct {
	max, left int64
}

func (s *Store) resultBudget() *resultBudget {
	return &resultBudget{max: s.lim.MaxResultBytes, left: s.lim.MaxResultBytes}
}

// take counts one row as read from the driver.
func (b *resultBudget) take(names []string, raw []any) error {
	if b.max <= 0 {
		return nil
	}
	for i, v := range raw {
		n := int64(len(names[i]))
		switch x := v.(type) {
		case string:
			n += int64(len(x))
		case []byte:
			n += int64(len(x))
		default:
			n += 8
		}
		b.left -= n
	}
	if b.left < 0 {
		return fmt.Errorf("the result is larger than %d bytes (datastore.max_result_bytes)", b.max)
	}
	return nil
}
