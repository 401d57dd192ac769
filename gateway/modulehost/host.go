// Package modulehost serves toxgate model modules over HTTP: it loads the
// *.wasm files of a directory through wasmrt, keeps them in an atomically
// swapped registry, hot-loads and removes them, validates requests against
// each route's input schema and answers model calls, the model index, the
// Open Inference Protocol health/metadata routes and the admin routes, on
// fasthttp. The ABI core it builds on (wasmrt) knows nothing of HTTP.
package modulehost

import (
	"toxgate/gateway/modulehost/modelapi"

	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tetratelabs/wazero"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/modulehost/wasmrt"
	"toxgate/sdk/abi"
)

// Host loads, serves, swaps and removes modules. Create it with New.
type Host struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	cache   wazero.CompilationCache

	reg atomic.Pointer[registry]
	// rcache keeps recent answers (nil: Config.ResponseCacheBytes is 0).
	rcache *respCache
	// sched admits calls to the run slots and to each module's instances.
	sched *scheduler

	mu       sync.Mutex        // serializes swaps and removals
	failures map[string]string // module file → why it has no serving module
	scanned  bool              // the initial scan finished
	// pending are the module files a Sync is loading now (file → when it
	// started); loadTime the moving average of a load, for Retry-After.
	pending  map[string]time.Time
	loadTime time.Duration
	syncMu   sync.Mutex // one Sync at a time

	// parkedAtStart is set when the initial load parked a module it
	// compiled (the memory it freed is handed back once it ends).
	parkedAtStart bool
	// loaded is closed when the initial load ends; stopLoad cancels it.
	loaded   chan struct{}
	stopLoad context.CancelFunc

	retiring  sync.WaitGroup // modules being drained after a swap or removal
	stopWatch func()
	stopReap  func()
	closed    atomic.Bool
}

// registry is an immutable snapshot of the loaded modules; a swap stores a new one.
type registry struct {
	gen     uint64
	modules map[string]*entry // by module name
	routes  map[string]route  // by path
}

type route struct {
	e   *entry
	idx int
}

// entry is one loaded module.
type entry struct {
	mod       *wasmrt.Module
	source    string // file it came from; "" for an in-memory upload
	loadedAt  time.Time
	schemas   []*jsonschema.Schema
	meta      *outputMeta // output tensors of its routes (OIP metadata)
	lastError string      // why the latest replacement attempt failed
	pool      *pool       // admission state of its instances (see scheduler)
}

// New creates a Host and loads every *.wasm in cfg.ModulesDir, several at
// once, before it returns. A module that fails to load is logged and
// reported by Ready; it does not make New fail.
func New(ctx context.Context, cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Host, error) {
	h, err := Start(ctx, cfg, log, reg)
	if err != nil {
		return nil, err
	}
	select {
	case <-h.loaded:
		return h, nil
	case <-ctx.Done():
		h.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("modulehost: loading modules: %w", ctx.Err())
	}
}

// Start creates a Host and loads the *.wasm of cfg.ModulesDir in the
// background, several at once (Config.LoadWorkers): a module restored from
// its snapshot in CacheDir (a restart) is ready at once, a new one once it
// is compiled and checked. Until the initial load ends, Ready reports what
// is missing, Readiness each module's state, and ServeLoading answers the
// model calls that no loaded module serves yet with 503; Loaded is closed
// when it ends. Only ctx's values are kept: Close stops the load.
func Start(ctx context.Context, cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Host, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.Default()
	}
	h := &Host{cfg: cfg, log: log.With("component", "modulehost"), failures: map[string]string{},
		pending: map[string]time.Time{}, loaded: make(chan struct{}),
		sched: newScheduler(cfg.RunSlots, cfg.CallerRunning, cfg.BackgroundShare)}
	var err error
	if h.metrics, err = newMetrics(reg); err != nil {
		return nil, err
	}
	if cfg.ResponseCacheBytes > 0 {
		h.rcache = newRespCache(cfg.ResponseCacheBytes, h.metrics)
	}
	if cfg.CacheDir != "" {
		if h.cache, err = wazero.NewCompilationCacheWithDir(cfg.CacheDir); err != nil {
			return nil, fmt.Errorf("modulehost: compilation cache %s: %w", cfg.CacheDir, err)
		}
	} else {
		h.cache = wazero.NewCompilationCache()
	}
	h.reg.Store(&registry{modules: map[string]*entry{}, routes: map[string]route{}})
	if cfg.ModulesDir != "" {
		if err := os.MkdirAll(cfg.ModulesDir, 0o755); err != nil {
			return nil, fmt.Errorf("modulehost: modules dir: %w", err)
		}
		// The files are known at once: Ready and Readiness name them
		// while they load.
		files, _ := filepath.Glob(filepath.Join(cfg.ModulesDir, "*.wasm"))
		now := time.Now()
		for _, f := range files {
			h.pending[f] = now
		}
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.stopLoad = cancel
	go h.initialLoad(lctx)
	return h, nil
}

