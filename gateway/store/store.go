package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
)

// The store backends: what Backend reports.
const (
	// BackendSQLite is the embedded FerretDB on SQLite files (one gateway).
	BackendSQLite = "sqlite"
	// BackendPostgreSQL is the embedded FerretDB on a PostgreSQL database
	// (several gateways may share it).
	BackendPostgreSQL = "postgresql"
	// BackendMongoDB is a MongoDB deployment named by a URI.
	BackendMongoDB = "mongodb"
)

// Options says which store to use.
type Options struct {
	// URI of a MongoDB deployment. Empty means: start the embedded store.
	URI string
	// Backend is the embedded store's engine when URI is empty:
	// BackendSQLite (the default when empty) or BackendPostgreSQL.
	Backend string
	// PostgresURL is the postgres:// URL of the PostgreSQL backend's
	// database (Backend BackendPostgreSQL).
	PostgresURL string
	// DataDir holds the embedded store's files (used only when URI is empty
	// and Backend is BackendSQLite).
	DataDir string
	// Database is the database name used by toxgate.
	Database string
	// MaxPoolSize caps the connection pool (0: driver default).
	MaxPoolSize uint64
	// Logger receives the store's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Store is the one MongoDB connection pool of the gateway core.
type Store struct {
	client   *mongo.Client
	db       *mongo.Database
	uri      string
	backend  string
	embedded *Embedded
}

// Open connects to opts.URI, or starts the embedded store when it is empty,
// and waits until the server answers a ping.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Database == "" {
		return nil, errors.New("store: database name is empty")
	}
	s := &Store{uri: opts.URI, backend: BackendMongoDB}
	if s.uri == "" {
		var e *Embedded
		var err error
		switch opts.Backend {
		case "", BackendSQLite:
			s.backend = BackendSQLite
			e, err = StartEmbedded(ctx, opts.DataDir, opts.Logger)
		case BackendPostgreSQL:
			if opts.PostgresURL == "" {
				return nil, errors.New("store: backend postgresql needs a PostgreSQL URL")
			}
			s.backend = BackendPostgreSQL
			e, err = StartEmbeddedPostgres(ctx, opts.PostgresURL, opts.Logger)
		default:
			return nil, fmt.Errorf("store: unknown backend %q (sqlite or postgresql)", opts.Backend)
		}
		if err != nil {
			return nil, err
		}
		s.embedded, s.uri = e, e.URI()
	}
	co := options.Client().ApplyURI(s.uri).SetServerSelectionTimeout(5 * time.Second)
	if opts.MaxPoolSize > 0 {
		co.SetMaxPoolSize(opts.MaxPoolSize)
	}
	client, err := mongo.Connect(co)
	if err != nil {
		s.closeEmbedded()
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	s.client, s.db = client, client.Database(opts.Database)
	if err := s.Ping(ctx); err != nil {
		_ = s.Close(context.Background())
		return nil, fmt.Errorf("store: %w", err)
	}
	return s, nil
}

// URI is the address of the store in use (the embedded one's loopback address
// when embedded). Plugin processes connect with it.
func (s *Store) URI() string { return s.uri }

// Embedded reports whether the store runs inside this process.
func (s *Store) Embedded() bool { return s.embedded != nil }

// Backend names where the data lives: BackendSQLite, BackendPostgreSQL or
// BackendMongoDB.
func (s *Store) Backend() string { return s.backend }

// Shared reports whether other gateways may use the same data (every
// backend but the embedded SQLite files).
func (s *Store) Shared() bool { return s.backend != BackendSQLite }

// Client is the shared connection pool.
func (s *Store) Client() *mongo.Client { return s.client }

// DB is toxgate's database.
func (s *Store) DB() *mongo.Database { return s.db }

// Ping checks that the store answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.client.Ping(ctx, readpref.Primary()); err != nil {
		return fmt.Errorf("ping %s: %w", redact(s.uri), err)
	}
	return nil
}

// Close disconnects the pool and stops the embedded store, if any.
func (s *Store) Close(ctx context.Context) error {
	var errs []error
	if s.client != nil {
		if err := s.client.Disconnect(ctx); err != nil {
			errs = append(errs, fmt.Errorf("store: disconnect: %w", err))
		}
	}
	if s.embedded != nil {
		if err := s.embedded.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Store) closeEmbedded() {
	if s.embedded != nil {
		_ = s.embedded.Close(context.Background())
	}
}

// redact hides credentials in a MongoDB URI for error messages and logs.
func redact(uri string) string {
	opts := options.Client().ApplyURI(uri)
	if opts.Auth != nil && opts.Auth.Password != "" {
		return "mongodb://<redacted>@" + fmt.Sprint(opts.Hosts)
	}
	return uri
}
