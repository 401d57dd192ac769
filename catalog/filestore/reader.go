package filestore

import (
	"context"
	"fmt"
	"io"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Reader streams a byte range of a complete file.
type Reader struct {
	s      *Store
	ctx    context.Context
	info   Info
	next   int64 // next chunk to deliver
	last   int64 // last chunk of the range
	skip   int   // bytes to drop from the first chunk
	remain int64 // bytes left in the range
	cur    *mongo.Cursor
	seg    int64 // segment of cur
	pend   []byte
	byID   bool          // fetch chunks one by one by _id
	file   io.ReadCloser // the range of a file in the store's directory
}

// Open returns a reader of length bytes of the complete file id starting at
// offset (length < 0: to the end).
func (s *Store) Open(ctx context.Context, info Info, offset, length int64) (*Reader, error) {
	if info.State != StateComplete || !validID(info.ID) {
		return nil, ErrNotFound
	}
	if offset < 0 || offset > info.Size {
		return nil, fmt.Errorf("filestore: offset %d outside %d bytes", offset, info.Size)
	}
	if length < 0 || offset+length > info.Size {
		length = info.Size - offset
	}
	r := &Reader{s: s, ctx: ctx, info: info, remain: length, seg: -1}
	if length == 0 {
		return r, nil
	}
	if info.Backend == BackendDir {
		if s.dir == "" {
			return nil, fmt.Errorf("filestore: %s is in a files directory, and none is configured", info.ID)
		}
		f, err := s.openDirRange(info, offset, length)
		if err != nil {
			return nil, err
		}
		r.file = f
		return r, nil
	}
	r.next = offset / ChunkSize
	r.skip = int(offset % ChunkSize)
	r.last = (offset + length - 1) / ChunkSize
	return r, nil
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if r.file != nil {
		n, err := r.file.Read(p)
		r.remain -= int64(n)
		return n, err
	}
	for len(r.pend) == 0 {
		if r.remain == 0 {
			return 0, io.EOF
		}
		data, err := r.chunk()
		if err != nil {
			return 0, err
		}
		if r.skip > 0 {
			if r.skip > len(data) {
				return 0, fmt.Errorf("filestore: chunk of %s shorter than expected", r.info.ID)
			}
			data = data[r.skip:]
			r.skip = 0
		}
		if int64(len(data)) > r.remain {
			data = data[:r.remain]
		}
		r.pend = data
	}
	n := copy(p, r.pend)
	r.pend = r.pend[n:]
	r.remain -= int64(n)
	return n, nil
}

// chunk returns the data of chunk r.next and moves on.
func (r *Reader) chunk() ([]byte, error) {
	n := r.next
	if n > r.last {
		return nil, fmt.Errorf("filestore: %s: read past the range", r.info.ID)
	}
	seg := n / SegmentChunks
	var c chunk
	if !r.byID {
		if r.cur == nil || r.seg != seg {
			if err := r.openSegment(seg); err != nil {
				return nil, err
			}
		}
		// A scan starts at the segment's first chunk: drop the ones before n.
		for {
			if !r.cur.Next(r.ctx) {
				err := r.cur.Err()
				r.closeCursor()
				if err != nil {
					return nil, fmt.Errorf("filestore: read %s: %w", r.info.ID, err)
				}
				r.byID = true // chunks missing from the scan: look them up
				break
			}
			c = chunk{}
			if err := r.cur.Decode(&c); err != nil {
				return nil, fmt.Errorf("filestore: decode chunk of %s: %w", r.info.ID, err)
			}
			if c.N == n {
				break
			}
			if c.N > n || c.N < seg*SegmentChunks {
				r.closeCursor()
				r.byID = true // out of insertion order: look chunks up by _id
				break
			}
		}
	}
	if r.byID {
		c = chunk{}
		err := r.s.db.Collection(segmentName(r.info.ID, seg)).FindOne(r.ctx, bson.M{"_id": chunkID(n)}).Decode(&c)
		if err != nil {
			return nil, fmt.Errorf("filestore: chunk %d of %s: %w", n, r.info.ID, err)
		}
		// Back to scanning at the next segment.
		if (n+1)%SegmentChunks == 0 {
			r.byID = false
		}
	}
	want := int64(ChunkSize)
	if n == r.info.Chunks-1 {
		want = r.info.Size - n*ChunkSize
	}
	if int64(len(c.Data)) != want {
		return nil, fmt.Errorf("filestore: chunk %d of %s has %d bytes, want %d", n, r.info.ID, len(c.Data), want)
	}
	r.next++
	return c.Data, nil
}

// openSegment starts a scan of segment seg.
func (r *Reader) openSegment(seg int64) error {
	r.closeCursor()
	cur, err := r.s.db.Collection(segmentName(r.info.ID, seg)).Find(r.ctx, bson.M{}, options.Find().SetBatchSize(4))
	if err != nil {
		return fmt.Errorf("filestore: read %s: %w", r.info.ID, err)
	}
	r.cur, r.seg = cur, seg
	return nil
}

func (r *Reader) closeCursor() {
	if r.cur != nil {
		_ = r.cur.Close(context.WithoutCancel(r.ctx))
		r.cur = nil
	}
}

// Close ends the reader.
func (r *Reader) Close() error {
	r.closeCursor()
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}
