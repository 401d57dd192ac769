package filestore

import (
	"bytes"
	"context"
	"testing"

	"toxgate/internal/s3test"
)

// Files move dir → s3 → dir → mongodb → dir with their bytes and hashes
// unchanged; each source is emptied only after the switch; a copy cut
// short by an earlier run is replaced; a second run moves nothing.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	dir := t.TempDir()
	s := openStore(t, Config{Backend: BackendDir, Dir: dir, S3: s3Config(t, srv, "m/")})
	datas := [][]byte{randomBytes(3*ChunkSize+17, 21), randomBytes(10, 22), nil, randomBytes(7<<20, 23)}
	var infos []Info
	for i, d := range datas {
		infos = append(infos, write(t, s, "f"+string(rune('a'+i))+".bin", d))
	}
	check := func(backend string) {
		t.Helper()
		for i, want := range infos {
			got, err := s.Stat(ctx, want.ID)
			if err != nil || got.SHA256 != want.SHA256 || got.Size != want.Size || got.Backend != storedBackend(backend) {
				t.Fatalf("after migrating to %s: %+v, %v", backend, got, err)
			}
			if b := read(t, s, got, 0, -1); !bytes.Equal(b, datas[i]) {
				t.Fatalf("after migrating to %s: bytes of file %d differ", backend, i)
			}
		}
		for name, b := range s.backends {
			ids, err := b.IDs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// An empty file has no segments: the target holds all files,
			// or all but that one with mongodb; the others hold none.
			if name == storedBackend(backend) && len(ids) != len(infos) && !(name == "" && len(ids) == len(infos)-1) ||
				name != storedBackend(backend) && len(ids) != 0 {
				t.Fatalf("after migrating to %s: backend %q holds %v", backend, name, ids)
			}
		}
	}
	// A copy to s3 cut short: an incomplete multipart upload of file 0.
	p, err := s.backends[BackendS3].Create(ctx, infos[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(randomBytes(6<<20+1, 24)); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{BackendS3, BackendDir, BackendMongoDB, BackendDir} {
		st, err := s.Migrate(ctx, to, nil)
		if err != nil || st.Moved != len(infos) {
			t.Fatalf("migrate to %s: %+v, %v", to, st, err)
		}
		check(to)
		if st, err := s.Migrate(ctx, to, nil); err != nil || st.Moved != 0 || st.Already != len(infos) {
			t.Fatalf("second migration to %s: %+v, %v", to, st, err)
		}
	}
	_ = p.Abort(ctx)
}
