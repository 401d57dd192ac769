// Package s3test starts a real S3-compatible server for tests: Versity's
// versitygw with its posix backend, on a loopback port, keeping its
// objects in a temporary directory. The program is built from the Go module
// proxy by `make s3-server` (also run by `make deps` and `make ci-deps`)
// into bin/tools; without it a test skips, and under CI fails
// (internal/testenv).
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"toxgate/internal/testenv"
)

// Server is a running versitygw.
type Server struct {
	// Endpoint is its URL (http://127.0.0.1:port).
	Endpoint string
	// AccessKey and SecretKey are its root credentials.
	AccessKey, SecretKey string
	// Dir holds its buckets (a bucket is a directory, an object a file).
	Dir string
	// Cmd is the server process.
	Cmd *exec.Cmd
}

// startTimeout bounds the wait for the server to answer.
const startTimeout = 60 * time.Second

// Start runs a server for the test; it stops when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := testenv.RequireTool(tb, testenv.S3Server)
	dir := tb.TempDir()
	root := filepath.Join(dir, "buckets")
	if err := os.MkdirAll(root, 0o700); err != nil {
		tb.Fatal(err)
	}
	addr := freeAddr(tb)
	s := &Server{Endpoint: "http://" + addr, AccessKey: "toxgate-test", SecretKey: randomHex(16), Dir: root}
	cmd := exec.Command(bin, "--access", s.AccessKey, "--secret", s.SecretKey, "--port", addr, "--quiet",
		"posix", "--sidecar", filepath.Join(dir, "meta"), root)
	if err := os.MkdirAll(filepath.Join(dir, "meta"), 0o700); err != nil {
		tb.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "versitygw.log"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		tb.Fatalf("s3test: start versitygw: %v", err)
	}
	s.Cmd = cmd
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		_ = logf.Close()
	})
	c := s.Client(tb)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		_, err := c.ListBuckets(ctx)
		if err == nil {
			break
		}
		select {
		case e := <-exited:
			log, _ := os.ReadFile(logf.Name())
			tb.Fatalf("s3test: versitygw exited (%v): %s", e, log)
		case <-ctx.Done():
			log, _ := os.ReadFile(logf.Name())
			tb.Fatalf("s3test: versitygw did not answer within %s (%v): %s", startTimeout, err, log)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return s
}

// Client is a minio client of the server.
func (s *Server) Client(tb testing.TB) *minio.Client {
	tb.Helper()
	c, err := minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// Bucket makes a new bucket and returns its name.
func (s *Server) Bucket(tb testing.TB) string {
	tb.Helper()
	name := "toxgate-" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Client(tb).MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		tb.Fatalf("s3test: make bucket: %v", err)
	}
	return name
}

// Env is the gateway's environment for the s3 backend on bucket.
func (s *Server) Env(bucket, prefix string) []string {
	return []string{"TOXGATE_FILES_BACKEND=s3", "TOXGATE_FILES_S3_BUCKET=" + bucket, "TOXGATE_FILES_S3_PREFIX=" + prefix,
		"TOXGATE_FILES_S3_ENDPOINT=" + s.Endpoint, "TOXGATE_FILES_S3_PATH_STYLE=true", "TOXGATE_FILES_S3_REGION=us-east-1",
		"TOXGATE_FILES_S3_ACCESS_KEY_ID=" + s.AccessKey, "TOXGATE_FILES_S3_SECRET_ACCESS_KEY=" + s.SecretKey,
		"TOXGATE_FILES_S3_PART_BYTES=" + fmt.Sprint(6<<20)}
}

func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