// initialLoad loads the modules directory, then parks what it compiled,
// starts watching the directory and reaping idle modules.
func (h *Host) initialLoad(ctx context.Context) {
	defer close(h.loaded)
	start := time.Now()
	if h.cfg.ModulesDir != "" {
		if err := h.Sync(ctx); err != nil {
			h.log.Error("loading modules", "error", err)
		}
		if h.cfg.Watch && ctx.Err() == nil {
			stop, err := h.watch()
			if err != nil {
				h.log.Error("watching the modules directory", "error", err)
			} else {
				h.mu.Lock()
				h.stopWatch = stop
				h.mu.Unlock()
			}
		}
	}
	h.mu.Lock()
	h.scanned = true
	n, parked := len(h.reg.Load().modules), h.parkedAtStart
	h.mu.Unlock()
	if parked {
		debug.FreeOSMemory() // the machine code of parked modules is unmapped by a finalizer
	}
	h.log.Info("modules loaded", "modules", n, "took", time.Since(start))
	if h.cfg.IdleRelease >= 0 && ctx.Err() == nil {
		h.release(ctx, 0)
		stop := h.reap()
		h.mu.Lock()
		h.stopReap = stop
		h.mu.Unlock()
	}
}

// Loaded is closed when the initial load of the modules directory ends.
func (h *Host) Loaded() <-chan struct{} { return h.loaded }

