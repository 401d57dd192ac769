package filestore

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// BackendDir marks a file whose bytes are a file in the store's directory
// (see WithDir) rather than chunks in segment collections.
const BackendDir = "dir"

// WithDir returns a copy of s that writes the bytes of new files as files in
// dir (one per file, named by its id), keeping their metadata in the
// database as before. Several gateways share such a store only when they
// share the directory (a network file system). Files already stored keep
// being read where they are.
func (s *Store) WithDir(dir string) *Store {
	c := *s
	c.dir = dir
	return &c
}

// dirPath is where a complete file's bytes are; partPath where they grow.
func (s *Store) dirPath(id string) string  { return filepath.Join(s.dir, id) }
func (s *Store) partPath(id string) string { return filepath.Join(s.dir, id+".part") }

// openPart creates the file an upload writes into.
func (s *Store) openPart(id string) (*os.File, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("filestore: files dir: %w", err)
	}
	f, err := os.OpenFile(s.partPath(id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("filestore: create %s: %w", id, err)
	}
	return f, nil
}

// commitPart makes a written part durable and gives it its final name.
func (s *Store) commitPart(f *os.File, id string) error {
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("filestore: sync %s: %w", id, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("filestore: close %s: %w", id, err)
	}
	if err := os.Rename(s.partPath(id), s.dirPath(id)); err != nil {
		return fmt.Errorf("filestore: rename %s: %w", id, err)
	}
	d, err := os.Open(s.dir)
	if err != nil {
		return fmt.Errorf("filestore: sync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("filestore: sync dir: %w", err)
	}
	return nil
}

// removeDirFile removes a file's bytes from the directory, complete or not.
func (s *Store) removeDirFile(id string) error {
	if s.dir == "" {
		return nil
	}
	for _, p := range []string{s.dirPath(id), s.partPath(id)} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("filestore: remove %s: %w", p, err)
		}
	}
	return nil
}

// dirFiles lists the file ids that have bytes (complete or partial) in the
// directory.
func (s *Store) dirFiles() ([]string, error) {
	if s.dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(s.dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: list %s: %w", s.dir, err)
	}
	var ids []string
	for _, e := range entries {
		if id := strings.TrimSuffix(e.Name(), ".part"); validID(id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// openDirRange opens length bytes of a complete file at offset.
func (s *Store) openDirRange(info Info, offset, length int64) (io.ReadCloser, error) {
	f, err := os.Open(s.dirPath(info.ID))
	if err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w", info.ID, err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != info.Size {
		_ = f.Close()
		return nil, fmt.Errorf("filestore: %s on disk does not have its %d bytes", info.ID, info.Size)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, offset, length), f}, nil
}
