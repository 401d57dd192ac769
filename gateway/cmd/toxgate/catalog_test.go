package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogImportUsage checks the command's refusals: each names the
// problem and exits 2 (usage) or 1 (a source that does not answer).
func TestCatalogImportUsage(t *testing.T) {
	state := filepath.Join(t.TempDir(), "s.json")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"catalog"}, 2, "usage: toxgate"},
		{[]string{"catalog", "export"}, 2, "usage: toxgate"},
		{[]string{"catalog", "import"}, 2, "--from is required"},
		{[]string{"catalog", "import", "--from", "http://127.0.0.1:1", "--since", "last week"}, 2, "not an ISO 8601 date"},
		{[]string{"catalog", "import", "--from", "http://127.0.0.1:1", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"catalog", "import", "--from", "http://127.0.0.1:1", "--to", "http://127.0.0.1:1", "--token", ""}, 1, "sysadmin's API token"},
		{[]string{"catalog", "import", "--from", "ftp://x", "--to", "http://127.0.0.1:1", "--token", "t"}, 1, "not an http(s) URL"},
		{[]string{"catalog", "import", "--from", "http://127.0.0.1:1", "--to", "http://127.0.0.1:1", "--token", "t", "--state", state}, 1, "organization_list at http://127.0.0.1:1"},
	} {
		var out, errb bytes.Buffer
		t.Setenv("TOXGATE_TOKEN", "")
		code := run(append([]string{"-config", ""}, c.args...), &out, &errb)
		if code != c.code || !strings.Contains(out.String()+errb.String(), c.msg) {
			t.Errorf("%v: exit %d, want %d with %q; got %s%s", c.args, code, c.code, c.msg, out.String(), errb.String())
		}
	}
}
