package wasmrt

import (
	"log/slog"
	"time"

	"github.com/tetratelabs/wazero"

	"toxgate/sdk/abi"
)

// Options configure Load. The zero value is usable; see the defaults below.
type Options struct {
	// Cache is a compilation cache shared by all modules (in memory or on disk).
	Cache wazero.CompilationCache
	// Default fills the limits a manifest leaves at zero.
	Default abi.Limits
	// Max are the ceilings: a manifest asking for more is refused.
	Max abi.Limits
	// MaxOutputBytes caps one call's output (default 16 MiB).
	MaxOutputBytes int
	// LoadTimeout bounds the first instantiation and the manifest calls (default 10s).
	LoadTimeout time.Duration
	// CodeDir, if set, holds each module's code as compiled (named by its
	// SHA-256), read back when a parked module is called again; empty: the
	// code stays in memory.
	CodeDir string
	// Logger receives guest log lines and failures (default slog.Default()).
	Logger *slog.Logger
}

// Defaults used when Options leave a field at zero.
const (
	DefaultMemoryPages = 512 // 32 MiB
	// DefaultMaxMemoryPages is the most linear memory a module may ask for
	// (128 MiB): abi.DefaultMaxMemoryPages, the one default of
	// modules.max_memory_pages, the module host and this runtime.
	DefaultMaxMemoryPages = abi.DefaultMaxMemoryPages
	DefaultTimeout        = 10 * time.Second
	DefaultMaxInputBytes  = 1 << 20
	DefaultPoolSize       = 4
	DefaultMaxOutputBytes = 16 << 20
	// MaxLogLinesPerCall bounds guest log lines per call; the rest are counted and dropped.
	MaxLogLinesPerCall = 100
	// MaxLogLineBytes truncates a guest log line.
	MaxLogLineBytes = 4096
	// maxManifestBytes bounds the manifest a guest may return.
	maxManifestBytes = 1 << 20
)

func (o Options) withDefaults() Options {
	d := &o.Default
	if d.MemoryPages == 0 {
		d.MemoryPages = DefaultMemoryPages
	}
	if d.TimeoutMS == 0 {
		d.TimeoutMS = int(DefaultTimeout / time.Millisecond)
	}
	if d.MaxInputBytes == 0 {
		d.MaxInputBytes = DefaultMaxInputBytes
	}
	if d.PoolSize == 0 {
		d.PoolSize = DefaultPoolSize
	}
	m := &o.Max
	if m.MemoryPages == 0 {
		m.MemoryPages = max(d.MemoryPages, DefaultMaxMemoryPages)
	}
	if m.TimeoutMS == 0 {
		m.TimeoutMS = max(d.TimeoutMS, 60_000)
	}
	if m.MaxInputBytes == 0 {
		m.MaxInputBytes = max(d.MaxInputBytes, 16<<20)
	}
	if m.PoolSize == 0 {
		m.PoolSize = max(d.PoolSize, 64)
	}
	if o.MaxOutputBytes == 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.LoadTimeout == 0 {
		o.LoadTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// resolve fills the manifest's zero limits from the defaults and refuses values
// above the ceilings.
func (o Options) resolve(l abi.Limits) (abi.Limits, error) {
	if l.MemoryPages == 0 {
		l.MemoryPages = min(o.Default.MemoryPages, o.Max.MemoryPages)
	}
	if l.TimeoutMS == 0 {
		l.TimeoutMS = min(o.Default.TimeoutMS, o.Max.TimeoutMS)
	}
	if l.MaxInputBytes == 0 {
		l.MaxInputBytes = min(o.Default.MaxInputBytes, o.Max.MaxInputBytes)
	}
	if l.PoolSize == 0 {
		l.PoolSize = min(o.Default.PoolSize, o.Max.PoolSize)
	}
	switch {
	case l.MemoryPages > o.Max.MemoryPages:
		return l, refuse(nil, "manifest.limits.memory_pages: asks for %d pages, the host allows at most %d", l.MemoryPages, o.Max.MemoryPages)
	case l.TimeoutMS > o.Max.TimeoutMS:
		return l, refuse(nil, "manifest.limits.timeout_ms: asks for %d ms, the host allows at most %d", l.TimeoutMS, o.Max.TimeoutMS)
	case l.MaxInputBytes > o.Max.MaxInputBytes:
		return l, refuse(nil, "manifest.limits.max_input_bytes: asks for %d, the host allows at most %d", l.MaxInputBytes, o.Max.MaxInputBytes)
	case l.PoolSize > o.Max.PoolSize:
		return l, refuse(nil, "manifest.limits.pool_size: asks for %d, the host allows at most %d", l.PoolSize, o.Max.PoolSize)
	}
	return l, nil
}
