// Package filestore keeps the files of the catalog's resources: one
// metadata document per file in the catalog's MongoDB database (state,
// size, SHA-256, media type, which backend holds the bytes) and the bytes
// in a Backend: a files directory (dir), an S3-compatible bucket (s3), or
// segment collections of the database itself (mongodb).
//
// A file is written in the state "pending" and becomes "complete" only after
// its backend has made every byte durable and its SHA-256 is known; only
// complete files are read. A sweep removes what crashes leave. See README.md
// and RATIONALE.md.
package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Collection names and layout.
const (
	// CollFiles holds one metadata document per file.
	CollFiles = "filestore"
	// ChunkSize is the size of every chunk but a file's last.
	ChunkSize = 1 << 20
	// SegmentChunks is the number of chunks in one segment collection.
	SegmentChunks = 64
)

// File states.
const (
	StatePending  = "pending"
	StateComplete = "complete"
)

// ErrBytesMissing means a complete file's bytes are not (all) in its
// backend: deleted behind the store's back, or a backend not shared.
var ErrBytesMissing = errors.New("filestore: the file's bytes are missing from its backend")

// ErrNotFound means no complete file has the id.
var ErrNotFound = errors.New("filestore: file not found")

// ErrTooLarge means a file grew past the writer's limit.
var ErrTooLarge = errors.New("filestore: file too large")

// Info describes a stored file.
type Info struct {
	// ID is the file id (32 hex digits).
	ID string `bson:"_id"`
	// State is StatePending while written, StateComplete after Commit.
	State string `bson:"state"`
	// Filename is the client's file name.
	Filename string `bson:"filename"`
	// Mimetype is guessed from the name, then from the content.
	Mimetype string `bson:"mimetype"`
	// Size is the number of bytes.
	Size int64 `bson:"size"`
	// SHA256 is the hex SHA-256 of the bytes.
	SHA256 string `bson:"sha256"`
	// Chunks is the number of chunks (segment collections only).
	Chunks int64 `bson:"chunks"`
	// Created is when the upload started.
	Created time.Time `bson:"created"`
	// Touched is when the writer last reported progress (pending files) or
	// when the file was completed.
	Touched time.Time `bson:"touched"`
	// Backend is where the bytes are: "" for segment collections,
	// BackendDir for a file in the files directory, BackendS3 for an object
	// in the bucket.
	Backend string `bson:"backend,omitempty"`
}

// Hash is the resource hash CKAN clients see: "sha256:<hex>".
func (i Info) Hash() string { return "sha256:" + i.SHA256 }

// Store keeps the metadata of files in one MongoDB database and their
// bytes in a Backend: new files go to the write backend, and a file is read
// from the backend its metadata names, so files stored before a change of
// backend stay readable while every backend they use is configured.
type Store struct {
	files      *mongo.Collection
	log        *slog.Logger
	touchEvery time.Duration
	write      Backend
	backends   map[string]Backend // by stored name ("" for mongodb)
	download   string
}

// New returns a Store on db built from cfg; log may be nil. The segment
// backend (mongodb) is always there for reading; the files directory is
// there when cfg.Dir is set, the bucket when cfg.S3.Bucket is.
func New(ctx context.Context, db *mongo.Database, cfg Config, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.Default()
	}
	s := &Store{files: db.Collection(CollFiles), log: log, touchEvery: cfg.TouchEvery, download: cfg.Download,
		backends: map[string]Backend{"": NewSegments(db)}}
	if s.touchEvery <= 0 {
		s.touchEvery = DefaultTouchEvery
	}
	if cfg.Dir != "" {
		s.backends[BackendDir] = NewDir(cfg.Dir)
	}
	if cfg.S3.Bucket != "" {
		b, err := NewS3(ctx, cfg.S3)
		if err != nil {
			return nil, err
		}
		s.backends[BackendS3] = b
	}
	name := cfg.Backend
	if name == "" {
		name = BackendMongoDB
	}
	w, ok := s.backends[storedBackend(name)]
	if !ok {
		return nil, fmt.Errorf("filestore: backend %q is not configured (files.backend: dir needs files.dir, s3 needs files.s3.bucket)", name)
	}
	s.write = w
	return s, nil
}

// Backend is the backend new files are written to.
func (s *Store) Backend() Backend { return s.write }

// backendOf is the backend holding info's bytes.
func (s *Store) backendOf(info Info) (Backend, error) {
	b, ok := s.backends[info.Backend]
	if !ok {
		return nil, fmt.Errorf("filestore: %s is in backend %q, which is not configured", info.ID, info.Backend)
	}
	return b, nil
}

// newFileID returns 32 random hex digits.
func newFileID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validID reports whether id has the shape of a file id (it becomes part of
// collection names, file names and object keys).
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Stat returns the metadata of a complete file.
func (s *Store) Stat(ctx context.Context, id string) (Info, error) {
	if !validID(id) {
		return Info{}, ErrNotFound
	}
	var info Info
	err := s.files.FindOne(ctx, bson.M{"_id": id}).Decode(&info)
	if errors.Is(err, mongo.ErrNoDocuments) || err == nil && info.State != StateComplete {
		return Info{}, ErrNotFound
	}
	if err != nil {
		return Info{}, fmt.Errorf("filestore: stat %s: %w", id, err)
	}
	return info, nil
}

// List returns the metadata of every file, complete or not.
func (s *Store) List(ctx context.Context) ([]Info, error) {
	cur, err := s.files.Find(ctx, bson.M{})
	if err != nil {
		return nil, fmt.Errorf("filestore: list: %w", err)
	}
	var out []Info
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("filestore: list: %w", err)
	}
	return out, nil
}

// Delete removes a file's bytes from every backend, then its metadata.
// Deleting a file that does not exist is not an error.
func (s *Store) Delete(ctx context.Context, id string) error {
	if !validID(id) {
		return nil
	}
	for _, b := range s.backends {
		if err := b.Delete(ctx, id); err != nil {
			return err
		}
	}
	if _, err := s.files.DeleteOne(ctx, bson.M{"_id": id}); err != nil {
		return fmt.Errorf("filestore: delete %s: %w", id, err)
	}
	return nil
}