// reap releases, every IdleRelease/4, the modules idle for IdleRelease
// (see Config.IdleRelease) and the idle instances beyond one of the modules
// idle for a quarter of it.
func (h *Host) reap() func() {
	every := max(h.cfg.IdleRelease/4, 50*time.Millisecond)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				h.release(context.Background(), h.cfg.IdleRelease)
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// release parks the modules without a call for idle and trims the idle
// instances of those without one for idle/4; when anything was freed it hands
// the freed memory back to the system (the machine code of a parked module is
// unmapped by a finalizer, which needs a collection to run).
func (h *Host) release(ctx context.Context, idle time.Duration) {
	freed := 0
	for _, e := range h.reg.Load().modules {
		// Parking needs wazero's on-disk cache: without one, bringing a
		// module back is a full compilation (seconds for a Go module).
		if h.cfg.CacheDir != "" && e.mod.Park(ctx, idle) {
			h.metrics.parks.WithLabelValues(e.mod.Manifest().Name).Inc()
			freed++
		} else {
			freed += e.mod.TrimIdle(ctx, idle/4, 1)
		}
	}
	if freed > 0 {
		debug.FreeOSMemory()
	}
}

// newPool makes the admission state of a module: one slot per instance.
func (h *Host) newPool(mod *wasmrt.Module) *pool {
	l := mod.Limits()
	wait := h.cfg.QueueTimeout
	if wait == 0 {
		wait = time.Duration(l.TimeoutMS) * time.Millisecond
	}
	return newPool(l.PoolSize, h.cfg.QueueSize, h.cfg.CallerQueue, wait, h.cfg.BackgroundShare)
}

// compile loads wasm: restored from its snapshot when one fits (restored
// is then true; nothing is compiled), else compiled and checked.
func (h *Host) compile(ctx context.Context, wasm []byte, sha string) (mod *wasmrt.Module, restored bool, err error) {
	if snap, ok := h.readSnapshot(sha); ok && h.cfg.IdleRelease >= 0 {
		if mod, err := wasmrt.Restore(snap, sha, h.options()); err == nil {
			return mod, true, nil
		}
	}
	mod, err = wasmrt.Load(ctx, wasm, h.options())
	return mod, false, err
}

// snapshotFile is where the snapshot of the module whose bytes hash to
// sha is kept ("" without a CacheDir).
func (h *Host) snapshotFile(sha string) string {
	if h.cfg.CacheDir == "" {
		return ""
	}
	return filepath.Join(h.codeDir(), sha+".json")
}

// readSnapshot reads the snapshot of the module whose bytes hash to sha.
func (h *Host) readSnapshot(sha string) (wasmrt.Snapshot, bool) {
	var s wasmrt.Snapshot
	f := h.snapshotFile(sha)
	if f == "" {
		return s, false
	}
	b, err := os.ReadFile(f)
	if err != nil || len(b) > 4<<20 || json.Unmarshal(b, &s) != nil {
		return s, false
	}
	return s, true
}

// saveSnapshot keeps mod's snapshot beside its code, so that the next
// start restores it without compiling.
func (h *Host) saveSnapshot(mod *wasmrt.Module) {
	f := h.snapshotFile(mod.SHA256())
	snap, ok := mod.Snapshot()
	if f == "" || !ok {
		return
	}
	b, err := json.Marshal(snap)
	if err == nil {
		err = writeAtomic(f, b)
	}
	if err != nil {
		h.log.Warn("module snapshot not saved; the next start compiles it", "module", mod.Manifest().Name, "error", err)
	}
}

func (h *Host) options() wasmrt.Options {
	return wasmrt.Options{
		Cache: h.cache,
		Default: abi.Limits{
			MemoryPages: h.cfg.MemoryPages, TimeoutMS: int(h.cfg.Timeout / time.Millisecond),
			MaxInputBytes: h.cfg.MaxInputBytes, PoolSize: h.cfg.PoolSize,
		},
		Max: abi.Limits{
			MemoryPages: h.cfg.MaxMemoryPages, TimeoutMS: int(h.cfg.MaxTimeout / time.Millisecond),
			MaxInputBytes: max(h.cfg.MaxInputBytes, 16<<20), PoolSize: h.cfg.MaxPoolSize,
		},
		MaxOutputBytes: h.cfg.MaxOutputBytes,
		CodeDir:        h.codeDir(),
		Logger:         h.log,
	}
}

// codeDir is where modules' instrumented code waits while they are parked:
// beside wazero's cache in CacheDir; "" (kept in memory) without one.
func (h *Host) codeDir() string {
	if h.cfg.CacheDir == "" {
		return ""
	}
	return filepath.Join(h.cfg.CacheDir, "toxgate-code")
}

// Sync makes the registry match ModulesDir: new or changed files are loaded,
// Config.LoadWorkers at once, the largest first (a file that fails leaves
// the version already serving in place), modules whose file disappeared
// are removed.
func (h *Host) Sync(ctx context.Context) error {
	h.syncMu.Lock()
	defer h.syncMu.Unlock()
	files, err := filepath.Glob(filepath.Join(h.cfg.ModulesDir, "*.wasm"))
	if err != nil {
		return fmt.Errorf("modulehost: listing modules: %w", err)
	}
	present := map[string]bool{}
	size := map[string]int64{}
	for _, f := range files {
		present[f] = true
		if st, err := os.Stat(f); err == nil {
			size[f] = st.Size()
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return size[files[i]] > size[files[j]] })
	h.mu.Lock()
	now := time.Now()
	for _, f := range files {
		if _, ok := h.pending[f]; !ok {
			h.pending[f] = now
		}
	}
	h.mu.Unlock()
	work := make(chan string)
	var wg sync.WaitGroup
	var retryMu sync.Mutex
	var retry []string
	for range min(h.cfg.LoadWorkers, max(1, len(files))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				if h.syncFile(ctx, f) {
					retryMu.Lock()
					retry = append(retry, f)
					retryMu.Unlock()
				}
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	// A module that did not start within the load timeout while others
	// loaded beside it (a busy machine) gets one more try on its own.
	for _, f := range retry {
		h.log.Info("loading the module again, alone: it did not start in time beside the others", "file", f)
		h.syncFile(ctx, f)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for f := range h.pending {
		if !present[f] {
			delete(h.pending, f)
		}
	}
	for f := range h.failures {
		if !present[f] {
			delete(h.failures, f)
		}
	}
	for name, e := range h.reg.Load().modules {
		if e.source != "" && filepath.Dir(e.source) == filepath.Clean(h.cfg.ModulesDir) && !present[e.source] {
			h.log.Info("module file removed", "module", name, "file", e.source)
			h.removeLocked(name)
		}
	}
	return nil
}

// syncFile loads one file of the modules directory; retry reports a load
// that failed on a deadline (the machine was busy), worth one more try.
func (h *Host) syncFile(ctx context.Context, f string) (retry bool) {
	start := time.Now()
	defer func() {
		h.mu.Lock()
		delete(h.pending, f)
		const alpha = 0.3
		took := time.Since(start)
		if h.loadTime == 0 {
			h.loadTime = took
		} else {
			h.loadTime += time.Duration(alpha * float64(took-h.loadTime))
		}
		h.mu.Unlock()
	}()
	if ctx.Err() != nil {
		return false
	}
	b, err := os.ReadFile(f)
	if err != nil {
		h.noteFailure(f, err)
		return false
	}
	if _, _, err := h.load(ctx, b, f, false); err != nil {
		h.log.Error("module refused", "file", f, "error", err)
		return ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "deadline exceeded"))
	}
	return false
}

func (h *Host) noteFailure(file string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures[file] = err.Error()
}

// LoadResult says what a load did.
type LoadResult struct {
	Name, Version, SHA256 string
	// Unchanged is true when the same binary was already serving.
	Unchanged bool
	// Replaced is the version that was serving before, if any.
	Replaced string
}

// load compiles and checks wasm, then installs it, replacing a module of the
// same name. source is the file it came from ("" for none). With persist, the
// module is first written to ModulesDir as <name>.wasm.
func (h *Host) load(ctx context.Context, wasm []byte, source string, persist bool) (LoadResult, *entry, error) {
	sum := sha256.Sum256(wasm)
	sha := hex.EncodeToString(sum[:])
	h.mu.Lock()
	if h.closed.Load() {
		h.mu.Unlock()
		return LoadResult{}, nil, errors.New("modulehost: closed")
	}
	for _, e := range h.reg.Load().modules {
		if e.mod.SHA256() == sha && (e.source == source || persist) {
			delete(h.failures, source)
			h.mu.Unlock()
			return LoadResult{Name: e.mod.Manifest().Name, Version: e.mod.Manifest().Version, SHA256: sha, Unchanged: true}, e, nil
		}
	}
	h.mu.Unlock()
	// Compiled and checked outside the lock: modules load in parallel.
	start := time.Now()
	mod, restored, err := h.compile(ctx, wasm, sha)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil && h.closed.Load() {
		mod.Retire(context.WithoutCancel(ctx))
		return LoadResult{}, nil, errors.New("modulehost: closed")
	}
	if err != nil {
		h.metrics.loads.WithLabelValues("refused").Inc()
		err = fmt.Errorf("module %s refused: %w", displayName(source, sha), err)
		if source != "" {
			h.failures[source] = err.Error()
			h.markReplacementFailed(source, err)
		}
		return LoadResult{}, nil, err
	}
	m := mod.Manifest()
	res := LoadResult{Name: m.Name, Version: m.Version, SHA256: sha}
	reject := func(err error) (LoadResult, *entry, error) {
		mod.Retire(context.WithoutCancel(ctx))
		h.metrics.loads.WithLabelValues("refused").Inc()
		err = fmt.Errorf("module %s refused: %w", displayName(source, sha), err)
		if source != "" {
			h.failures[source] = err.Error()
			h.markReplacementFailed(source, err)
		}
		return LoadResult{}, nil, err
	}
	cur := h.reg.Load()
	old := cur.modules[m.Name]
	if old != nil && !persist && source != "" && old.source != "" && old.source != source {
		if _, err := os.Stat(old.source); err == nil {
			return reject(fmt.Errorf("module name %q is already served from %s", m.Name, old.source))
		}
	}
	schemas, err := compileSchemas(m)
	if err != nil {
		return reject(err)
	}
	for _, r := range m.Routes {
		for _, p := range h.cfg.ReservedPrefixes {
			if httpcore.UnderPrefix(r.Path, p) {
				return reject(fmt.Errorf("route %s: the prefix %s is reserved for the gateway", r.Path, p))
			}
		}
		if other, ok := cur.routes[r.Path]; ok && other.e.mod.Manifest().Name != m.Name {
			return reject(fmt.Errorf("route %s is already served by module %s", r.Path, other.e.mod.Manifest().Name))
		}
	}
	if persist && h.cfg.ModulesDir != "" {
		dst := filepath.Join(h.cfg.ModulesDir, m.Name+".wasm")
		if err := writeAtomic(dst, wasm); err != nil {
			return reject(fmt.Errorf("writing %s: %w", dst, err))
		}
		source = dst
	}
	e := &entry{mod: mod, source: source, loadedAt: time.Now(), schemas: schemas, pool: h.newPool(mod), meta: &outputMeta{}}
	h.install(e)
	if source != "" {
		delete(h.failures, source)
	}
	if old != nil {
		res.Replaced = old.mod.Manifest().Version
		if persist && old.source != "" && old.source != source {
			os.Remove(old.source) // the upload supersedes the old file
			delete(h.failures, old.source)
		}
	}
	h.metrics.loads.WithLabelValues("loaded").Inc()
	h.log.Info("module loaded", "module", m.Name, "version", m.Version, "sha256", sha, "source", source,
		"routes", len(m.Routes), "limits", mod.Limits(), "replaced", res.Replaced, "restored", restored, "took", time.Since(start))
	if !restored {
		h.saveSnapshot(mod)
		// At start, parked right after its checks (as a restored module
		// is): its code waits on disk until its first call, and the
		// modules still loading have the memory. A module loaded later
		// (watch, upload) keeps its first instance until it is idle.
		if !h.scanned && h.cfg.CacheDir != "" && h.cfg.IdleRelease >= 0 && mod.Park(ctx, 0) {
			h.metrics.parks.WithLabelValues(m.Name).Inc()
			h.parkedAtStart = true
		}
	}
	return res, e, nil
}

// markReplacementFailed records on the entry serving from source that its
// replacement failed (the old version keeps serving).
func (h *Host) markReplacementFailed(source string, err error) {
	for _, e := range h.reg.Load().modules {
		if e.source == source {
			e2 := *e
			e2.lastError = err.Error()
			h.install(&e2)
			return
		}
	}
}

// install stores a registry in which e replaces the module of the same name,
// then drains the old one in the background. Callers hold h.mu.
func (h *Host) install(e *entry) {
	cur := h.reg.Load()
	name := e.mod.Manifest().Name
	next := &registry{gen: cur.gen + 1, modules: make(map[string]*entry, len(cur.modules)+1), routes: make(map[string]route, len(cur.routes)+len(e.mod.Manifest().Routes))}
	for n, x := range cur.modules {
		if n != name {
			next.modules[n] = x
		}
	}
	next.modules[name] = e
	for p, r := range cur.routes {
		if r.e.mod.Manifest().Name != name {
			next.routes[p] = r
		}
	}
	for i, r := range e.mod.Manifest().Routes {
		next.routes[r.Path] = route{e: e, idx: i}
	}
	h.reg.Store(next)
	h.metrics.modules.Set(float64(len(next.modules)))
	if old := cur.modules[name]; old != nil && old.mod != e.mod {
		h.retire(old)
	}
}

// removeLocked drops a module from the registry and drains it. Callers hold h.mu.
func (h *Host) removeLocked(name string) (*entry, bool) {
	cur := h.reg.Load()
	old, ok := cur.modules[name]
	if !ok {
		return nil, false
	}
	next := &registry{gen: cur.gen + 1, modules: make(map[string]*entry, len(cur.modules)), routes: make(map[string]route, len(cur.routes))}
	for n, x := range cur.modules {
		if n != name {
			next.modules[n] = x
		}
	}
	for p, r := range cur.routes {
		if r.e != old {
			next.routes[p] = r
		}
	}
	h.reg.Store(next)
	h.metrics.modules.Set(float64(len(next.modules)))
	h.retire(old)
	return old, true
}

// retire drains a module that left the registry: calls in flight finish on it.
func (h *Host) retire(e *entry) {
	if h.rcache != nil && !h.serving(e.mod.SHA256()) {
		h.rcache.dropModule(e.mod.SHA256())
	}
	h.retiring.Add(1)
	go func() {
		defer h.retiring.Done()
		ctx, cancel := context.WithTimeout(context.Background(), h.cfg.MaxTimeout+5*time.Second)
		defer cancel()
		if err := e.mod.Retire(ctx); err != nil {
			h.log.Warn("retiring module", "module", e.mod.Manifest().Name, "error", err)
		}
	}()
}

// serving reports whether a loaded module has the SHA-256 sha.
func (h *Host) serving(sha string) bool {
	for _, e := range h.reg.Load().modules {
		if e.mod.SHA256() == sha {
			return true
		}
	}
	return false
}

// Load installs a module from bytes, as the admin upload does: checked first,
// written to ModulesDir as <name>.wasm, then swapped in.
func (h *Host) Load(ctx context.Context, wasm []byte) (LoadResult, error) {
	res, _, err := h.load(ctx, wasm, "", true)
	return res, err
}

// Remove unloads the named module and deletes its file. Calls in flight finish.
func (h *Host) Remove(name string) (sha string, ok bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old, ok := h.removeLocked(name)
	if !ok {
		return "", false, nil
	}
	if old.source != "" {
		if err := os.Remove(old.source); err != nil && !errors.Is(err, os.ErrNotExist) {
			return old.mod.SHA256(), true, fmt.Errorf("modulehost: removing %s: %w", old.source, err)
		}
		delete(h.failures, old.source)
	}
	h.log.Info("module removed", "module", name, "sha256", old.mod.SHA256())
	return old.mod.SHA256(), true, nil
}

// Ready returns nil once the initial scan is done and every module file has a
// serving module; otherwise an error naming what is missing.
func (h *Host) Ready() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed.Load() {
		return errors.New("module host is shut down")
	}
	serving := map[string]bool{}
	for _, e := range h.reg.Load().modules {
		serving[e.source] = true
	}
	loading := 0
	for f := range h.pending {
		if !serving[f] {
			loading++
		}
	}
	var missing []string
	for f, why := range h.failures {
		if _, pending := h.pending[f]; !serving[f] && !pending {
			missing = append(missing, why)
		}
	}
	sort.Strings(missing)
	var msgs []string
	if !h.scanned || loading > 0 {
		msgs = append(msgs, fmt.Sprintf("modules are still loading: %d of %d ready", len(serving), len(serving)+loading+len(missing)))
	}
	if len(missing) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d module file(s) not loaded: %s", len(missing), strings.Join(missing, "; ")))
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// Module states in Readiness.
const (
	StateReady   = "ready"   // serving
	StateLoading = "loading" // its file is being compiled and checked
	StateFailed  = "failed"  // its file was refused (Models says why)
)

// Readiness maps each module to its state: loaded modules by name, module
// files that have no serving module yet by file name without ".wasm".
func (h *Host) Readiness() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]string{}
	serving := map[string]bool{}
	for name, e := range h.reg.Load().modules {
		out[name] = StateReady
		serving[e.source] = true
	}
	for f := range h.pending {
		if !serving[f] {
			out[fileStem(f)] = StateLoading
		}
	}
	for f := range h.failures {
		if _, ok := h.pending[f]; !ok && !serving[f] {
			out[fileStem(f)] = StateFailed
		}
	}
	return out
}

