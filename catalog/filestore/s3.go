package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// DefaultPartBytes is the part size of a multipart upload to S3 (the memory
// one upload holds) when files.s3.part_bytes is 0.
const DefaultPartBytes = 16 << 20

// DefaultPresignTTL is how long a presigned download URL lives when
// files.s3.presign_ttl is 0.
const DefaultPresignTTL = 5 * time.Minute

// s3Backend keeps each file's bytes as the object "<prefix><id>" of one
// bucket. An upload is a multipart upload of PartBytes parts streamed from
// the writer; the object exists only once the upload is completed, so a
// half-written file is never visible, and an upload cut short (a crash) is
// an incomplete multipart upload that the sweep aborts.
type s3Backend struct {
	c      *minio.Client
	cfg    S3Config
	bucket string
}

// NewS3 returns the backend on cfg's bucket, which must exist.
func NewS3(ctx context.Context, cfg S3Config) (Backend, error) {
	endpoint, secure := "s3.amazonaws.com", true
	if e := cfg.Endpoint; e != "" {
		if u, err := url.Parse(e); err == nil && u.Host != "" {
			endpoint, secure = u.Host, u.Scheme != "http"
		} else {
			endpoint = e
		}
	}
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{}, &credentials.FileAWSCredentials{}, &credentials.IAM{}})
	if cfg.AccessKeyID != "" {
		creds = credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, "")
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	c, err := minio.New(endpoint, &minio.Options{Creds: creds, Secure: secure, Region: region, BucketLookup: lookup})
	if err != nil {
		return nil, fmt.Errorf("filestore: s3 client: %w", err)
	}
	if cfg.PartBytes <= 0 {
		cfg.PartBytes = DefaultPartBytes
	}
	if cfg.PresignTTL <= 0 {
		cfg.PresignTTL = DefaultPresignTTL
	}
	return &s3Backend{c: c, cfg: cfg, bucket: cfg.Bucket}, nil
}

func (b *s3Backend) Name() string { return BackendS3 }

func (b *s3Backend) key(id string) string { return b.cfg.Prefix + id }

func (b *s3Backend) Create(ctx context.Context, id string) (Part, error) {
	pr, pw := io.Pipe()
	p := &s3Part{b: b, id: id, pw: pw, done: make(chan error, 1)}
	// The upload outlives a cancelled request only long enough to be
	// aborted (the pipe's error ends it).
	uctx := context.WithoutCancel(ctx)
	go func() {
		_, err := b.c.PutObject(uctx, b.bucket, b.key(id), pr, -1, minio.PutObjectOptions{
			PartSize: uint64(b.cfg.PartBytes), ContentType: "application/octet-stream"})
		_ = pr.CloseWithError(errPartDone)
		p.done <- err
	}()
	return p, nil
}

// errPartDone ends a pipe whose upload has returned.
var errPartDone = errors.New("filestore: s3 upload ended")

// errPartAborted ends the pipe of an aborted upload.
var errPartAborted = errors.New("filestore: upload aborted")

// s3Part feeds one multipart upload through a pipe.
type s3Part struct {
	b    *s3Backend
	id   string
	pw   *io.PipeWriter
	done chan error
	err  error
	end  bool
}

func (p *s3Part) Write(q []byte) (int, error) {
	n, err := p.pw.Write(q)
	if err != nil {
		return n, fmt.Errorf("filestore: s3 upload %s: %w", p.id, p.wait(err))
	}
	return n, nil
}

// wait returns the upload's own error once it ended (or fallback).
func (p *s3Part) wait(fallback error) error {
	if !p.end {
		p.err, p.end = <-p.done, true
	}
	if p.err != nil {
		return p.err
	}
	return fallback
}

// Commit ends the body and waits for the completed multipart upload: only
// then do the bytes exist, durably, under the object's key.
func (p *s3Part) Commit(context.Context) error {
	_ = p.pw.Close()
	if err := p.wait(nil); err != nil {
		return fmt.Errorf("filestore: s3 upload %s: %w", p.id, err)
	}
	return nil
}

