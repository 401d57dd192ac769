// Package datastore is CKAN's DataStore: a resource's tabular data kept as a
// table in a real SQL engine and queried through the datastore_* actions.
// The engine is embedded SQLite (modernc.org/sqlite, pure Go) by default and
// PostgreSQL (pgx) when a postgres:// URL is configured; both run the same
// code, and the few differences live in dialect.go. The catalog (package
// catalog) authorizes each call and serves the actions; this package knows
// nothing of datasets or users. The loader (loader.go) fills tables from
// CSV/TSV files in the background, as CKAN's XLoader does.
package datastore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// Config selects the engine.
type Config struct {
	// URL is a postgres:// (or postgresql://) URL; empty means the embedded
	// SQLite file under Dir.
	URL string
	// Dir holds the embedded engine's file (datastore.db).
	Dir string
	// Limits bound tables and calls.
	Limits Limits
	// Logger receives the DataStore's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Store is an open DataStore.
type Store struct {
	d   *dialect
	rw  *sql.DB // writes (SQLite: one connection, the engine's one writer)
	rd  *sql.DB // reads (SQLite: read-only connections; PostgreSQL: a pool whose rows are bounded)
	lim Limits
	log *slog.Logger
	// calls bounds the datastore_search_sql calls running at once.
	calls *callLimiter
	// pgTempLimit is whether this PostgreSQL role may set temp_file_limit.
	pgTempLimit bool
	// loader is the background loader, stopped by Close (nil until
	// StartLoader).
	loader *Loader
}

// Engine names the engine: "sqlite" or "postgres".
func (s *Store) Engine() string { return s.d.name }

// Open opens (and on first use creates) the DataStore.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	s := &Store{lim: cfg.Limits.withDefaults(), log: cfg.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.calls = newCallLimiter(s.lim.SQLCallsPerUser, s.lim.SQLCallsAnonymous)
	var err error
	switch {
	case strings.HasPrefix(cfg.URL, "postgres://") || strings.HasPrefix(cfg.URL, "postgresql://"):
		s.d = postgresDialect
		if s.rw, err = sql.Open("pgx", cfg.URL); err != nil {
			return nil, fmt.Errorf("datastore: open PostgreSQL: %w", err)
		}
		s.rw.SetMaxOpenConns(8)
		s.rw.SetMaxIdleConns(8)
		if s.rd, err = openPGReads(cfg.URL, s.lim.SQLMaxValueBytes); err != nil {
			_ = s.rw.Close()
			return nil, err
		}
		s.rd.SetMaxOpenConns(24)
		s.rd.SetMaxIdleConns(24)
	case cfg.URL == "":
		s.d = sqliteDialect
		if cfg.Dir == "" {
			return nil, errors.New("datastore: no directory for the embedded engine")
		}
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("datastore: %w", err)
		}
		if s.lim.SQLiteHeapLimit > 0 {
			if err := setSQLiteHeapLimit(s.lim.SQLiteHeapLimit); err != nil {
				s.log.Warn("datastore: the SQLite heap limit is not enforced", "limit", s.lim.SQLiteHeapLimit, "err", err)
			}
		}
		path := filepath.Join(cfg.Dir, "datastore.db")
		q := "_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(0)&_txlock=immediate"
		if s.rw, err = sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q); err != nil {
			return nil, fmt.Errorf("datastore: open %s: %w", path, err)
		}
		s.rw.SetMaxOpenConns(1)
		s.rw.SetMaxIdleConns(1)
		s.rw.SetConnMaxLifetime(0)
		if err := s.migrate(ctx); err != nil {
			_ = s.rw.Close()
			return nil, err
		}
		// reads: read-only connections that cannot write even if asked
		rq := "mode=ro&_pragma=busy_timeout(30000)&_pragma=query_only(1)"
		if s.rd, err = sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+rq); err != nil {
			return nil, fmt.Errorf("datastore: open %s read-only: %w", path, err)
		}
		s.rd.SetMaxOpenConns(16)
		s.rd.SetMaxIdleConns(16)
		return s, s.rd.PingContext(ctx)
	default:
		return nil, fmt.Errorf("datastore: unsupported URL %q (want postgres:// or empty for the embedded engine)", redact(cfg.URL))
	}
	if err := s.migrate(ctx); err != nil {
		_ = s.rw.Close()
		_ = s.rd.Close()
		return nil, err
	}
	s.pgTempLimit = s.probeTempFileLimit(ctx)
	return s, nil
}

// redact drops a URL's password for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// Close stops the loader and closes the engine.
func (s *Store) Close() error {
	if s.loader != nil {
		s.loader.stop()
	}
	err := s.rw.Close()
	if s.rd != s.rw {
		err = errors.Join(err, s.rd.Close())
	}
	return err
}

// Metadata tables. Resource ids are UUIDs, so they cannot collide.
const (
	tablesTable = "_datastore_tables"
	jobsTable   = "_datastore_jobs"
	// dictTable lists the tables registered as compound dictionaries
	// (dictionaries.go).
	dictTable = "_datastore_dictionaries"
)

