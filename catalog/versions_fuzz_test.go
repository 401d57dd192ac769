package catalog

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"toxgate/catalog/ckan"
)

// FuzzVersionArgs feeds hostile version names and dataset_version_diff
// arguments to their parsers: they answer a value or a CKAN error, never
// panic, and what they accept keeps their bounds.
func FuzzVersionArgs(f *testing.F) {
	for _, s := range []string{"v1", "", " v1", "v1\n", strings.Repeat("x", 101), "12345678-1234-1234-1234-123456789abc", "\xff", "ünïcode 1.0", "a\x00b"} {
		f.Add(s, `{"limit": 5}`)
	}
	f.Add("v2", `{"limit": -1, "diff_type": "html"}`)
	f.Add("v2", `{"limit": "1e99", "to": 7}`)
	f.Add("v2", `{"to": ["v1"], "diff_type": "nope"}`)
	f.Fuzz(func(t *testing.T, name, extra string) {
		if got, msg := ParseVersionName(name); msg == "" {
			if got != name || got == "" || len(got) > MaxVersionNameBytes || !utf8.ValidString(got) || strings.TrimSpace(got) != got || looksLikeID(got) {
				t.Fatalf("accepted %q", name)
			}
		}
		data := map[string]any{}
		_ = json.Unmarshal([]byte(extra), &data)
		data["dataset"], data["from"] = "screen", name
		a, err := ParseDiffArgs(data)
		if err != nil {
			if ckan.AsError(err).Status != 409 {
				t.Fatalf("%v: %v", data, err)
			}
			return
		}
		if a.Limit < 0 || a.Limit > 1000 || a.From != name || (a.DiffType != "unified" && a.DiffType != "context" && a.DiffType != "html") {
			t.Fatalf("accepted %+v from %v", a, data)
		}
	})
}
