// Package filestore keeps uploaded files in the catalog's MongoDB database,
// so that every gateway sharing that database serves every file.
//
// A file is one metadata document in the collection "filestore" and its bytes
// in chunks (ChunkSize bytes each, the last one shorter) spread over segment
// collections "filestore.<file id>.<segment>" of SegmentChunks chunks each.
// A file is written in the state "pending" and becomes "complete" only after
// every chunk is stored and its SHA-256 is known; only complete files are
// read. Readers stream a segment's chunks in insertion order (one scan, which
// the embedded store pushes down) and check every chunk's number; a chunk out
// of place is fetched by its _id instead. See README.md for why.
package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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
	// Chunks is the number of chunks.
	Chunks int64 `bson:"chunks"`
	// Created is when the upload started.
	Created time.Time `bson:"created"`
	// Touched is when the writer last reported progress (pending files) or
	// when the file was completed.
	Touched time.Time `bson:"touched"`
	// Backend is where the bytes are: "" for segment collections,
	// BackendDir for a file in the store's directory.
	Backend string `bson:"backend,omitempty"`
}

// Hash is the resource hash CKAN clients see: "sha256:<hex>".
func (i Info) Hash() string { return "sha256:" + i.SHA256 }

// Store reads and writes files in one MongoDB database.
type Store struct {
	db         *mongo.Database
	files      *mongo.Collection
	log        *slog.Logger
	touchEvery time.Duration
	dir        string // bytes of new files go here when set (WithDir)
}

// New returns a Store on db; log may be nil.
func New(db *mongo.Database, log *slog.Logger) *Store {
	if log == nil {
		log = slog.Default()
	}
	return &Store{db: db, files: db.Collection(CollFiles), log: log, touchEvery: DefaultTouchEvery}
}

// WithTouchEvery returns a copy of s whose writers refresh their file's
// Touched time every d (keep it well below the sweep's grace).
func (s *Store) WithTouchEvery(d time.Duration) *Store {
	c := *s
	c.touchEvery = d
	return &c
}

// newFileID returns 32 random hex digits.
func newFileID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validID reports whether id has the shape of a file id (it becomes part of
// collection names).
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

// segmentName is the collection holding segment seg of file id.
func segmentName(id string, seg int64) string {
	return fmt.Sprintf("%s.%s.%d", CollFiles, id, seg)
}

// chunkID is the _id of chunk n: zero-padded so that string order is number
// order, and a string so that the embedded store pushes a lookup down.
func chunkID(n int64) string { return fmt.Sprintf("%010d", n) }

// chunk is one stored piece of a file.
type chunk struct {
	ID   string `bson:"_id"`
	N    int64  `bson:"n"`
	Data []byte `bson:"data"`
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

// Delete removes a file's chunks, then its metadata. Deleting a file that
// does not exist is not an error.
func (s *Store) Delete(ctx context.Context, id string) error {
	if !validID(id) {
		return nil
	}
	if err := s.dropSegments(ctx, id); err != nil {
		return err
	}
	if err := s.removeDirFile(id); err != nil {
		return err
	}
	if _, err := s.files.DeleteOne(ctx, bson.M{"_id": id}); err != nil {
		return fmt.Errorf("filestore: delete %s: %w", id, err)
	}
	return nil
}

// dropSegments drops every segment collection of file id.
func (s *Store) dropSegments(ctx context.Context, id string) error {
	names, err := s.segmentCollections(ctx)
	if err != nil {
		return err
	}
	for _, n := range names[id] {
		if err := s.db.Collection(n).Drop(ctx); err != nil {
			return fmt.Errorf("filestore: drop %s: %w", n, err)
		}
	}
	return nil
}

// segmentCollections maps each file id that has segment collections to
// their names.
func (s *Store) segmentCollections(ctx context.Context) (map[string][]string, error) {
	names, err := s.db.ListCollectionNames(ctx, bson.M{})
	if err != nil {
		return nil, fmt.Errorf("filestore: list collections: %w", err)
	}
	out := map[string][]string{}
	prefix := CollFiles + "."
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok {
			continue
		}
		id, _, ok := strings.Cut(rest, ".")
		if ok && validID(id) {
			out[id] = append(out[id], n)
		}
	}
	return out, nil
}
