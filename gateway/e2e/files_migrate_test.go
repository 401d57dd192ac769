package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"toxgate/gateway/harness"
	"toxgate/internal/s3test"
)

// `toxgate files migrate` moves a stopped gateway's files dir → s3 → dir:
// after each move the restarted gateway (with files.backend set to the
// target) serves every file with its hash, and the source holds nothing.
func TestFilesMigrateDirS3Dir(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	f := newFileFixture(t, harness.WithEnv(append(srv.Env(bucket, "mig/"), "TOXGATE_FILES_BACKEND=dir")...))
	g := f.g
	datas := map[string][]byte{}
	for i, size := range []int{7<<20 + 9, 1000} {
		d := testBytes(size, uint64(30+i))
		code, out := uploadAction(t, g, f.editor, "resource_create", map[string]string{"package_id": f.public}, "m.csv", d)
		if code != 200 {
			t.Fatalf("upload: %d %v", code, out)
		}
		datas[out["result"].(map[string]any)["id"].(string)] = d
	}
	filesDir := filepath.Join(g.DataDir, "files")
	objects := func() int {
		n := 0
		for o := range srv.Client(t).ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: "mig/", Recursive: true}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			n++
		}
		return n
	}
	bins := harness.Build(t)
	for _, to := range []string{"s3", "dir"} {
		if code := g.Stop(); code != 0 {
			t.Fatalf("stop: %d", code)
		}
		cmd := exec.Command(bins.Gateway, "files", "migrate", "--to", to)
		cmd.Env = g.Env
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "2 files moved to "+to) {
			t.Fatalf("files migrate --to %s: %v\n%s", to, err, out)
		}
		g.Env = append(g.Env, "TOXGATE_FILES_BACKEND="+to)
		g.Relaunch()
		for rid, want := range datas {
			if got := downloadIs(t, g, f.editor, rid); !bytes.Equal(got, want) {
				t.Fatalf("after migrating to %s: resource %s serves other bytes", to, rid)
			}
		}
		entries, _ := os.ReadDir(filesDir)
		if n := objects(); to == "s3" && (len(entries) != 0 || n != 2) || to == "dir" && (len(entries) != 2 || n != 0) {
			t.Fatalf("after migrating to %s: %d files in the directory, %d objects", to, len(entries), n)
		}
	}
}