func fileStem(f string) string { return strings.TrimSuffix(filepath.Base(f), ".wasm") }

// loading reports how many module files are being loaded with no module
// serving them yet, how many modules serve, and when to retry (the
// remaining loads at the average load time over the workers; at least 1 s).
func (h *Host) loading() (pending, ready int, retry time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	reg := h.reg.Load()
	serving := map[string]bool{}
	for _, e := range reg.modules {
		serving[e.source] = true
	}
	for f := range h.pending {
		if !serving[f] {
			pending++
		}
	}
	est := h.loadTime * time.Duration((pending+h.cfg.LoadWorkers-1)/h.cfg.LoadWorkers)
	return pending, len(reg.modules), max(time.Second, est.Round(time.Second))
}

// ServeLoading answers a model call to a path that no loaded module serves
// while module files are still loading (the path may be one of theirs):
// 503 with Retry-After and a JSON error, and reports whether it did. Call it
// for requests that matched no route and no loaded module's path.
func (h *Host) ServeLoading(ctx *fasthttp.RequestCtx) bool {
	if !ctx.IsPost() {
		return false
	}
	pending, ready, retry := h.loading()
	if pending == 0 {
		return false
	}
	secs := int(retry / time.Second)
	ctx.Response.Header.Set("Retry-After", itoa(secs))
	httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, modelapi.CodeUnavailable,
		fmt.Sprintf("the models are still loading (%d of %d ready) and %s may be one of them; retry in %d s",
			ready, ready+pending, strconvQuote(string(ctx.Path())), secs), "")
	return true
}