// Abort fails the upload (the client aborts its multipart upload) and
// removes whatever exists under the key.
func (p *s3Part) Abort(ctx context.Context) error {
	_ = p.pw.CloseWithError(errPartAborted)
	_ = p.wait(nil)
	return p.b.Delete(ctx, p.id)
}

func (b *s3Backend) Delete(ctx context.Context, id string) error {
	if err := b.c.RemoveIncompleteUpload(ctx, b.bucket, b.key(id)); err != nil && !isNoSuch(err) {
		return fmt.Errorf("filestore: s3 abort upload %s: %w", id, err)
	}
	if err := b.c.RemoveObject(ctx, b.bucket, b.key(id), minio.RemoveObjectOptions{}); err != nil && !isNoSuch(err) {
		return fmt.Errorf("filestore: s3 remove %s: %w", id, err)
	}
	return nil
}

// isNoSuch reports an S3 "no such key/upload" answer.
func isNoSuch(err error) bool {
	code := minio.ToErrorResponse(err).Code
	return code == "NoSuchKey" || code == "NoSuchUpload" || code == "NotFound"
}

func (b *s3Backend) IDs(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	var ids []string
	add := func(key string) {
		if id, ok := strings.CutPrefix(key, b.cfg.Prefix); ok && validID(id) && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for o := range b.c.ListObjects(ctx, b.bucket, minio.ListObjectsOptions{Prefix: b.cfg.Prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("filestore: s3 list: %w", o.Err)
		}
		add(o.Key)
	}
	for u := range b.c.ListIncompleteUploads(ctx, b.bucket, b.cfg.Prefix, true) {
		if u.Err != nil {
			return nil, fmt.Errorf("filestore: s3 list uploads: %w", u.Err)
		}
		add(u.Key)
	}
	return ids, nil
}

func (b *s3Backend) Open(ctx context.Context, info Info, offset, length int64) (io.ReadCloser, error) {
	opts := minio.GetObjectOptions{}
	if err := opts.SetRange(offset, offset+length-1); err != nil {
		return nil, fmt.Errorf("filestore: s3 range of %s: %w", info.ID, err)
	}
	obj, err := b.c.GetObject(ctx, b.bucket, b.key(info.ID), opts)
	if err != nil {
		return nil, fmt.Errorf("filestore: s3 get %s: %w", info.ID, err)
	}
	// GetObject is lazy: Stat sends the GET now, so that a missing or
	// short object is an error before the first byte is answered, not a
	// truncated 200.
	st, err := obj.Stat()
	if err != nil {
		_ = obj.Close()
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil, fmt.Errorf("%w: s3 object of %s", ErrBytesMissing, info.ID)
		}
		return nil, fmt.Errorf("filestore: s3 get %s: %w", info.ID, err)
	}
	if st.Size != length { // the answer to the range: its length
		_ = obj.Close()
		return nil, fmt.Errorf("%w: s3 object of %s answers %d bytes for a range of %d", ErrBytesMissing, info.ID, st.Size, length)
	}
	return obj, nil
}

// PresignGet signs a GET of the object for PresignTTL that answers with
// the download's name and media type.
func (b *s3Backend) PresignGet(ctx context.Context, info Info, filename string) (string, error) {
	q := url.Values{}
	q.Set("response-content-disposition", `attachment; filename="`+strings.ReplaceAll(filename, `"`, "")+`"`)
	if info.Mimetype != "" {
		q.Set("response-content-type", info.Mimetype)
	}
	u, err := b.c.PresignedGetObject(ctx, b.bucket, b.key(info.ID), b.cfg.PresignTTL, q)
	if err != nil {
		return "", fmt.Errorf("filestore: presign %s: %w", info.ID, err)
	}
	return u.String(), nil
}
