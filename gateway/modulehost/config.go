package modulehost

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/modulehost/wasmrt"
)

// Config configures a Host. Zero values take the defaults noted on each field.
type Config struct {
	// ModulesDir holds the *.wasm modules loaded at start (and watched when Watch
	// is set). Uploaded modules are written there. Empty: no directory; uploads
	// are kept in memory only.
	ModulesDir string
	// CacheDir holds wazero's compilation cache, so restarts skip compiling.
	// Empty: an in-memory cache. The directory holds native code: protect it.
	CacheDir string
	// PoolSize is the number of instances per module when its manifest does not
	// ask (default 4); MaxPoolSize is the most a manifest may ask (default 64).
	PoolSize, MaxPoolSize int
	// Timeout is the per-call deadline when the manifest does not ask (default
	// 10s); MaxTimeout the most a manifest may ask (default 60s).
	Timeout, MaxTimeout time.Duration
	// MemoryPages caps a module's linear memory, in 64 KiB pages, when its manifest
	// does not ask (default DefaultMemoryPages); MaxMemoryPages is the most a
	// manifest may ask (default DefaultMaxMemoryPages).
	MemoryPages, MaxMemoryPages uint32
	// MaxInputBytes caps a request body when the manifest does not ask (default
	// 1 MiB); a manifest may ask up to 16 MiB. The HTTP server's own body limit
	// must not be lower.
	MaxInputBytes int
	// MaxOutputBytes caps one call's output (default 16 MiB).
	MaxOutputBytes int
	// MaxModuleBytes caps an uploaded module (default 64 MiB).
	MaxModuleBytes int
	// IdleRelease is how long a module may go without a call before it closes
	// its instances and, when CacheDir is set, drops its compiled code; its
	// next call loads the code again from CacheDir and starts an instance.
	// Modules also start released, right after their checks at load. Without
	// a CacheDir only idle instances beyond one are closed. Default 2m;
	// negative: never (every module keeps its code and instances).
	IdleRelease time.Duration
	// RunSlots is how many calls run at once when callers contend (0: one
	// per CPU). A caller alone may use every slot; a caller below its fair
	// share (RunSlots × its weight / the weights of every active caller)
	// starts a call at once even when every slot is taken. See the README.
	RunSlots int
	// QueueSize bounds the calls waiting for an instance of one module
	// (default 512); CallerQueue bounds those of one caller (default 128).
	// Past either bound, or after waiting QueueTimeout (default: the
	// module's own call timeout), a call is refused with 429 and
	// Retry-After. A caller with nothing running or waiting on a module
	// always gets a place in its queue.
	QueueSize, CallerQueue int
	QueueTimeout           time.Duration
	// CallerRunning is a hard cap on the calls one caller runs at once
	// across every module (0, the default: none; a caller alone may use
	// every slot); its further calls wait (CallerQueue, QueueTimeout).
	CallerRunning int
	// BatchSliceItems and BatchSliceBytes bound the slices a batch request
	// is cut into on routes that declare a batch member (defaults 50 items,
	// 64 KiB) when it would otherwise take a module's last free instance or
	// others wait for one: each slice waits for an instance in the caller's
	// queue like a call of its own, so a batch cannot hold an instance that
	// someone waits for for long. With instances to spare, a batch runs in
	// pieces as large as fit in half the module's deadline.
	BatchSliceItems, BatchSliceBytes int
	// BackgroundShare is the fraction of a module's instances, and of the
	// run slots, that background callers (BackgroundPrefix: scoring jobs)
	// may hold at once, at least one (default 0.5); they run only on free
	// slots and yield them to interactive callers first.
	BackgroundShare float64
	// ResponseCacheBytes bounds the response cache (0: no cache): recent
	// answers keyed by the module's SHA-256, the route and the canonical
	// input, least recently used out first. On a batch route each list
	// item is an entry of its own and a list's duplicates are computed
	// once. Errors are not cached.
	ResponseCacheBytes int64
	// LoadWorkers is how many module files load at once (0: one per CPU).
	LoadWorkers int
	// ServerVersion is the version GET /v2 reports.
	ServerVersion string
	// Watch reloads modules when files in ModulesDir change.
	Watch bool
	// ReservedPrefixes are path prefixes no module may claim (default: the
	// gateway's own routes, see DefaultReservedPrefixes).
	ReservedPrefixes []string
}

