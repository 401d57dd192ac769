package ociimage

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"time"
)

// file is one entry of a layer: a folder, bytes, or a file copied from disk.
type file struct {
	name  string // path in the image, without the leading slash
	mode  int64
	owner int // UID and GID
	isDir bool
	data  []byte
	src   string // file on disk, when data is nil and it is not a folder
}

func dir(name string, mode int64, owner int) file {
	return file{name: name, mode: mode, owner: owner, isDir: true}
}

func data(name string, b []byte, mode int64) file {
	return file{name: name, mode: mode, data: b}
}

func disk(name, src string, mode int64) file {
	return file{name: name, mode: mode, src: src}
}

// writeLayer writes files as a gzipped tar at path, every entry with the
// time mtime (so that the same inputs give the same digest).
func writeLayer(path string, files []file, mtime time.Time) (err error) {
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("ociimage: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("ociimage: %w", cerr)
		}
	}()
	zw, err := gzip.NewWriterLevel(out, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		if err := writeEntry(tw, f, mtime); err != nil {
			return fmt.Errorf("ociimage: layer entry %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("ociimage: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("ociimage: %w", err)
	}
	return nil
}

// writeEntry writes one file's header and bytes.
func writeEntry(tw *tar.Writer, f file, mtime time.Time) error {
	h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.owner, Gid: f.owner, ModTime: mtime, Format: tar.FormatPAX}
	if f.isDir {
		h.Typeflag, h.Name = tar.TypeDir, f.name+"/"
		return tw.WriteHeader(h)
	}
	h.Typeflag = tar.TypeReg
	if f.data != nil || f.src == "" {
		h.Size = int64(len(f.data))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(f.data)
		return err
	}
	in, err := os.Open(f.src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	h.Size = st.Size()
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	n, err := io.Copy(tw, in)
	if err == nil && n != h.Size {
		err = fmt.Errorf("%s changed size while read (%d of %d bytes)", f.src, n, h.Size)
	}
	return err
}
