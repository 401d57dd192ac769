package web

import (
	"net/url"
	"testing"
)

// nextSeeds are next parameters of the open-redirect class: a browser
// reads each of the refused ones as another site (or a script).
var nextSeeds = []string{
	"/\t/evil.example", "/%09/evil.example", "//evil.example", "/\\evil.example", "\\\\evil.example",
	"/\\/evil.example", "/%2F/evil.example", "/%5C/evil.example", "https://evil.example", "javascript:alert(1)",
	" /x", "/x\r\nSet-Cookie: a=b", "/\x00/evil.example", "/\n/evil.example", "http:/evil.example",
	"/dataset/a?x=1#f", "/models/hERG", "/", "", "evil.example", "///evil.example", "/\u3000/evil.example",
}

// The finding's redirect and its relatives fall back; local paths stay.
func TestSafeNext(t *testing.T) {
	for _, bad := range []string{"/\t/evil.example", "//evil.example", "/\\evil.example", "/%2F/evil.example",
		"/%5c/evil.example", "https://evil.example", "javascript:alert(1)", "/x\r\nSet-Cookie: a=b", " /x",
		"/\u3000/evil.example", "///evil.example", "evil.example"} {
		if got := safeNext(bad); got != afterLogin {
			t.Errorf("safeNext(%q) = %q, want %q", bad, got, afterLogin)
		}
	}
	for _, ok := range []string{"/", "/dataset/a?x=1#f", "/models/hERG", "/dataset?q=a%20b"} {
		if got := safeNext(ok); got != ok {
			t.Errorf("safeNext(%q) = %q, want it kept", ok, got)
		}
	}
}

// FuzzSafeNext: the target is "/" or a single "/" followed by neither "/"
// nor "\", without control characters or white space, and resolves against
// the site's URL to the same origin.
func FuzzSafeNext(f *testing.F) {
	for _, s := range nextSeeds {
		f.Add(s)
	}
	base, _ := url.Parse("https://tox.example.org/login")
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if got == "" || got[0] != '/' {
			t.Fatalf("safeNext(%q) = %q: not a path", next, got)
		}
		if len(got) > 1 && (got[1] == '/' || got[1] == '\\') {
			t.Fatalf("safeNext(%q) = %q: another host", next, got)
		}
		for _, c := range []byte(got) {
			if c <= ' ' || c >= 0x7f || c == '\\' {
				t.Fatalf("safeNext(%q) = %q: byte %#x", next, got, c)
			}
		}
		u, err := base.Parse(got)
		if err != nil || u.Scheme != base.Scheme || u.Host != base.Host {
			t.Fatalf("safeNext(%q) = %q resolves to %v (%v)", next, got, u, err)
		}
	})
}
