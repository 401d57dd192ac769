package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// TestCatalogGenerate runs "toxgate catalog generate" on a fresh embedded
// store with the real catalog plugin program: it writes the datasets, a
// second run with the same size keeps them, and bad sizes are refused.
func TestCatalogGenerate(t *testing.T) {
	bin := harness.Build(t)
	t.Setenv("TOXGATE_MONGODB_DATA_DIR", filepath.Join(t.TempDir(), "store"))
	t.Setenv("TOXGATE_PLUGINS_PROGRAMS", "catalog="+filepath.Join(bin.Dir, "toxgate-catalog"))
	gen := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"-config", "", "catalog", "generate"}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := gen("--datasets", "40", "--quiet"); code != 0 || !strings.Contains(out, "organizations: 3 created; datasets: 40 created") {
		t.Fatalf("first run: exit %d: %s", code, out)
	}
	if code, out := gen("--datasets", "40", "--quiet"); code != 0 || !strings.Contains(out, "datasets: 0 created (0 private), 40 already there") {
		t.Fatalf("second run: exit %d: %s", code, out)
	}
	for _, bad := range [][]string{{}, {"--datasets", "0"}, {"--datasets", "-3"}, {"--datasets", "99999999999"}, {"--datasets", "3", "extra"}} {
		if code, out := gen(bad...); code != 2 || !strings.Contains(out, "--datasets must be between") {
			t.Errorf("%v: exit %d: %s", bad, code, out)
		}
	}
}
