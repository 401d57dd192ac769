package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the driver FerretDB's SQLite backend uses ("sqlite")
)

// idIndexSuffix ends the name of the index added to each collection table.
const idIndexSuffix = "__toxgate_id_expr"

// idIndexEvery is how often new collections are looked for.
const idIndexEvery = time.Second

// idIndexer gives every collection table of the embedded store an SQLite
// index on _ferretdb_sjson->'$._id', the expression FerretDB's SQLite
// backend compares when it pushes a lone _id filter down to SQL (finds,
// updates and deletes by _id). FerretDB's own unique _id index is on
// _ferretdb_sjson->"_id", which SQLite does not match with that
// expression, so without this index each of those reads the whole table
// (~200 ms for one dataset among 10,000; ~1 ms with it). Collections made
// later (by plugins) are indexed within idIndexEvery.
type idIndexer struct {
	dir string
	log *slog.Logger
}

// sweep indexes every collection table of every database file in dir.
func (x *idIndexer) sweep(ctx context.Context) {
	files, err := filepath.Glob(filepath.Join(x.dir, "*.sqlite"))
	if err != nil {
		return
	}
	for _, f := range files {
		err := x.sweepFile(ctx, f)
		if err != nil && ctx.Err() == nil {
			x.log.Warn("embedded store: _id index", "file", filepath.Base(f), "err", err)
		}
	}
}

func (x *idIndexer) sweepFile(ctx context.Context, file string) error {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: file}).EscapedPath()+"?mode=rw&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	// tables of collections whose index is missing (also after a
	// collection was dropped and made again under the same table name)
	rows, err := db.QueryContext(ctx, `SELECT c.table_name FROM "_ferretdb_collections" c
		WHERE NOT EXISTS (SELECT 1 FROM sqlite_master m WHERE m.type = 'index' AND m.name = c.table_name || ?)`, idIndexSuffix)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil // a database file FerretDB has not set up yet
		}
		return fmt.Errorf("list collections: %w", err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	rows.Close()
	for _, t := range tables {
		start := time.Now()
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, t+idIndexSuffix, t)
		if _, err := db.ExecContext(ctx, q); err != nil {
			if strings.Contains(err.Error(), "no such table") {
				continue // dropped meanwhile
			}
			return fmt.Errorf("index %s: %w", t, err)
		}
		if d := time.Since(start); d > 50*time.Millisecond {
			x.log.Info("embedded store: _id index made", "table", t, "took", d)
		}
	}
	return nil
}

// run sweeps at once, then every idIndexEvery until ctx ends.
func (x *idIndexer) run(ctx context.Context) {
	t := time.NewTicker(idIndexEvery)
	defer t.Stop()
	for {
		x.sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
