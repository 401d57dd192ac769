package wasmrt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"toxgate/sdk/abi"
)

// snapshotFormat changes whenever what Load checks, or how it rewrites a
// module, changes: a snapshot of another format is not restored.
const snapshotFormat = 1

// Snapshot is what Restore needs to serve a module that Load checked before
// without compiling or running it: its manifest and limits, and where its
// code (as rewritten) waits. It is only valid for the same module bytes,
// the same build of the host and the same limits.
type Snapshot struct {
	Format     int             `json:"format"`
	Host       string          `json:"host"`
	SHA256     string          `json:"sha256"`
	Size       int             `json:"size"`
	CodeSHA256 string          `json:"code_sha256"`
	Fuel       bool            `json:"fuel"`
	Manifest   json.RawMessage `json:"manifest"`
	Limits     abi.Limits      `json:"limits"`
}

// hostFingerprint names the build of the host: a snapshot taken by another
// build (another Load, another rewriter, another wazero) is not restored.
var hostFingerprint = sync.OnceValue(func() string {
	h := sha256.New()
	fmt.Fprintf(h, "format=%d abi=%d\n", snapshotFormat, abi.Version)
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(h, "%s %s %s\n", bi.GoVersion, bi.Main.Path, bi.Main.Version)
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				fmt.Fprintf(h, "%s=%s\n", s.Key, s.Value)
			}
		}
		for _, d := range bi.Deps {
			fmt.Fprintf(h, "%s %s\n", d.Path, d.Version)
		}
	}
	// A rebuild of a modified tree has the same build settings: the
	// executable's size and time tell it apart.
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			fmt.Fprintf(h, "exe %d %d\n", st.Size(), st.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil))
})

// Snapshot returns the module's snapshot; false when its code is kept in
// memory (Options.CodeDir empty), where there is nothing to restore from.
func (m *Module) Snapshot() (Snapshot, bool) {
	if m.codeFile == "" {
		return Snapshot{}, false
	}
	man, err := json.Marshal(m.manifest)
	if err != nil {
		return Snapshot{}, false
	}
	return Snapshot{Format: snapshotFormat, Host: hostFingerprint(), SHA256: m.sha, Size: m.size,
		CodeSHA256: hex.EncodeToString(m.codeSHA[:]), Fuel: m.fuel, Manifest: man, Limits: m.limits}, true
}

// ErrStaleSnapshot is returned by Restore for a snapshot that does not fit
// this host, these options or these module bytes: load the module instead.
var ErrStaleSnapshot = errors.New("wasmrt: snapshot does not fit")

// Restore makes a parked module from a snapshot of the module whose bytes
// hash to sha, without compiling it: its first call compiles its code from
// opts.CodeDir (and the compilation cache) as for any parked module. It
// fails with ErrStaleSnapshot when the snapshot was taken by another build
// of the host, for other bytes or other limits, or its code is gone.
func Restore(s Snapshot, sha string, opts Options) (*Module, error) {
	opts = opts.withDefaults()
	if s.Format != snapshotFormat || s.Host != hostFingerprint() || s.SHA256 != sha || opts.CodeDir == "" {
		return nil, ErrStaleSnapshot
	}
	codeSHA, err := hex.DecodeString(s.CodeSHA256)
	if err != nil || len(codeSHA) != sha256.Size {
		return nil, ErrStaleSnapshot
	}
	m := &Module{opts: opts, sha: sha, size: s.Size, fuel: s.Fuel}
	copy(m.codeSHA[:], codeSHA)
	m.codeFile = filepath.Join(opts.CodeDir, s.CodeSHA256+".wasm")
	if st, err := os.Stat(m.codeFile); err != nil || !st.Mode().IsRegular() {
		return nil, ErrStaleSnapshot
	}
	dec := json.NewDecoder(strings.NewReader(string(s.Manifest)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m.manifest); err != nil || m.manifest.Validate() != nil {
		return nil, ErrStaleSnapshot
	}
	if m.limits, err = opts.resolve(m.manifest.Limits); err != nil || m.limits != s.Limits {
		return nil, ErrStaleSnapshot
	}
	m.log = opts.Logger.With("module", m.manifest.Name, "version", m.manifest.Version, "sha256", m.sha[:12])
	m.pool = newPool(m.limits.PoolSize)
	m.lastUsed = time.Now()
	return m, nil
}
