package identityhttp

import (
	"errors"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// ambiguousPaths are original paths of the bypass class: a proxy or the
// server behind it resolves them to a path the role table treats otherwise.
var ambiguousPaths = []string{
	"/api/../hERG/evaluate", "/api/%2e%2e/notebooks/lab", "/api/%2E%2E/notebooks/lab", "/api/.%2e/hERG/evaluate",
	"/api/%2e./x", "/dataset/./../notebooks", "/api%2f..%2fnotebooks", "/api%2F..%2Fnotebooks", "/api%5c..%5cnotebooks",
	"/api\\..\\notebooks", "/notebooks;x/lab", "/api/%252e%252e/notebooks", "/api/%00/../notebooks", "/a\x00b",
	"/a\tb", "/a b", "/a%20b", "/a%7fb", "/a#b", "notebooks/lab", "", "/a%zz", "/a%c3", "/.", "/..",
}

func TestNormalizePathRefusesAmbiguousPaths(t *testing.T) {
	for _, p := range ambiguousPaths {
		if n, err := NormalizePath(p); !errors.Is(err, ErrAmbiguousPath) {
			t.Errorf("NormalizePath(%q) = %q, %v; want ErrAmbiguousPath", p, n, err)
		}
	}
	for raw, want := range map[string]string{
		"/hERG/evaluate":           "/hERG/evaluate",
		"/hERG/evaluate?x=../..":   "/hERG/evaluate",
		"//notebooks//lab/":        "/notebooks/lab",
		"/%6eotebooks/lab":         "/notebooks/lab",
		"/%6Eotebooks/lab":         "/notebooks/lab",
		"/api/3/action/x":          "/api/3/action/x",
		"/":                        "/",
		"/dataset/caf%C3%A9":       "/dataset/café",
		"/a...b/.c/..d":            "/a...b/.c/..d",
		"/static/toxgate.css?v=1#": "/static/toxgate.css",
	} {
		if n, err := NormalizePath(raw); err != nil || n != want {
			t.Errorf("NormalizePath(%q) = %q, %v; want %q", raw, n, err, want)
		}
	}
}

// FuzzNormalizePath: a path NormalizePath accepts is in its own normal form,
// and the role decided for it is the role the table gives to the path a
// server resolves from the same request (fasthttp's normalization, the
// gateway's own, and a decoded, cleaned path as net/http serves it).
func FuzzNormalizePath(f *testing.F) {
	for _, p := range ambiguousPaths {
		f.Add(p)
	}
	for _, p := range []string{"/hERG/evaluate", "//notebooks//lab/", "/%6eotebooks", "/api/3/action/package_show?id=x", "/v2/models/x/infer"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		n, err := NormalizePath(raw)
		if err != nil {
			return
		}
		if m, err := NormalizePath(n); err != nil || m != n {
			t.Fatalf("NormalizePath(%q) = %q, which normalizes to %q, %v", raw, n, m, err)
		}
		if !strings.HasPrefix(n, "/") || strings.Contains(n, "//") || strings.ContainsAny(n, "\\;%") {
			t.Fatalf("NormalizePath(%q) = %q", raw, n)
		}
		p := raw
		if i := strings.IndexByte(p, '?'); i >= 0 {
			p = p[:i]
		}
		var u fasthttp.URI
		u.SetPath(p)
		dec, derr := url.PathUnescape(p)
		if derr != nil {
			t.Fatalf("NormalizePath(%q) accepted a path net/url cannot decode: %v", raw, derr)
		}
		for _, required := range []bool{false, true} {
			want := RoleForPath(n, required)
			for _, served := range []string{string(u.Path()), path.Clean(dec)} {
				if got := RoleForPath(served, required); got != want {
					t.Fatalf("NormalizePath(%q) = %q (role %q), but a server serves %q (role %q)", raw, n, want, served, got)
				}
			}
		}
	})
}
