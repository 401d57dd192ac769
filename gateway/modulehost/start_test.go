package modulehost

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"toxgate/gateway/modulehost/modtest"
)

// A restart with the cache of the previous run restores each module from
// its snapshot, parked, without compiling it; its first call compiles it
// from the cache and answers. A snapshot of another build is not trusted:
// the module is loaded (compiled and checked) again.
func TestRestartRestoresModulesFromTheirSnapshots(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	modtest.Install(t, exampleDir, dir, "example-units")
	start := func() *Host {
		t.Helper()
		h, err := New(context.Background(), Config{ModulesDir: dir, CacheDir: cache}, quietLogger(), prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Ready(); err != nil {
			t.Fatal(err)
		}
		return h
	}
	parksOf := func(h *Host) int64 {
		e := h.reg.Load().modules["example-units"]
		if e == nil {
			t.Fatalf("example-units not loaded: %+v", h.Readiness())
		}
		st := e.mod.Stats()
		if !st.Parked {
			t.Fatal("example-units not parked after start")
		}
		return st.Parks
	}
	call := func(h *Host) {
		t.Helper()
		out, _, err := h.Invoke(context.Background(), "/example/units/convert", "ip:test", []byte(`{"value":2,"from":"g/L","to":"mg/L"}`))
		if err != nil || !strings.Contains(string(out), `"value":2000`) {
			t.Fatalf("call: %v %s", err, out)
		}
	}

	h := start() // compiled, checked, then parked
	if parksOf(h) != 1 {
		t.Fatal("a fresh start did not compile and park the module")
	}
	call(h)
	h.Close(context.Background())

	h = start() // restored: never compiled, so never parked
	if parksOf(h) != 0 {
		t.Fatal("a restart compiled the module instead of restoring it")
	}
	if got := h.Readiness(); got["example-units"] != StateReady {
		t.Fatalf("readiness after restart: %v", got)
	}
	call(h)
	h.Close(context.Background())

	snaps, _ := filepath.Glob(filepath.Join(cache, "toxgate-code", "*.json"))
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots, want 1", len(snaps))
	}
	b, _ := os.ReadFile(snaps[0])
	b = []byte(strings.Replace(string(b), `"host":"`, `"host":"another build `, 1))
	if err := os.WriteFile(snaps[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	h = start()
	defer h.Close(context.Background())
	if parksOf(h) != 1 {
		t.Fatal("a snapshot of another build was restored")
	}
	call(h)
}
