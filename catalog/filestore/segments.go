package filestore

import (
	"context"
	"fmt"
	"io"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// segmentBackend keeps bytes in chunks of ChunkSize in segment collections
// "filestore.<file id>.<segment>" of SegmentChunks chunks each, in the
// catalog's database. A file's chunks are readable once the Store marks
// its metadata complete.
type segmentBackend struct{ db *mongo.Database }

// NewSegments returns the backend keeping bytes in db's segment collections.
func NewSegments(db *mongo.Database) Backend { return &segmentBackend{db: db} }

func (b *segmentBackend) Name() string { return BackendMongoDB }

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

func (b *segmentBackend) Create(ctx context.Context, id string) (Part, error) {
	return &segmentPart{b: b, ctx: ctx, id: id, buf: make([]byte, 0, ChunkSize)}, nil
}

// segmentPart buffers one chunk and stores it when full.
type segmentPart struct {
	b   *segmentBackend
	ctx context.Context
	id  string
	buf []byte
	n   int64
}

func (p *segmentPart) Write(q []byte) (int, error) {
	written := 0
	for len(q) > 0 {
		k := min(ChunkSize-len(p.buf), len(q))
		p.buf = append(p.buf, q[:k]...)
		q = q[k:]
		written += k
		if len(p.buf) == ChunkSize {
			if err := p.flush(p.ctx); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

func (p *segmentPart) flush(ctx context.Context) error {
	if len(p.buf) == 0 {
		return nil
	}
	c := chunk{ID: chunkID(p.n), N: p.n, Data: p.buf}
	if _, err := p.b.db.Collection(segmentName(p.id, p.n/SegmentChunks)).InsertOne(ctx, c); err != nil {
		return fmt.Errorf("filestore: store chunk %d of %s: %w", p.n, p.id, err)
	}
	p.n++
	p.buf = p.buf[:0]
	return nil
}

// Commit stores the last chunk; the database acknowledged every chunk.
func (p *segmentPart) Commit(ctx context.Context) error { return p.flush(ctx) }

func (p *segmentPart) Abort(ctx context.Context) error { return p.b.Delete(ctx, p.id) }

func (b *segmentBackend) Delete(ctx context.Context, id string) error {
	names, err := b.segmentCollections(ctx)
	if err != nil {
		return err
	}
	for _, n := range names[id] {
		if err := b.db.Collection(n).Drop(ctx); err != nil {
			return fmt.Errorf("filestore: drop %s: %w", n, err)
		}
	}
	return nil
}

func (b *segmentBackend) IDs(ctx context.Context) ([]string, error) {
	names, err := b.segmentCollections(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	return ids, nil
}

// segmentCollections maps each file id that has segment collections to
// their names.
func (b *segmentBackend) segmentCollections(ctx context.Context) (map[string][]string, error) {
	names, err := b.db.ListCollectionNames(ctx, bson.M{})
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

func (b *segmentBackend) Open(ctx context.Context, info Info, offset, length int64) (io.ReadCloser, error) {
	return &segmentReader{b: b, ctx: ctx, info: info, remain: length, seg: -1,
		next: offset / ChunkSize, skip: int(offset % ChunkSize), last: (offset + length - 1) / ChunkSize,
		chunks: (info.Size + ChunkSize - 1) / ChunkSize}, nil
}

// segmentReader streams a range of a file's chunks. It scans a segment's
// chunks in insertion order (one scan, which the embedded store pushes
// down) and checks every chunk's number; a chunk out of place is fetched
// by its _id instead.
type segmentReader struct {
	b      *segmentBackend
	ctx    context.Context
	info   Info
	chunks int64 // chunks of the file
	next   int64 // next chunk to deliver
	last   int64 // last chunk of the range
	skip   int   // bytes to drop from the first chunk
	remain int64 // bytes left in the range
	cur    *mongo.Cursor
	seg    int64 // segment of cur
	pend   []byte
	byID   bool // fetch chunks one by one by _id
}

func (r *segmentReader) Read(p []byte) (int, error) {
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
func (r *segmentReader) chunk() ([]byte, error) {
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
		err := r.b.db.Collection(segmentName(r.info.ID, seg)).FindOne(r.ctx, bson.M{"_id": chunkID(n)}).Decode(&c)
		if err != nil {
			return nil, fmt.Errorf("filestore: chunk %d of %s: %w", n, r.info.ID, err)
		}
		// Back to scanning at the next segment.
		if (n+1)%SegmentChunks == 0 {
			r.byID = false
		}
	}
	want := int64(ChunkSize)
	if n == r.chunks-1 {
		want = r.info.Size - n*ChunkSize
	}
	if int64(len(c.Data)) != want {
		return nil, fmt.Errorf("filestore: chunk %d of %s has %d bytes, want %d", n, r.info.ID, len(c.Data), want)
	}
	r.next++
	return c.Data, nil
}

// openSegment starts a scan of segment seg.
func (r *segmentReader) openSegment(seg int64) error {
	r.closeCursor()
	cur, err := r.b.db.Collection(segmentName(r.info.ID, seg)).Find(r.ctx, bson.M{}, options.Find().SetBatchSize(4))
	if err != nil {
		return fmt.Errorf("filestore: read %s: %w", r.info.ID, err)
	}
	r.cur, r.seg = cur, seg
	return nil
}

func (r *segmentReader) closeCursor() {
	if r.cur != nil {
		_ = r.cur.Close(context.WithoutCancel(r.ctx))
		r.cur = nil
	}
}

func (r *segmentReader) Close() error {
	r.closeCursor()
	return nil
}
