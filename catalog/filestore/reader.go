package filestore

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Reader streams a byte range of a complete file from its backend.
type Reader struct {
	rc io.ReadCloser
}

// Open returns a reader of length bytes of the complete file info starting
// at offset (length < 0: to the end).
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
	if length == 0 {
		return &Reader{}, nil
	}
	b, err := s.backendOf(info)
	if err != nil {
		return nil, err
	}
	rc, err := b.Open(ctx, info, offset, length)
	if err != nil {
		return nil, err
	}
	return &Reader{rc: rc}, nil
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if r.rc == nil {
		return 0, io.EOF
	}
	return r.rc.Read(p)
}

// OSFile returns the open file and the section of it this reader covers,
// when the bytes are a local file (the dir backend), so that a sender can
// hand them to the kernel (sendfile) instead of copying them through user
// space; ok is false for other backends. A caller that takes the file
// reads it only through the returned section and still calls Close.
func (r *Reader) OSFile() (f *os.File, offset, length int64, ok bool) {
	s, ok := r.rc.(*fileSection)
	if !ok {
		return nil, 0, 0, false
	}
	return s.f, s.off, s.n, true
}

// Close ends the reader.
func (r *Reader) Close() error {
	if r.rc == nil {
		return nil
	}
	return r.rc.Close()
}

// PresignGet returns a short-lived URL of info's bytes when the store
// answers downloads by redirect (files.download: redirect) and info's
// backend can presign; ok is false otherwise (stream the bytes instead).
func (s *Store) PresignGet(ctx context.Context, info Info, filename string) (url string, ok bool, err error) {
	if s.download != DownloadRedirect {
		return "", false, nil
	}
	b, err := s.backendOf(info)
	if err != nil {
		return "", false, err
	}
	p, can := b.(Presigner)
	if !can {
		return "", false, nil
	}
	url, err = p.PresignGet(ctx, info, filename)
	return url, err == nil, err
}
