package identityhttp

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"
)

// MaxCheckPathBytes bounds a path the external-authorization check reads.
const MaxCheckPathBytes = 8 << 10

// ErrAmbiguousPath is returned by NormalizePath for a path that servers
// behind a proxy could read as another path than the role table does.
var ErrAmbiguousPath = errors.New("ambiguous request path")

// NormalizePath is the one form of a request path (as sent: percent-encoded,
// with or without a query) on which a role is decided. It decodes percent
// escapes once and merges repeated slashes. It refuses, with an error
// wrapping ErrAmbiguousPath, what proxies and servers resolve differently:
// dot segments ("." or "..", also as %2e), encoded slashes and backslashes
// (%2f, %5c), backslashes, ";" (path parameters), escapes that are
// malformed or decode to "%" (double encoding), control characters, white
// space, NUL, invalid UTF-8, a fragment, a path that does not start with
// "/" and one longer than MaxCheckPathBytes.
func NormalizePath(raw string) (string, error) {
	if len(raw) > MaxCheckPathBytes {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrAmbiguousPath, MaxCheckPathBytes)
	}
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	if !strings.HasPrefix(raw, "/") {
		return "", fmt.Errorf("%w: does not start with /", ErrAmbiguousPath)
	}
	lower := strings.ToLower(raw)
	if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
		return "", fmt.Errorf("%w: encoded slash", ErrAmbiguousPath)
	}
	dec, err := url.PathUnescape(raw)
	if err != nil {
		return "", fmt.Errorf("%w: bad percent escape", ErrAmbiguousPath)
	}
	if !utf8.ValidString(dec) {
		return "", fmt.Errorf("%w: not UTF-8", ErrAmbiguousPath)
	}
	for _, r := range dec {
		switch {
		case r <= ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return "", fmt.Errorf("%w: control character or white space", ErrAmbiguousPath)
		case r == '\\' || r == ';' || r == '%' || r == '#':
			return "", fmt.Errorf("%w: %q", ErrAmbiguousPath, r)
		}
	}
	for seg := range strings.SplitSeq(dec, "/") {
		if seg == "." || seg == ".." {
			return "", fmt.Errorf("%w: dot segment", ErrAmbiguousPath)
		}
	}
	return path.Clean(dec), nil
}
