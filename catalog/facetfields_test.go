package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestPlainStringListAsJSON checks the fast reading of facet.field against
// json.Unmarshal.
func TestPlainStringListAsJSON(t *testing.T) {
	for _, s := range []string{`["tags","organization"]`, ` [ "a" , "b" ] `, `[]`, `[ ]`, `[""]`, `["a",]`, `["a" "b"]`, `["a\"b"]`, `["ü"]`,
		`["a\nb"]`, "[\"a\"]\v", `[1]`, `"tags"`, `tags`, `["a"],`, `[,"a"]`, "\t[\"x\"]\n", `["a","b"`, `["a"]]`} {
		got, ok := plainStringList(s)
		var want []string
		err := json.Unmarshal([]byte(s), &want)
		if ok && (err != nil || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want)) {
			t.Errorf("%q: %q, json: %q %v", s, got, want, err)
		}
		if want != nil && err == nil && !ok && !strings.ContainsAny(s, "\\ü") { // escapes and non-ASCII go to json.Unmarshal
			t.Errorf("%q: not read (json: %q)", s, want)
		}
	}
}
