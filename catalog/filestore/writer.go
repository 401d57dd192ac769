package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// DefaultTouchEvery is how often a writer refreshes its file's Touched
// time, so that a sweep tells a live upload from one abandoned by a crash;
// it must be well below the sweep's grace (see Store.WithTouchEvery).
const DefaultTouchEvery = 10 * time.Second

// Writer stores one file. Write it, then Commit; Abort (or a crash) leaves
// a pending file that Abort or a sweep removes. A Writer is not safe for
// concurrent use.
type Writer struct {
	s        *Store
	ctx      context.Context
	info     Info
	max      int64
	buf      []byte
	sum      hash.Hash
	head     []byte
	n        int64
	touched  time.Time
	err      error
	finished bool
	file     *os.File // the part being written, with a directory backend
}

// errAbandoned means a sweep removed the file while it was written (its
// writer went quiet for longer than the sweep's grace).
var errAbandoned = errors.New("upload was idle too long and has been removed; send it again")

// Create starts a file named filename that may hold at most maxBytes
// (0: no limit). The metadata is written first, in the pending state.
func (s *Store) Create(ctx context.Context, filename string, maxBytes int64) (*Writer, error) {
	at := time.Now().UTC()
	info := Info{ID: newFileID(), State: StatePending, Filename: filename, Created: at, Touched: at}
	if s.dir != "" {
		info.Backend = BackendDir
	}
	if _, err := s.files.InsertOne(ctx, info); err != nil {
		return nil, fmt.Errorf("filestore: create: %w", err)
	}
	w := &Writer{s: s, ctx: ctx, info: info, max: maxBytes, sum: sha256.New(), touched: at}
	if s.dir != "" {
		f, err := s.openPart(info.ID)
		if err != nil {
			_ = s.Delete(ctx, info.ID)
			return nil, err
		}
		w.file = f
	} else {
		w.buf = make([]byte, 0, ChunkSize)
	}
	return w, nil
}

// ID is the new file's id.
func (w *Writer) ID() string { return w.info.ID }

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 { return w.info.Size }

// Write stores p, a chunk at a time. It fails with ErrTooLarge past the
// limit given to Create.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.max > 0 && w.info.Size+int64(len(p)) > w.max {
		w.err = ErrTooLarge
		return 0, w.err
	}
	written := 0
	if w.file != nil {
		if len(w.head) < 512 {
			w.head = append(w.head, p[:min(512-len(w.head), len(p))]...)
		}
		w.sum.Write(p)
		n, err := w.file.Write(p)
		w.info.Size += int64(n)
		if err != nil {
			w.err = fmt.Errorf("filestore: write %s: %w", w.info.ID, err)
			return n, w.err
		}
		p, written = nil, n
	}
	for len(p) > 0 {
		if len(w.head) < 512 {
			k := min(512-len(w.head), len(p))
			w.head = append(w.head, p[:k]...)
		}
		k := min(ChunkSize-len(w.buf), len(p))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		written += k
		w.info.Size += int64(k)
		if len(w.buf) == ChunkSize {
			if err := w.flush(); err != nil {
				return written, err
			}
		}
	}
	if now := time.Now(); now.Sub(w.touched) > w.s.touchEvery {
		w.touched = now
		res, err := w.s.files.UpdateOne(w.ctx, bson.M{"_id": w.info.ID}, bson.M{"$set": bson.M{"touched": now.UTC(), "size": w.info.Size}})
		if err == nil && res.MatchedCount == 0 {
			err = errAbandoned
		}
		if err != nil {
			w.err = fmt.Errorf("filestore: touch %s: %w", w.info.ID, err)
			return written, w.err
		}
	}
	return written, nil
}

// flush stores the buffered chunk.
func (w *Writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	w.sum.Write(w.buf)
	c := chunk{ID: chunkID(w.n), N: w.n, Data: w.buf}
	if _, err := w.s.db.Collection(segmentName(w.info.ID, w.n/SegmentChunks)).InsertOne(w.ctx, c); err != nil {
		w.err = fmt.Errorf("filestore: store chunk %d of %s: %w", w.n, w.info.ID, err)
		return w.err
	}
	w.n++
	w.buf = w.buf[:0]
	return nil
}

// Commit stores what is buffered and marks the file complete with its
// size, SHA-256 and guessed media type. Only then can it be read.
func (w *Writer) Commit() (Info, error) {
	if w.err != nil {
		return Info{}, w.err
	}
	if w.finished {
		return Info{}, fmt.Errorf("filestore: %s already finished", w.info.ID)
	}
	if err := w.flush(); err != nil {
		return Info{}, err
	}
	if w.file != nil {
		if err := w.s.commitPart(w.file, w.info.ID); err != nil {
			w.err = err
			return Info{}, err
		}
		w.file = nil
	}
	w.finished = true
	w.info.SHA256 = hex.EncodeToString(w.sum.Sum(nil))
	w.info.Chunks = w.n
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
	if w.file != nil {
		_ = w.file.Close()
		w.file = nil
	}
	return w.s.Delete(ctx, w.info.ID)
}
