package filestore

import (
	"context"
	"io"
)

// Backend names, as in files.backend and in Info.Backend.
const (
	// BackendMongoDB keeps bytes in segment collections of the catalog's
	// database (stored as "" in Info.Backend).
	BackendMongoDB = "mongodb"
	// BackendDir keeps bytes as files in a directory.
	BackendDir = "dir"
	// BackendS3 keeps bytes as objects in an S3-compatible bucket.
	BackendS3 = "s3"
)

// Backend holds the bytes of files; the Store keeps their metadata (state,
// size, SHA-256) in the database and decides when bytes may be read.
type Backend interface {
	// Name is the backend's name (BackendDir, BackendS3, BackendMongoDB).
	Name() string
	// Create starts the bytes of file id. Nothing of them is readable
	// until the part's Commit returned nil.
	Create(ctx context.Context, id string) (Part, error)
	// Open reads length bytes of the complete file info at offset
	// (0 <= offset, offset+length <= info.Size, length > 0).
	Open(ctx context.Context, info Info, offset, length int64) (io.ReadCloser, error)
	// Delete removes the bytes of id, complete or partial; a missing one
	// is not an error.
	Delete(ctx context.Context, id string) error
	// IDs lists the file ids that have bytes, complete or partial.
	IDs(ctx context.Context) ([]string, error)
}

// Part is the bytes of one file being written.
type Part interface {
	io.Writer
	// Commit makes the bytes durable and readable under the file's id.
	Commit(ctx context.Context) error
	// Abort drops what was written.
	Abort(ctx context.Context) error
}

// Presigner is a Backend that can give a client a short-lived URL of a
// file's bytes (files.download: redirect).
type Presigner interface {
	// PresignGet returns a URL that reads info's bytes until it expires,
	// answering with the given download file name and media type.
	PresignGet(ctx context.Context, info Info, filename string) (string, error)
}

// storedBackend is the Info.Backend value of a backend name.
func storedBackend(name string) string {
	if name == BackendMongoDB {
		return ""
	}
	return name
}
