package tusup

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// idLen is the length of an upload id: 32 lower-case hex digits.
const idLen = 32

// newID returns a fresh random upload id.
func newID() string {
	var b [idLen / 2]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ParseID returns the upload id s names: the id itself or the URL of the
// upload (…/uploads/<id>), as tus clients report it. ok is false for
// anything else.
func ParseID(s string) (id string, ok bool) {
	if len(s) > 2048 {
		return "", false
	}
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) != idLen {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return s, true
}
