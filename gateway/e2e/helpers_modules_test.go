package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"toxgate/gateway/harness"
)

// copyModules copies the named modules that `make build` made into dir.
// A missing module fails the test: `make test` builds every module first,
// so a skip would only hide a broken build.
func copyModules(t testing.TB, dir string, names ...string) {
	t.Helper()
	bins := harness.Build(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(bins.Modules, n+".wasm"))
		if err != nil {
			t.Fatalf("%s.wasm not built (run make build): %v", n, err)
		}
		if err := os.WriteFile(filepath.Join(dir, n+".wasm"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// modulesDir returns a new directory holding copies of the named modules.
func modulesDir(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	copyModules(t, dir, names...)
	return dir
}
