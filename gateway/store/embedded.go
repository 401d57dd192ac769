// Package store owns the gateway's connection to MongoDB: either a real
// MongoDB deployment named by a URI, or an embedded MongoDB-compatible store
// (FerretDB) started in-process on a Unix socket, keeping its data in
// SQLite files (one gateway) or in a PostgreSQL database (several gateways
// sharing one store).
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
)

// Embedded is a FerretDB instance running inside this process, listening on
// a Unix socket in a directory only this OS user can enter, and keeping its
// data either in SQLite files under a directory only this user can read or
// in a PostgreSQL database (whose own authentication guards the data). It
// has no TCP listener: another user on the machine can neither connect to
// it nor open its files (FerretDB v1.24 has no authentication of its own on
// its MongoDB wire, so access is what the file system allows).
type Embedded struct {
	uri     string
	sockDir string
	cancel  context.CancelFunc
	done    chan struct{}
	indexer *idIndexer
}

// StartEmbedded starts FerretDB (SQLite backend) with its data under dir,
// listening on a Unix socket in a new 0700 temporary directory, and waits
// until it answers a ping or ctx ends. The data directory is created (mode
// 0700) if needed; data written by an earlier run is found again.
func StartEmbedded(ctx context.Context, dir string, logger *slog.Logger) (*Embedded, error) {
	return startEmbedded(ctx, BackendSQLite, dir, "", logger)
}

// StartEmbeddedPostgres starts FerretDB with its PostgreSQL backend on the
// database named by pgURL (a postgres:// URL), listening on a Unix socket
// in a new 0700 temporary directory, and waits until it answers a ping or
// ctx ends. Several gateways may start one each on the same database: the
// MongoDB wire is per process, the data is PostgreSQL's.
func StartEmbeddedPostgres(ctx context.Context, pgURL string, logger *slog.Logger) (*Embedded, error) {
	return startEmbedded(ctx, BackendPostgreSQL, "", pgURL, logger)
}

func startEmbedded(ctx context.Context, backend, dir, pgURL string, logger *slog.Logger) (*Embedded, error) {
	started := time.Now()
	if logger == nil {
		logger = slog.Default()
	}
	if backend == BackendPostgreSQL {
		return startFerret(ctx, started, &ferretdb.Config{Handler: "postgresql", PostgreSQLURL: pgURL}, "", logger)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("embedded store: data dir %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("embedded store: create data dir: %w", err)
	}
	if err := os.Chmod(abs, 0o700); err != nil {
		return nil, fmt.Errorf("embedded store: data dir mode: %w", err)
	}
	return startFerret(ctx, started, &ferretdb.Config{Handler: "sqlite", SQLiteURL: "file:" + abs + string(os.PathSeparator)}, abs, logger)
}

// startFerret runs FerretDB with fc's handler on a Unix socket in a new
// 0700 directory. sqliteDir, when not empty, is the SQLite data directory
// whose tables get the _id index (see idIndexer).
func startFerret(ctx context.Context, started time.Time, fc *ferretdb.Config, sqliteDir string, logger *slog.Logger) (*Embedded, error) {
	sockDir, err := os.MkdirTemp("", "toxgate-store-")
	if err != nil {
		return nil, fmt.Errorf("embedded store: socket dir: %w", err)
	}
	fc.Listener = ferretdb.ListenerConfig{Unix: filepath.Join(sockDir, "mongodb.sock")}
	fc.Logger = logger.With("component", "ferretdb")
	f, err := ferretdb.New(fc)
	if err != nil {
		_ = os.RemoveAll(sockDir)
		return nil, fmt.Errorf("embedded store: start FerretDB: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	e := &Embedded{uri: f.MongoDBURI(), sockDir: sockDir, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(e.done)
		if err := f.Run(runCtx); err != nil {
			logger.Error("embedded store stopped", "err", err)
		}
	}()
	if err := waitPing(ctx, e.uri); err != nil {
		_ = e.Close(context.Background())
		return nil, fmt.Errorf("embedded store: not answering at %s: %w", e.uri, err)
	}
	if sqliteDir != "" {
		e.indexer = &idIndexer{dir: sqliteDir, log: logger}
		e.indexer.sweep(ctx)
		go e.indexer.run(runCtx)
	}
	if err := afterStartSecond(ctx, started); err != nil {
		_ = e.Close(context.Background())
		return nil, fmt.Errorf("embedded store: %w", err)
	}
	return e, nil
}

// afterStartSecond returns once the wall clock is past the second in which
// this store started. FerretDB numbers the rows of a capped collection
// (catalog_claims) as <unix second> << 32 | <a counter that starts at 1 in
// each process>, so a store restarted within the second of a killed one's
// last insert would number its first rows as that one did, and those
// inserts fail on the row number's unique constraint. Waiting (at most one
// second) makes every row of this process younger than any earlier one's.
func afterStartSecond(ctx context.Context, started time.Time) error {
	t := time.NewTimer(time.Until(started.Truncate(time.Second).Add(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// URI is the mongodb:// address of the embedded store (its Unix socket).
func (e *Embedded) URI() string { return e.uri }

// Close stops the listener and closes the SQLite backend, waiting for it to
// finish or ctx to end.
func (e *Embedded) Close(ctx context.Context) error {
	e.cancel()
	select {
	case <-e.done:
		_ = os.RemoveAll(e.sockDir)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("embedded store: stop: %w", ctx.Err())
	}
}

// waitPing connects to uri and pings it until it answers or ctx ends.
func waitPing(ctx context.Context, uri string) error {
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(2 * time.Second))
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = client.Ping(pctx, readpref.Primary())
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
