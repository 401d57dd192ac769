package store

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// envProbe makes the test binary act as a client of the store (see
// TestMain): it tries the URI and the data directory and prints what
// happened.
const envProbe = "TOXGATE_STORE_PROBE"

func TestMain(m *testing.M) {
	if spec := os.Getenv(envProbe); spec != "" {
		uri, dir, _ := strings.Cut(spec, "|")
		probe(uri, dir)
		return
	}
	os.Exit(m.Run())
}

// probe reports whether this process can reach the store at uri and read
// the files under dir.
func probe(uri, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(2 * time.Second))
	if err == nil {
		err = c.Ping(ctx, nil)
	}
	if err == nil {
		_, err = c.Database("toxgate").ListCollectionNames(ctx, map[string]any{})
	}
	fmt.Printf("connect: %v\n", err)
	_, err = os.ReadDir(dir)
	fmt.Printf("readdir: %v\n", err)
}

// The embedded store listens only on a Unix socket in a 0700 directory and
// keeps its files in a 0700 directory: a process of another OS user
// (nobody) can neither connect to it nor read its files, while this
// process can.
func TestEmbeddedStoreIsPrivateToItsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(ctx, Options{DataDir: dir, Database: "toxgate", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if !strings.HasPrefix(s.URI(), "mongodb://%2F") {
		t.Fatalf("embedded store URI %q is not a Unix socket", s.URI())
	}
	if _, err := s.DB().Collection("users").InsertOne(ctx, map[string]any{"_id": "u", "password_hash": "secret"}); err != nil {
		t.Fatal(err)
	}
	// The test binary, where another user may run it.
	bin, err := os.MkdirTemp("", "store-probe-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(bin)
	_ = os.Chmod(bin, 0o755)
	self, _ := os.Executable()
	copyFile(t, self, filepath.Join(bin, "probe"))

	run := func(uid uint32) string {
		cmd := exec.Command(filepath.Join(bin, "probe"))
		cmd.Env = []string{envProbe + "=" + s.URI() + "|" + dir}
		cmd.Dir = bin
		if uid != 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("probe as uid %d: %v\n%s", uid, err, out)
		}
		return string(out)
	}
	if out := run(0); !strings.Contains(out, "connect: <nil>") || !strings.Contains(out, "readdir: <nil>") {
		t.Fatalf("the store's own user cannot reach it:\n%s", out)
	}
	out := run(65534) // nobody
	if !strings.Contains(out, "connect: ") || strings.Contains(out, "connect: <nil>") || !strings.Contains(out, "permission denied") ||
		!strings.Contains(out, "readdir: open") {
		t.Fatalf("another user reached the store:\n%s", out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
}