func (s *Store) migrate(ctx context.Context) error {
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS ` + tablesTable + ` (id TEXT PRIMARY KEY, fields TEXT NOT NULL, primary_key TEXT NOT NULL, indexes TEXT NOT NULL, bytes BIGINT NOT NULL DEFAULT 0, modified TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + dictTable + ` (id TEXT PRIMARY KEY, registered TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + jobsTable + ` (resource_id TEXT PRIMARY KEY, state TEXT NOT NULL, source TEXT NOT NULL, error TEXT NOT NULL DEFAULT '', rows_loaded BIGINT NOT NULL DEFAULT 0, attempts INT NOT NULL DEFAULT 0, owner TEXT NOT NULL DEFAULT '', heartbeat BIGINT NOT NULL DEFAULT 0, created TEXT NOT NULL, updated TEXT NOT NULL, logs TEXT NOT NULL DEFAULT '[]')`,
	} {
		if _, err := s.rw.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("datastore: create metadata tables: %w", err)
		}
	}
	// a table's owner and row count (quotas.go); -1 rows: not counted yet
	for _, col := range []string{"owner TEXT NOT NULL DEFAULT ''", "row_count BIGINT NOT NULL DEFAULT -1"} {
		if err := s.addMetadataColumn(ctx, col); err != nil {
			return err
		}
	}
	if _, err := s.rw.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS _datastore_tables_owner ON `+tablesTable+` (owner)`); err != nil {
		return fmt.Errorf("datastore: index metadata by owner: %w", err)
	}
	return nil
}

// addMetadataColumn adds a column (its definition) to the tables'
// metadata when it is missing.
func (s *Store) addMetadataColumn(ctx context.Context, def string) error {
	name := strings.Fields(def)[0]
	if s.d.pg() {
		if _, err := s.rw.ExecContext(ctx, `ALTER TABLE `+tablesTable+` ADD COLUMN IF NOT EXISTS `+def); err != nil {
			return fmt.Errorf("datastore: add metadata column %s: %w", name, err)
		}
		return nil
	}
	var n int
	if err := s.rw.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('`+tablesTable+`') WHERE name = ?`, name).Scan(&n); err != nil {
		return fmt.Errorf("datastore: read metadata columns: %w", err)
	}
	if n == 0 {
		if _, err := s.rw.ExecContext(ctx, `ALTER TABLE `+tablesTable+` ADD COLUMN `+def); err != nil {
			return fmt.Errorf("datastore: add metadata column %s: %w", name, err)
		}
	}
	return nil
}

// table is a DataStore table's metadata.
type table struct {
	ID         string
	Fields     []Field
	kinds      map[string]kind
	PrimaryKey []string
	Indexes    []string
	Bytes      int64
	// Owner is the user whose quotas the table counts toward ("" none yet).
	Owner string
	// Rows is the row count when rowsKnown.
	Rows      int64
	rowsKnown bool
}

func (t *table) field(id string) (kind, bool) {
	if id == "_id" {
		return kind{base: "int8"}, true
	}
	k, ok := t.kinds[id]
	return k, ok
}

// querier is a *sql.DB or *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// loadTable reads a table's metadata; nil when there is none.
func (s *Store) loadTable(ctx context.Context, q querier, id string) (*table, error) {
	var fields, pk, idx, owner string
	var bytes, rows int64
	err := q.QueryRowContext(ctx, `SELECT fields, primary_key, indexes, bytes, owner, row_count FROM `+tablesTable+` WHERE id = `+s.d.ph(1), id).Scan(&fields, &pk, &idx, &bytes, &owner, &rows)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("datastore: read metadata of %s: %w", id, err)
	}
	t := &table{ID: id, Bytes: bytes, Owner: owner, Rows: rows, rowsKnown: rows >= 0, kinds: map[string]kind{}}
	if err := errors.Join(json.Unmarshal([]byte(fields), &t.Fields), json.Unmarshal([]byte(pk), &t.PrimaryKey), json.Unmarshal([]byte(idx), &t.Indexes)); err != nil {
		return nil, fmt.Errorf("datastore: metadata of %s: %w", id, err)
	}
	for _, f := range t.Fields {
		k, _ := parseType(f.Type)
		t.kinds[f.ID] = k
	}
	return t, nil
}

// saveTable writes a table's metadata. An owner already recorded stays
// when t has none; a row count t does not know is recorded as unknown.
func (s *Store) saveTable(ctx context.Context, q querier, t *table) error {
	fields, _ := json.Marshal(t.Fields)
	pk, _ := json.Marshal(nonNil(t.PrimaryKey))
	idx, _ := json.Marshal(nonNil(t.Indexes))
	now := time.Now().UTC().Format(time.RFC3339Nano)
	rows := int64(-1)
	if t.rowsKnown {
		rows = t.Rows
	}
	p := s.d.ph
	_, err := q.ExecContext(ctx, `INSERT INTO `+tablesTable+` (id, fields, primary_key, indexes, bytes, modified, owner, row_count) VALUES (`+p(1)+`, `+p(2)+`, `+p(3)+`, `+p(4)+`, `+p(5)+`, `+p(6)+`, `+p(7)+`, `+p(8)+`)
		ON CONFLICT (id) DO UPDATE SET fields = excluded.fields, primary_key = excluded.primary_key, indexes = excluded.indexes, bytes = excluded.bytes, modified = excluded.modified,
		owner = CASE WHEN excluded.owner <> '' THEN excluded.owner ELSE `+tablesTable+`.owner END, row_count = excluded.row_count`,
		t.ID, string(fields), string(pk), string(idx), t.Bytes, now, t.Owner, rows)
	if err != nil {
		return fmt.Errorf("datastore: write metadata of %s: %w", t.ID, err)
	}
	return nil
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// analyze refreshes the planner's statistics of a table where the engine
// needs it; a failure only costs query speed, so it is logged.
func (s *Store) analyze(ctx context.Context, table string) {
	if q := s.d.analyze(table); q != "" {
		if _, err := s.rw.ExecContext(ctx, q); err != nil {
			s.log.Warn("datastore: analyze", "table", table, "err", err)
		}
	}
}

// begin starts a write transaction.
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.rw.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("datastore: begin: %w", err)
	}
	return tx, nil
}
