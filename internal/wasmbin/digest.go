package wasmbin

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
)

//go:embed *.go
var sources embed.FS

// SourceDigest returns the hex SHA-256 of this package's source files, so
// that caches of modules rewritten with it (internal/reloop's) can tell when
// the decoder changed.
func SourceDigest() string {
	h := sha256.New()
	entries, _ := sources.ReadDir(".")
	for _, e := range entries {
		b, _ := sources.ReadFile(e.Name())
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}
