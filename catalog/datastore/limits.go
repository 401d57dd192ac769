package datastore

import "time"

// Limits bound what one call, one table or one user may hold or cost; each
// has a clear error when exceeded. For the first six zero means the
// default below; for the others zero means no limit (the gateway always
// sets them, from gateway/config).
type Limits struct {
	// MaxRowsPerCall is the most records one datastore_create or
	// datastore_upsert call may carry.
	MaxRowsPerCall int
	// MaxColumns is the most fields a table may have.
	MaxColumns int
	// MaxCellBytes is the largest value of one cell (its text size).
	MaxCellBytes int
	// MaxTableBytes is the largest logical size of a table: the sum of the
	// text sizes of the values written to it.
	MaxTableBytes int64
	// SQLTimeout is the time limit of one datastore_search_sql or
	// datastore_search call, enforced by the engine (PostgreSQL's
	// statement_timeout or a cancel request; SQLite's interrupt).
	SQLTimeout time.Duration
	// RowsMax is the most rows datastore_search returns in one call
	// (CKAN's ckan.datastore.search.rows_max, 32000).
	RowsMax int

	// SQLMaxValueBytes is the largest string, blob or row a read may build
	// or return: SQLite's SQLITE_LIMIT_LENGTH on the read connections, and
	// on PostgreSQL the largest result row the read connections accept.
	SQLMaxValueBytes int
	// SQLMaxLength is the longest datastore_search_sql statement, in bytes
	// (checked before the statement reaches the engine).
	SQLMaxLength int
	// MaxResultBytes is the most bytes of values one datastore_search or
	// datastore_search_sql answer may carry.
	MaxResultBytes int64
	// SQLiteHeapLimit is SQLite's hard heap limit in the process (every
	// connection together); its soft limit is half of it.
	SQLiteHeapLimit int64
	// PGWorkMem and PGTempFileLimit are PostgreSQL's work_mem and
	// temp_file_limit for datastore_search_sql, in bytes.
	PGWorkMem, PGTempFileLimit int64
	// SQLCallsPerUser is the most datastore_search_sql calls one user may
	// run at once; SQLCallsAnonymous the most all anonymous callers
	// together may run at once (no client address reaches the plugin).
	SQLCallsPerUser, SQLCallsAnonymous int
	// MaxQWords and MaxQBytes bound datastore_search's q: distinct words
	// and bytes of text; MaxFilterValues bounds the values of its filters
	// (all fields together).
	MaxQWords, MaxQBytes, MaxFilterValues int
	// QuotaBytes, QuotaTables and QuotaRows bound what the tables one user
	// owns may hold together (sysadmins' calls are not checked).
	QuotaBytes, QuotaTables, QuotaRows int64
}

// DefaultLimits are the per-call and per-table limits when none are
// configured.
var DefaultLimits = Limits{MaxRowsPerCall: 100000, MaxColumns: 500, MaxCellBytes: 1 << 20, MaxTableBytes: 10 << 30, SQLTimeout: 10 * time.Second, RowsMax: 32000}

func (l Limits) withDefaults() Limits {
	d := l
	if d.MaxRowsPerCall <= 0 {
		d.MaxRowsPerCall = DefaultLimits.MaxRowsPerCall
	}
	if d.MaxColumns <= 0 {
		d.MaxColumns = DefaultLimits.MaxColumns
	}
	if d.MaxCellBytes <= 0 {
		d.MaxCellBytes = DefaultLimits.MaxCellBytes
	}
	if d.MaxTableBytes <= 0 {
		d.MaxTableBytes = DefaultLimits.MaxTableBytes
	}
	if d.SQLTimeout <= 0 {
		d.SQLTimeout = DefaultLimits.SQLTimeout
	}
	if d.RowsMax <= 0 {
		d.RowsMax = DefaultLimits.RowsMax
	}
	return d
}
