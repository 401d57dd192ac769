package filestore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"toxgate/gateway/store"
	"toxgate/internal/s3test"
)

// openStore starts the embedded store in a temporary directory and opens
// a Store on it with cfg.
func openStore(t *testing.T, cfg Config) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(ctx, store.Options{DataDir: t.TempDir(), Database: "fs", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	s, err := New(ctx, st.DB(), cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// eachBackend runs f on a store writing to each backend: segment
// collections, a files directory, and a bucket of a real S3-compatible
// server started for the test.
func eachBackend(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Run("mongodb", func(t *testing.T) { f(t, openStore(t, Config{Backend: BackendMongoDB})) })
	t.Run("dir", func(t *testing.T) { f(t, openStore(t, Config{Backend: BackendDir, Dir: t.TempDir()})) })
	t.Run("s3", func(t *testing.T) {
		srv := s3test.Start(t)
		f(t, openStore(t, Config{Backend: BackendS3, S3: s3Config(t, srv, "files/")}))
	})
}

// s3Config is a new bucket of srv with the object key prefix.
func s3Config(t testing.TB, srv *s3test.Server, prefix string) S3Config {
	return S3Config{Bucket: srv.Bucket(t), Prefix: prefix, Endpoint: srv.Endpoint, PathStyle: true,
		AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey, Region: "us-east-1", PartBytes: 6 << 20}
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func write(t *testing.T, s *Store, name string, data []byte) Info {
	t.Helper()
	w, err := s.Create(context.Background(), name, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Odd write sizes cross chunk boundaries.
	for p := data; len(p) > 0; {
		k := min(len(p), 300_001)
		if _, err := w.Write(p[:k]); err != nil {
			t.Fatal(err)
		}
		p = p[k:]
	}
	info, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func read(t *testing.T, s *Store, info Info, off, n int64) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), info, off, n)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteReadRanges(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		size := SegmentChunks*ChunkSize + 3*ChunkSize + 12345 // two segments, a short last chunk
		data := randomBytes(size, 1)
		info := write(t, s, "viability.csv", data)
		sum := sha256.Sum256(data)
		if info.SHA256 != hex.EncodeToString(sum[:]) || info.Size != int64(size) || info.Mimetype != "text/csv" {
			t.Fatalf("info = %+v", info)
		}
		got, err := s.Stat(context.Background(), info.ID)
		if err != nil || got.SHA256 != info.SHA256 || got.State != StateComplete {
			t.Fatalf("stat = %+v, %v", got, err)
		}
		if b := read(t, s, info, 0, -1); !bytes.Equal(b, data) {
			t.Fatal("whole file differs")
		}
		for _, r := range [][2]int64{{0, 1}, {ChunkSize - 1, 2}, {int64(size) - 5, 5}, {int64(SegmentChunks*ChunkSize) - 10, 20}, {777, 3 * ChunkSize}, {int64(size), 0}} {
			if b := read(t, s, info, r[0], r[1]); !bytes.Equal(b, data[r[0]:r[0]+r[1]]) {
				t.Fatalf("range %v differs", r)
			}
		}
	})
}

func TestEmptyFileAndLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		info := write(t, s, "empty.txt", nil)
		if info.Size != 0 || info.SHA256 != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
			t.Fatalf("empty: %+v", info)
		}
		if b := read(t, s, info, 0, -1); len(b) != 0 {
			t.Fatal("empty file read bytes")
		}
		w, err := s.Create(context.Background(), "big.bin", 10)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(make([]byte, 11)); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("write past limit: %v", err)
		}
		if err := w.Abort(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stat(context.Background(), w.ID()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("aborted file found: %v", err)
		}
	})
}

// A pending file is never served, and a sweep removes abandoned uploads,
// unreferenced files and stray segments, but not referenced or fresh files.
func TestSweep(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		kept := write(t, s, "kept.csv", randomBytes(1000, 2))
		write(t, s, "orphan.csv", randomBytes(ChunkSize+1, 3))
		w, err := s.Create(ctx, "cut.csv", 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(randomBytes(ChunkSize+10, 4)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stat(ctx, w.ID()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("pending file served: %v", err)
		}
		// Bytes whose metadata is gone (a deletion cut short).
		stray := newFileID()
		p, err := s.Backend().Create(ctx, stray)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := p.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		strays := 1
		refs := func(id string) bool { return id == kept.ID }
		st, err := s.Sweep(ctx, refs, time.Hour)
		if err != nil || st.Pending != 0 || st.Unreferenced != 0 || st.Segments != strays {
			t.Fatalf("sweep with grace: %+v, %v", st, err)
		}
		st, err = s.Sweep(ctx, refs, 0)
		if err != nil || st.Pending != 1 || st.Unreferenced != 1 || st.Segments != 0 {
			t.Fatalf("sweep: %+v, %v", st, err)
		}
		files, _ := s.List(ctx)
		ids, err := s.Backend().IDs(ctx)
		if err != nil || len(files) != 1 || files[0].ID != kept.ID || len(ids) != 1 || ids[0] != kept.ID {
			t.Fatalf("left: files %+v, bytes of %v (%v)", files, ids, err)
		}
	})
}

func TestGuessMimetype(t *testing.T) {
	for _, c := range []struct{ name, head, want string }{
		{"a.CSV", "", "text/csv"}, {"lib.sdf", "", "chemical/x-mdl-sdfile"}, {"noext", "hello", "text/plain"},
		{"noext", "%PDF-1.4", "application/pdf"}, {"x", "", "application/octet-stream"},
	} {
		if got := GuessMimetype(c.name, []byte(c.head)); got != c.want {
			t.Errorf("%s %q: %s, want %s", c.name, c.head, got, c.want)
		}
	}
}
