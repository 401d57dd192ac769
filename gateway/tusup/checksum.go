package tusup

import (
	"context"
	"crypto/md5"  //nolint:gosec // tus names md5 as a checksum algorithm; integrity against accidents only
	"crypto/sha1" //nolint:gosec // tus requires sha1 support; integrity against accidents only
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"

	tusd "github.com/tus/tusd/v2/pkg/handler"
)

// ChecksumAlgorithms is the Tus-Checksum-Algorithm the server announces.
const ChecksumAlgorithms = "sha1,sha256,md5"

// statusChecksumMismatch is tus's 460 Checksum Mismatch.
const statusChecksumMismatch = 460

// checksum is a parsed Upload-Checksum header.
type checksum struct {
	algo   string
	digest []byte
}

func (c checksum) hash() hash.Hash {
	switch c.algo {
	case "sha1":
		return sha1.New() //nolint:gosec
	case "md5":
		return md5.New() //nolint:gosec
	}
	return sha256.New()
}

// parseChecksum parses an Upload-Checksum value: an algorithm of
// ChecksumAlgorithms, one space, the digest in base64 of that
// algorithm's length.
func parseChecksum(v string) (checksum, error) {
	algo, b64, ok := strings.Cut(v, " ")
	if !ok || len(v) > 256 {
		return checksum{}, errors.New("Upload-Checksum must be an algorithm and a base64 digest separated by a space")
	}
	c := checksum{algo: algo}
	want := 0
	switch algo {
	case "sha1":
		want = sha1.Size
	case "sha256":
		want = sha256.Size
	case "md5":
		want = md5.Size
	default:
		return checksum{}, fmt.Errorf("unsupported checksum algorithm %q (supported: %s)", algo, ChecksumAlgorithms)
	}
	d, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(d) != want {
		return checksum{}, fmt.Errorf("Upload-Checksum digest is not the base64 of a %s digest", algo)
	}
	c.digest = d
	return c, nil
}

type checksumKey struct{}

// checksumStore wraps the tusd data store so that a chunk sent with an
// Upload-Checksum is spooled to a temporary file while hashed, and written
// to the upload only when its digest matches (460 and nothing written
// otherwise). Chunks without the header go straight through.
type checksumStore struct {
	inner interface {
		tusd.DataStore
		tusd.TerminaterDataStore
	}
	spool string // directory of the temporary files
}

type checksumUpload struct {
	tusd.Upload
	s *checksumStore
}

func (s *checksumStore) NewUpload(ctx context.Context, info tusd.FileInfo) (tusd.Upload, error) {
	u, err := s.inner.NewUpload(ctx, info)
	if err != nil {
		return nil, err
	}
	return &checksumUpload{Upload: u, s: s}, nil
}

func (s *checksumStore) GetUpload(ctx context.Context, id string) (tusd.Upload, error) {
	u, err := s.inner.GetUpload(ctx, id)
	if err != nil {
		return nil, err
	}
	return &checksumUpload{Upload: u, s: s}, nil
}

func (s *checksumStore) AsTerminatableUpload(u tusd.Upload) tusd.TerminatableUpload {
	if cu, ok := u.(*checksumUpload); ok {
		u = cu.Upload
	}
	return s.inner.AsTerminatableUpload(u)
}

func (u *checksumUpload) WriteChunk(ctx context.Context, offset int64, src io.Reader) (int64, error) {
	c, ok := ctx.Value(checksumKey{}).(checksum)
	if !ok {
		return u.Upload.WriteChunk(ctx, offset, src)
	}
	f, err := os.CreateTemp(u.s.spool, "chunk-*")
	if err != nil {
		return 0, fmt.Errorf("tusup: spool a checksummed chunk: %w", err)
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
	h := c.hash()
	if _, err := io.Copy(io.MultiWriter(f, h), src); err != nil {
		return 0, err
	}
	if string(h.Sum(nil)) != string(c.digest) {
		return 0, tusd.NewError("ERR_CHECKSUM_MISMATCH", "the chunk's "+c.algo+" differs from Upload-Checksum; nothing of it was stored", statusChecksumMismatch)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return u.Upload.WriteChunk(ctx, offset, f)
}
