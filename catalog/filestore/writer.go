package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// DefaultTouchEvery is how often a writer refreshes its file's Touched
// time, so that a sweep tells a live upload from one abandoned by a crash;
// it must be well below the sweep's grace (see Config.TouchEvery).
const DefaultTouchEvery = 10 * time.Second

// Writer stores one file. Write it, then Commit; Abort (or a crash) leaves
// a pending file that Abort or a sweep removes. A Writer is not safe for
// concurrent use.
type Writer struct {
	s        *Store
	ctx      context.Context
	info     Info
	max      int64
	part     Part
	sum      hash.Hash
	head     []byte
	touched  time.Time
	err      error
	finished bool
}

// errAbandoned means a sweep removed the file while it was written (its
// writer went quiet for longer than the sweep's grace).
var errAbandoned = errors.New("upload was idle too long and has been removed; send it again")

// Create starts a file named filename that may hold at most maxBytes
// (0: no limit) in the write backend. The metadata is written first, in
// the pending state, so that a sweep finds the bytes of a crashed writer.
func (s *Store) Create(ctx context.Context, filename string, maxBytes int64) (*Writer, error) {
	at := time.Now().UTC()
	info := Info{ID: newFileID(), State: StatePending, Filename: filename, Created: at, Touched: at,
		Backend: storedBackend(s.write.Name())}
	if _, err := s.files.InsertOne(ctx, info); err != nil {
		return nil, fmt.Errorf("filestore: create: %w", err)
	}
	part, err := s.write.Create(ctx, info.ID)
	if err != nil {
		_ = s.Delete(context.WithoutCancel(ctx), info.ID)
		return nil, err
	}
	return &Writer{s: s, ctx: ctx, info: info, max: maxBytes, part: part, sum: sha256.New(), touched: at}, nil
}

// ID is the new file's id.
func (w *Writer) ID() string { return w.info.ID }

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 { return w.info.Size }

// Write hashes p and hands it to the backend. It fails with ErrTooLarge
// past the limit given to Create.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.max > 0 && w.info.Size+int64(len(p)) > w.max {
		w.err = ErrTooLarge
		return 0, w.err
	}
	if len(w.head) < 512 {
		w.head = append(w.head, p[:min(512-len(w.head), len(p))]...)
	}
	n, err := w.part.Write(p)
	w.sum.Write(p[:n])
	w.info.Size += int64(n)
	if err != nil {
		w.err = err
		return n, err
	}
	if now := time.Now(); now.Sub(w.touched) > w.s.touchEvery {
		w.touched = now
		res, err := w.s.files.UpdateOne(w.ctx, bson.M{"_id": w.info.ID}, bson.M{"$set": bson.M{"touched": now.UTC(), "size": w.info.Size}})
		if err == nil && res.MatchedCount == 0 {
			err = errAbandoned
		}
		if err != nil {
			w.err = fmt.Errorf("filestore: touch %s: %w", w.info.ID, err)
			return n, w.err
		}
	}
	return n, nil
}

// Commit makes the bytes durable in the backend, then marks the file
// complete with its size, SHA-256 and guessed media type. Only then can it
// be read.
func (w *Writer) Commit() (Info, error) {
	if w.err != nil {
		return Info{}, w.err
	}
	if w.finished {
		return Info{}, fmt.Errorf("filestore: %s already finished", w.info.ID)
	}
	if err := w.part.Commit(w.ctx); err != nil {
		w.err = err
		return Info{}, err
	}
	w.finished = true
	w.info.SHA256 = hex.EncodeToString(w.sum.Sum(nil))
	if w.info.Backend == "" {
		w.info.Chunks = (w.info.Size + ChunkSize - 1) / ChunkSize
	}
	w.info.Mimetype = GuessMimetype(w.info.Filename, w.head)
	w.info.State = StateComplete
	w.info.Touched = time.Now().UTC()
	set := bson.M{"state": w.info.State, "size": w.info.Size, "sha256": w.info.SHA256, "chunks": w.info.Chunks,
		"mimetype": w.info.Mimetype, "touched": w.info.Touched}
	res, err := w.s.files.UpdateOne(w.ctx, bson.M{"_id": w.info.ID, "state": StatePending}, bson.M{"$set": set})
	if err == nil && res.MatchedCount == 0 {
		err = errAbandoned
	}
	if err != nil {
		return Info{}, fmt.Errorf("filestore: commit %s: %w", w.info.ID, err)
	}
	return w.info, nil
}

// Abort removes everything the writer stored. It uses ctx rather than the
// writer's context, which may be the reason for aborting.
func (w *Writer) Abort(ctx context.Context) error {
	w.finished = true
	if w.err == nil {
		w.err = fmt.Errorf("filestore: %s aborted", w.info.ID)
	}
	_ = w.part.Abort(ctx)
	return w.s.Delete(ctx, w.info.ID)
}
