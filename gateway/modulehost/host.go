// Package modulehost serves toxgate model modules over HTTP: it loads the
// *.wasm files of a directory through wasmrt, keeps them in an atomically
// swapped registry, hot-loads and removes them, validates requests against
// each route's input schema and answers model calls, the model index, the
// Open Inference Protocol health/metadata routes and the admin routes, on
// fasthttp. The ABI core it builds on (wasmrt) knows nothing of HTTP.
package modulehost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	// sched admits calls to the run slots and to each module's instances.
	sched *scheduler

	mu       sync.Mutex        // serializes loads, swaps and removals
	failures map[string]string // module file → why it has no serving module
	scanned  bool              // the initial scan finished

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
	lastError string // why the latest replacement attempt failed
	pool      *pool  // admission state of its instances (see scheduler)
}

// New creates a Host and loads every *.wasm in cfg.ModulesDir. A module that
// fails to load is logged and reported by Ready; it does not make New fail.
func New(ctx context.Context, cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Host, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.Default()
	}
	h := &Host{cfg: cfg, log: log.With("component", "modulehost"), failures: map[string]string{},
		sched: newScheduler(cfg.RunSlots, cfg.CallerRunning, cfg.BackgroundShare)}
	var err error
	if h.metrics, err = newMetrics(reg); err != nil {
		return nil, err
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
		if err := h.Sync(ctx); err != nil {
			return nil, err
		}
		if cfg.Watch {
			if h.stopWatch, err = h.watch(); err != nil {
				return nil, err
			}
		}
	}
	h.mu.Lock()
	h.scanned = true
	h.mu.Unlock()
	if cfg.IdleRelease >= 0 {
		h.release(ctx, 0)
		h.stopReap = h.reap()
	}
	return h, nil
}

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

// Sync makes the registry match ModulesDir: new or changed files are loaded
// (a file that fails leaves the version already serving in place), modules
// whose file disappeared are removed.
func (h *Host) Sync(ctx context.Context) error {
	files, err := filepath.Glob(filepath.Join(h.cfg.ModulesDir, "*.wasm"))
	if err != nil {
		return fmt.Errorf("modulehost: listing modules: %w", err)
	}
	present := map[string]bool{}
	for _, f := range files {
		present[f] = true
		b, err := os.ReadFile(f)
		if err != nil {
			h.noteFailure(f, err)
			continue
		}
		if _, _, err := h.load(ctx, b, f, false); err != nil {
			h.log.Error("module refused", "file", f, "error", err)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
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
	defer h.mu.Unlock()
	if h.closed.Load() {
		return LoadResult{}, nil, errors.New("modulehost: closed")
	}
	for _, e := range h.reg.Load().modules {
		if e.mod.SHA256() == sha && (e.source == source || persist) {
			delete(h.failures, source)
			return LoadResult{Name: e.mod.Manifest().Name, Version: e.mod.Manifest().Version, SHA256: sha, Unchanged: true}, e, nil
		}
	}
	start := time.Now()
	mod, err := wasmrt.Load(ctx, wasm, h.options())
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
	e := &entry{mod: mod, source: source, loadedAt: time.Now(), schemas: schemas, pool: h.newPool(mod)}
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
		"routes", len(m.Routes), "limits", mod.Limits(), "replaced", res.Replaced, "took", time.Since(start))
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
	if !h.scanned {
		return errors.New("modules are still loading")
	}
	if h.closed.Load() {
		return errors.New("module host is shut down")
	}
	serving := map[string]bool{}
	for _, e := range h.reg.Load().modules {
		serving[e.source] = true
	}
	var missing []string
	for f, why := range h.failures {
		if !serving[f] {
			missing = append(missing, why)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%d module file(s) not loaded: %s", len(missing), strings.Join(missing, "; "))
	}
	return nil
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
	if h.stopWatch != nil {
		h.stopWatch()
	}
	if h.stopReap != nil {
		h.stopReap()
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
