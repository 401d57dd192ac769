package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// dirBackend keeps each file's bytes as one file in a directory, named by
// the file id: "<id>.part" while written, renamed to "<id>" after fsync, and
// the directory synced after the rename, so a complete name always holds
// every byte and a crash leaves at most a ".part" that the sweep removes.
type dirBackend struct{ dir string }

// NewDir returns the backend keeping bytes in dir (made on first write).
func NewDir(dir string) Backend { return &dirBackend{dir: dir} }

func (b *dirBackend) Name() string { return BackendDir }

func (b *dirBackend) path(id string) string     { return filepath.Join(b.dir, id) }
func (b *dirBackend) partPath(id string) string { return filepath.Join(b.dir, id+".part") }

func (b *dirBackend) Create(_ context.Context, id string) (Part, error) {
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return nil, fmt.Errorf("filestore: files dir: %w", err)
	}
	f, err := os.OpenFile(b.partPath(id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("filestore: create %s: %w", id, err)
	}
	return &dirPart{b: b, id: id, f: f}, nil
}

// dirPart is a file growing in the directory.
type dirPart struct {
	b  *dirBackend
	id string
	f  *os.File
}

func (p *dirPart) Write(q []byte) (int, error) {
	n, err := p.f.Write(q)
	if err != nil {
		return n, fmt.Errorf("filestore: write %s: %w", p.id, err)
	}
	return n, nil
}

// Commit syncs the file, renames it to its final name and syncs the
// directory, so the name survives a power loss.
func (p *dirPart) Commit(context.Context) error {
	if err := p.f.Sync(); err != nil {
		_ = p.f.Close()
		return fmt.Errorf("filestore: sync %s: %w", p.id, err)
	}
	if err := p.f.Close(); err != nil {
		return fmt.Errorf("filestore: close %s: %w", p.id, err)
	}
	if err := os.Rename(p.b.partPath(p.id), p.b.path(p.id)); err != nil {
		return fmt.Errorf("filestore: rename %s: %w", p.id, err)
	}
	d, err := os.Open(p.b.dir)
	if err != nil {
		return fmt.Errorf("filestore: sync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("filestore: sync dir: %w", err)
	}
	return nil
}

func (p *dirPart) Abort(ctx context.Context) error {
	_ = p.f.Close()
	return p.b.Delete(ctx, p.id)
}

func (b *dirBackend) Delete(_ context.Context, id string) error {
	for _, p := range []string{b.path(id), b.partPath(id)} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("filestore: remove %s: %w", p, err)
		}
	}
	return nil
}

func (b *dirBackend) IDs(context.Context) ([]string, error) {
	entries, err := os.ReadDir(b.dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: list %s: %w", b.dir, err)
	}
	var ids []string
	for _, e := range entries {
		if id := strings.TrimSuffix(e.Name(), ".part"); validID(id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (b *dirBackend) Open(_ context.Context, info Info, offset, length int64) (io.ReadCloser, error) {
	f, err := os.Open(b.path(info.ID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is not in the files directory", ErrBytesMissing, info.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w", info.ID, err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != info.Size {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s on disk does not have its %d bytes", ErrBytesMissing, info.ID, info.Size)
	}
	return &fileSection{SectionReader: io.NewSectionReader(f, offset, length), f: f, off: offset, n: length}, nil
}

// fileSection is length bytes of an open file from offset: read through
// its SectionReader, or handed whole to a zero-copy sender (Reader.OSFile).
type fileSection struct {
	*io.SectionReader
	f      *os.File
	off, n int64
}

// Close closes the file.
func (s *fileSection) Close() error { return s.f.Close() }
