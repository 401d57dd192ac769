package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// MigrateStats counts what a migration did.
type MigrateStats struct {
	// Moved is the number of files whose bytes moved to the target.
	Moved int
	// Bytes is the number of bytes moved.
	Bytes int64
	// Already is the number of complete files already in the target.
	Already int
	// Gone is the number of files deleted while they were copied.
	Gone int
}

// Migrate moves the bytes of every complete file to the backend named to
// (BackendDir, BackendS3, BackendMongoDB), one file at a time: it copies
// the bytes under the same file id, checks their SHA-256 against the
// metadata, makes them durable, switches the metadata to the target (only
// if the file still exists in its source backend), and only then deletes
// the source's bytes. An interrupted migration is run again: files already
// switched are skipped, and a file whose copy was cut short is copied
// afresh. progress, when set, is called after each file.
func (s *Store) Migrate(ctx context.Context, to string, progress func(Info)) (MigrateStats, error) {
	var st MigrateStats
	target, ok := s.backends[storedBackend(to)]
	if !ok {
		return st, fmt.Errorf("filestore: backend %q is not configured", to)
	}
	files, err := s.List(ctx)
	if err != nil {
		return st, err
	}
	for _, info := range files {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if info.State != StateComplete || !validID(info.ID) {
			continue
		}
		if info.Backend == storedBackend(to) {
			st.Already++
			continue
		}
		moved, err := s.migrateOne(ctx, info, target)
		if err != nil {
			return st, err
		}
		if moved {
			st.Moved++
			st.Bytes += info.Size
		} else {
			st.Gone++
		}
		if progress != nil {
			progress(info)
		}
	}
	return st, nil
}

// migrateOne copies info's bytes to target and switches the metadata; it
// reports false when the file was deleted meanwhile.
func (s *Store) migrateOne(ctx context.Context, info Info, target Backend) (bool, error) {
	source, err := s.backendOf(info)
	if err != nil {
		return false, err
	}
	// A copy cut short by an earlier run is dropped first.
	if err := target.Delete(ctx, info.ID); err != nil {
		return false, err
	}
	part, err := target.Create(ctx, info.ID)
	if err != nil {
		return false, err
	}
	sum := sha256.New()
	if info.Size > 0 {
		r, err := source.Open(ctx, info, 0, info.Size)
		if err != nil {
			_ = part.Abort(context.WithoutCancel(ctx))
			return false, err
		}
		n, err := io.Copy(io.MultiWriter(part, sum), r)
		_ = r.Close()
		if err == nil && n != info.Size {
			err = fmt.Errorf("filestore: %s: read %d of %d bytes", info.ID, n, info.Size)
		}
		if err != nil {
			_ = part.Abort(context.WithoutCancel(ctx))
			return false, fmt.Errorf("filestore: copy %s: %w", info.ID, err)
		}
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != info.SHA256 {
		_ = part.Abort(context.WithoutCancel(ctx))
		return false, fmt.Errorf("filestore: %s: SHA-256 of the copy is %s, the metadata says %s; source kept", info.ID, got, info.SHA256)
	}
	if err := part.Commit(ctx); err != nil {
		return false, err
	}
	set := bson.M{"backend": storedBackend(target.Name())}
	if target.Name() == BackendMongoDB {
		set["chunks"] = (info.Size + ChunkSize - 1) / ChunkSize
	}
	res, err := s.files.UpdateOne(ctx, bson.M{"_id": info.ID, "state": StateComplete, "backend": backendFilter(info.Backend)}, bson.M{"$set": set})
	if err != nil {
		return false, fmt.Errorf("filestore: switch %s: %w", info.ID, err)
	}
	if res.MatchedCount == 0 { // deleted (or moved) meanwhile: drop the copy
		return false, target.Delete(context.WithoutCancel(ctx), info.ID)
	}
	return true, source.Delete(ctx, info.ID)
}

// backendFilter matches the stored backend value b ("" also matches a
// document without the field).
func backendFilter(b string) any {
	if b == "" {
		return bson.M{"$in": bson.A{"", nil}}
	}
	return b
}