// Manifests returns the manifests of the loaded modules sorted by name, and a
// generation number that changes whenever the set of modules changes.
func (h *Host) Manifests() (generation uint64, manifests []abi.Manifest) {
	r := h.reg.Load()
	for _, e := range r.modules {
		manifests = append(manifests, e.mod.Manifest())
	}
	sort.Slice(manifests, func(i, j int) bool { return manifests[i].Name < manifests[j].Name })
	return r.gen, manifests
}

// Close stops watching, refuses new loads and drains every module (calls in
// flight finish unless ctx ends first).
func (h *Host) Close(ctx context.Context) error {
	if h.closed.Swap(true) {
		return nil
	}
	h.stopLoad()
	select { // a load under way ends with its module retired
	case <-h.loaded:
	case <-ctx.Done():
	}
	h.mu.Lock()
	stopWatch, stopReap := h.stopWatch, h.stopReap
	h.mu.Unlock()
	if stopWatch != nil {
		stopWatch()
	}
	if stopReap != nil {
		stopReap()
	}
	h.mu.Lock()
	for name := range h.reg.Load().modules {
		h.removeLocked(name)
	}
	h.mu.Unlock()
	done := make(chan struct{})
	go func() { h.retiring.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("modulehost: close: %w", ctx.Err())
	}
	if cerr := h.cache.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
		err = fmt.Errorf("modulehost: closing compilation cache: %w", cerr)
	}
	return err
}

func displayName(source, sha string) string {
	if source != "" {
		return filepath.Base(source)
	}
	return "sha256:" + sha[:12]
}

func writeAtomic(dst string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), dst)
}