// Memory defaults, in 64 KiB pages.
const (
	// DefaultMemoryPages is a module's memory cap when its manifest does not
	// ask (the runtime's, 32 MiB).
	DefaultMemoryPages = wasmrt.DefaultMemoryPages
	// DefaultMaxMemoryPages is the most a manifest may ask (the gateway
	// configuration's modules.max_memory_pages default, 128 MiB).
	DefaultMaxMemoryPages = wasmrt.DefaultMaxMemoryPages
)

// DefaultReservedPrefixes are the gateway's own paths (httpcore.Prefixes),
// which modules may not claim.
var DefaultReservedPrefixes = httpcore.ReservedPrefixes()

func (c Config) withDefaults() Config {
	if c.PoolSize == 0 {
		c.PoolSize = 4
	}
	if c.MaxPoolSize == 0 {
		c.MaxPoolSize = max(64, c.PoolSize)
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	if c.MaxTimeout == 0 {
		c.MaxTimeout = max(60*time.Second, c.Timeout)
	}
	if c.MaxMemoryPages == 0 {
		c.MaxMemoryPages = max(DefaultMaxMemoryPages, c.MemoryPages)
	}
	if c.MemoryPages == 0 {
		c.MemoryPages = min(DefaultMemoryPages, c.MaxMemoryPages)
	}
	if c.MaxInputBytes == 0 {
		c.MaxInputBytes = 1 << 20
	}
	if c.MaxOutputBytes == 0 {
		c.MaxOutputBytes = 16 << 20
	}
	if c.MaxModuleBytes == 0 {
		c.MaxModuleBytes = 64 << 20
	}
	if c.IdleRelease == 0 {
		c.IdleRelease = 2 * time.Minute
	}
	if c.QueueSize == 0 {
		c.QueueSize = 512
	}
	if c.CallerQueue == 0 {
		c.CallerQueue = 128
	}
	if c.BatchSliceItems == 0 {
		c.BatchSliceItems = 50
	}
	if c.BatchSliceBytes == 0 {
		c.BatchSliceBytes = 64 << 10
	}
	if c.BackgroundShare == 0 {
		c.BackgroundShare = 0.5
	}
	if c.LoadWorkers <= 0 {
		c.LoadWorkers = runtime.GOMAXPROCS(0)
	}
	if c.ReservedPrefixes == nil {
		c.ReservedPrefixes = DefaultReservedPrefixes
	}
	return c
}

// Validate reports the first inconsistent setting.
func (c Config) Validate() error {
	var errs []error
	if c.PoolSize < 0 || c.MaxPoolSize < 0 || c.PoolSize > c.MaxPoolSize && c.MaxPoolSize > 0 {
		errs = append(errs, fmt.Errorf("pool size %d must be between 1 and max pool size %d", c.PoolSize, c.MaxPoolSize))
	}
	if c.Timeout < 0 || c.MaxTimeout < 0 || c.Timeout > c.MaxTimeout && c.MaxTimeout > 0 {
		errs = append(errs, fmt.Errorf("timeout %v must be positive and at most max timeout %v", c.Timeout, c.MaxTimeout))
	}
	if c.MemoryPages > c.MaxMemoryPages && c.MaxMemoryPages > 0 || c.MaxMemoryPages > 65536 {
		errs = append(errs, fmt.Errorf("memory pages %d must be at most max memory pages %d (≤ 65536)", c.MemoryPages, c.MaxMemoryPages))
	}
	if c.QueueSize < 0 || c.CallerQueue < 0 || c.QueueTimeout < 0 || c.BatchSliceItems < 0 || c.BatchSliceBytes < 0 || c.RunSlots < 0 || c.CallerRunning < 0 || c.ResponseCacheBytes < 0 {
		errs = append(errs, errors.New("run slots, caller running, queue size, caller queue, queue timeout, batch slice sizes and response cache bytes must not be negative"))
	}
	if c.BackgroundShare < 0 || c.BackgroundShare > 1 {
		errs = append(errs, fmt.Errorf("background share %v must be between 0 and 1", c.BackgroundShare))
	}
	if c.Watch && c.ModulesDir == "" {
		errs = append(errs, errors.New("watch needs a modules dir"))
	}
	for _, p := range c.ReservedPrefixes {
		if !strings.HasPrefix(p, "/") {
			errs = append(errs, fmt.Errorf("reserved prefix %q must start with '/'", p))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("modulehost: config: %w", errors.Join(errs...))
	}
	return nil
}
