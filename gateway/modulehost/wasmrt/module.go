package wasmrt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"toxgate/sdk/abi"
)

// Module is a loaded, checked module with its pool of instances. It is safe for
// concurrent use; each instance serves one call at a time.
type Module struct {
	opts     Options
	sha      string
	size     int
	manifest abi.Manifest
	limits   abi.Limits
	log      *slog.Logger

	// rt, cm and pool change only under rtMu while no call is active: a
	// parked module (rt == nil) has no compiled code and no instance; the
	// next call compiles it again from its code (see Park).
	rtMu     sync.Mutex
	rt       wazero.Runtime
	cm       wazero.CompiledModule
	pool     pool
	active   int       // calls holding rt
	lastUsed time.Time // when the last call ended
	parks    atomic.Int64

	// code is the module as compiled (instrumented), kept in memory unless
	// Options.CodeDir holds it in codeFile; codeSHA checks it when read back.
	code     []byte
	codeFile string
	codeSHA  [32]byte

	// fuel is true when the module was instrumented with fuel checks (see
	// fuel.go); false when it runs with wazero's WithCloseOnContextDone.
	fuel bool

	mu       sync.Mutex
	retired  bool
	inflight sync.WaitGroup

	calls, failures, discarded atomic.Int64
}

// Load compiles wasm in its own Runtime, instantiates it once and checks the
// ABI version, the exports, the manifest and the limits. It returns a
// *LoadError saying why a module is refused.
func Load(ctx context.Context, wasm []byte, opts Options) (*Module, error) {
	opts = opts.withDefaults()
	sum := sha256.Sum256(wasm)
	m := &Module{opts: opts, sha: hex.EncodeToString(sum[:]), size: len(wasm), log: opts.Logger}
	// LoadTimeout bounds each instantiation, not compilation: compiling a big
	// module on a busy machine takes as long as it takes (ctx still cancels it).
	instantiating := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, opts.LoadTimeout)
	}

	// Runaway calls are stopped by fuel checks inserted into the code, or, for a
	// module the rewriter does not understand, by wazero's slower
	// WithCloseOnContextDone.
	code, err := instrumentFuel(wasm)
	if err == nil {
		wasm, m.fuel = code, true
	} else {
		opts.Logger.Debug("wasmrt: module not instrumented; using WithCloseOnContextDone", "error", err)
	}
	// Probe with the host's ceiling: the manifest, and so the module's own limit,
	// is only known once an instance runs.
	if err := m.compile(ctx, wasm, opts.Max.MemoryPages); err != nil {
		return nil, err
	}
	pctx, cancel := instantiating()
	first, err := m.probe(pctx)
	cancel()
	if err != nil {
		m.closeRuntime(ctx)
		return nil, err
	}
	if m.limits.MemoryPages != opts.Max.MemoryPages {
		// The probe's compiled code stays until the second compilation, which
		// then finds it in the shared cache instead of compiling again.
		first.close(ctx)
		probeRT, probeCM := m.rt, m.cm
		err := m.compile(ctx, wasm, m.limits.MemoryPages)
		probeRT.Close(context.WithoutCancel(ctx))
		probeCM.Close(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		ictx, cancel := instantiating()
		first, err = m.newInstance(ictx)
		cancel()
		if err != nil {
			m.closeRuntime(ctx)
			return nil, refuse(err, "module does not start within its memory limit of %d pages", m.limits.MemoryPages)
		}
	}
	m.log = opts.Logger.With("module", m.manifest.Name, "version", m.manifest.Version, "sha256", m.sha[:12])
	m.pool = newPool(m.limits.PoolSize)
	m.pool.slots <- struct{}{}
	m.pool.put(first)
	m.lastUsed = time.Now()
	m.codeSHA = sha256.Sum256(wasm)
	if opts.CodeDir != "" {
		m.codeFile = filepath.Join(opts.CodeDir, hex.EncodeToString(m.codeSHA[:])+".wasm")
		if err := writeFileAtomic(m.codeFile, wasm); err != nil {
			m.log.Warn("wasmrt: keeping the module's code in memory", "error", err)
			m.codeFile, m.code = "", wasm
		}
	} else {
		m.code = wasm
	}
	return m, nil
}

// closeRuntime closes the module's Runtime and its compiled code. The
// compiled module is closed explicitly: with a shared compilation cache,
// closing the Runtime alone leaves the machine code in the cache's engine.
func (m *Module) closeRuntime(ctx context.Context) error {
	if m.rt == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	err := m.rt.Close(ctx)
	if m.cm != nil {
		m.cm.Close(ctx)
	}
	m.rt, m.cm = nil, nil
	return err
}

// Park closes the module's instances and drops its compiled code if no call
// has run for idle and none is running; the next call compiles it again
// (from the compilation cache when there is one on disk) and starts a new
// instance. It reports whether the module was parked by this call.
func (m *Module) Park(ctx context.Context, idle time.Duration) bool {
	m.rtMu.Lock()
	defer m.rtMu.Unlock()
	if m.rt == nil || m.active > 0 || time.Since(m.lastUsed) < idle {
		return false
	}
	m.pool.closeIdle(ctx)
	m.closeRuntime(ctx)
	m.pool = newPool(m.limits.PoolSize)
	m.parks.Add(1)
	return true
}

// Parked reports whether the module holds no compiled code now.
func (m *Module) Parked() bool {
	m.rtMu.Lock()
	defer m.rtMu.Unlock()
	return m.rt == nil
}

// TrimIdle closes idle instances beyond keep if no call has run for idle.
func (m *Module) TrimIdle(ctx context.Context, idle time.Duration, keep int) int {
	m.rtMu.Lock()
	defer m.rtMu.Unlock()
	if m.rt == nil || time.Since(m.lastUsed) < idle {
		return 0
	}
	n := 0
	for len(m.pool.idle) > keep {
		select {
		case in := <-m.pool.idle:
			m.pool.discard(ctx, in)
			n++
		default:
			return n
		}
	}
	return n
}

// activate makes the module's runtime available to one call, compiling it
// again if it was parked; deactivate ends that call's hold.
func (m *Module) activate(ctx context.Context) error {
	m.rtMu.Lock()
	defer m.rtMu.Unlock()
	if m.rt == nil {
		code := m.code
		if code == nil {
			b, err := os.ReadFile(m.codeFile)
			if err != nil {
				return fmt.Errorf("wasmrt: reading the module's code back: %w", err)
			}
			if sha256.Sum256(b) != m.codeSHA {
				return fmt.Errorf("wasmrt: the module's code in %s changed on disk", m.codeFile)
			}
			code = b
		}
		// The compilation outlives the call's deadline: it serves the calls
		// after this one even when this one runs out of time.
		if err := m.compile(context.WithoutCancel(ctx), code, m.limits.MemoryPages); err != nil {
			return fmt.Errorf("wasmrt: compiling the module again: %w", err)
		}
	}
	m.active++
	return nil
}

// Prepare makes the module ready to run a call at once: it compiles a
// parked module again and starts an instance when none is idle. The host
// calls it before it starts a call's deadline, so that the deadline covers
// the model's work, not the host's (reading the code back, loading machine
// code, instantiating); ctx bounds that work. It returns ErrRetired for a
// retired module.
func (m *Module) Prepare(ctx context.Context) error {
	m.rtMu.Lock()
	ready := m.rt != nil && len(m.pool.idle) > 0
	m.rtMu.Unlock()
	if ready {
		return nil
	}
	if !m.enter() {
		return ErrRetired
	}
	defer m.inflight.Done()
	if err := m.activate(ctx); err != nil {
		return err
	}
	defer m.deactivate()
	select {
	case m.pool.slots <- struct{}{}:
	default:
		return nil // every instance exists: one comes back when a call ends
	}
	inst, err := m.newInstance(ctx)
	if err != nil {
		<-m.pool.slots
		return err
	}
	m.pool.put(inst)
	return nil
}

func (m *Module) deactivate() {
	m.rtMu.Lock()
	m.active--
	m.lastUsed = time.Now()
	m.rtMu.Unlock()
}

func writeFileAtomic(dst string, b []byte) error {
	if _, err := os.Stat(dst); err == nil {
		return nil // content-addressed: already there
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dst), ".code-*.tmp")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return werr
	}
	return os.Rename(f.Name(), dst)
}

// compile creates the module's Runtime with the given memory cap, the WASI and
// toxgate host modules, and compiles wasm.
func (m *Module) compile(ctx context.Context, wasm []byte, pages uint32) error {
	cfg := wazero.NewRuntimeConfig().WithMemoryLimitPages(pages).WithCloseOnContextDone(!m.fuel)
	if m.opts.Cache != nil {
		cfg = cfg.WithCompilationCache(m.opts.Cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return fmt.Errorf("wasmrt: instantiating WASI: %w", err)
	}
	_, err := rt.NewHostModuleBuilder(abi.ImportModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(m.hostLog), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, nil).
		WithParameterNames("level", "ptr", "len").
		Export(abi.ImportLog).
		Instantiate(ctx)
	if err != nil {
		rt.Close(ctx)
		return fmt.Errorf("wasmrt: instantiating host module: %w", err)
	}
	if m.fuel {
		_, err = rt.NewHostModuleBuilder(fuelModule).
			NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(refuel), nil, []api.ValueType{api.ValueTypeI32}).
			Export(fuelName).
			Instantiate(ctx)
		if err != nil {
			rt.Close(ctx)
			return fmt.Errorf("wasmrt: instantiating host module: %w", err)
		}
	}
	// Functions are compiled on every core: a module is one compilation unit
	// of thousands of functions, and the host loads modules one at a time.
	cctx := experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0))
	cm, err := rt.CompileModule(cctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return refuse(err, "not a valid WebAssembly module")
	}
	if err := checkImports(cm, m.fuel); err != nil {
		rt.Close(ctx)
		return err
	}
	m.rt, m.cm = rt, cm
	return nil
}

var wantExports = []struct {
	name            string
	params, results []api.ValueType
}{
	{abi.ExportABIVersion, nil, []api.ValueType{api.ValueTypeI32}},
	{abi.ExportManifest, nil, []api.ValueType{api.ValueTypeI64}},
	{abi.ExportAlloc, []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}},
	{abi.ExportEvaluate, []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}},
}

// checkImports refuses imports the host does not provide. fuel allows the
// import that instrumentFuel adds (it refuses modules that have it already).
func checkImports(cm wazero.CompiledModule, fuel bool) error {
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		if mod == wasi_snapshot_preview1.ModuleName || (mod == abi.ImportModule && name == abi.ImportLog) ||
			(fuel && mod == fuelModule && name == fuelName) {
			continue
		}
		return refuse(nil, "module imports %s.%s, which the host does not provide (allowed: %s.*, %s.%s)",
			mod, name, wasi_snapshot_preview1.ModuleName, abi.ImportModule, abi.ImportLog)
	}
	if _, ok := cm.ExportedFunctions()[abi.ExportABIVersion]; !ok {
		return refuse(nil, "not a toxgate module: it does not export %s (see sdk/ABI.md)", abi.ExportABIVersion)
	}
	return nil
}

func checkExport(cm wazero.CompiledModule, name string, params, results []api.ValueType) error {
	f, ok := cm.ExportedFunctions()[name]
	if !ok {
		return refuse(nil, "module does not export %s", name)
	}
	if !sameTypes(f.ParamTypes(), params) || !sameTypes(f.ResultTypes(), results) {
		return refuse(nil, "export %s has signature %s -> %s, want %s -> %s", name,
			typeNames(f.ParamTypes()), typeNames(f.ResultTypes()), typeNames(params), typeNames(results))
	}
	return nil
}

// probe instantiates once, checks the ABI version, the remaining exports and the
// manifest, and resolves the limits.
func (m *Module) probe(ctx context.Context) (*instance, error) {
	v := wantExports[0]
	if err := checkExport(m.cm, v.name, v.params, v.results); err != nil {
		return nil, err
	}
	inst, err := m.newInstance(ctx)
	if err != nil {
		return nil, refuse(err, "module failed to start")
	}
	fail := func(err error) (*instance, error) { inst.close(ctx); return nil, err }
	res, err := inst.mod.ExportedFunction(abi.ExportABIVersion).Call(ctx)
	if err != nil {
		return fail(refuse(err, "%s failed", abi.ExportABIVersion))
	}
	if got := int32(res[0]); got != abi.Version {
		return fail(refuse(nil, "module implements ABI version %d; this host supports version %d", got, abi.Version))
	}
	for _, e := range wantExports[1:] {
		if err := checkExport(m.cm, e.name, e.params, e.results); err != nil {
			return fail(err)
		}
	}
	inst.bind()
	res, err = inst.mod.ExportedFunction(abi.ExportManifest).Call(ctx)
	if err != nil {
		return fail(refuse(err, "%s failed", abi.ExportManifest))
	}
	ptr, n := abi.Unpack(res[0])
	if n == 0 || n > maxManifestBytes {
		return fail(refuse(nil, "manifest has %d bytes; want 1 to %d (did the module call module.Register?)", n, maxManifestBytes))
	}
	raw, ok := inst.mod.Memory().Read(ptr, n)
	if !ok {
		return fail(refuse(nil, "manifest pointer %d+%d is outside guest memory", ptr, n))
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m.manifest); err != nil {
		return fail(refuse(err, "manifest is not valid JSON of the manifest shape"))
	}
	if err := m.manifest.Validate(); err != nil {
		return fail(refuse(err, "bad manifest"))
	}
	if m.limits, err = m.opts.resolve(m.manifest.Limits); err != nil {
		return fail(err)
	}
	return inst, nil
}

// Manifest returns the module's manifest as the module declared it.
func (m *Module) Manifest() abi.Manifest { return m.manifest }

// Limits returns the limits in force: the manifest's, with zeros filled by host defaults.
func (m *Module) Limits() abi.Limits { return m.limits }

// SHA256 returns the hex SHA-256 of the module binary, which identifies it.
func (m *Module) SHA256() string { return m.sha }

// Size returns the size of the module binary in bytes.
func (m *Module) Size() int { return m.size }

// Stats are a module's counters.
type Stats struct {
	// Instances is the number of live instances; Idle of them wait for a call.
	Instances, Idle int
	// Calls counts calls; Failures those that ended in a Failure; Discarded the instances closed.
	Calls, Failures, Discarded int64
	// Parks counts the times the module dropped its compiled code and instances while idle.
	Parks int64
	// Parked is true while the module holds no compiled code.
	Parked bool
}

// Stats returns the module's counters.
func (m *Module) Stats() Stats {
	m.rtMu.Lock()
	defer m.rtMu.Unlock()
	return Stats{
		Instances: len(m.pool.slots), Idle: len(m.pool.idle),
		Calls: m.calls.Load(), Failures: m.failures.Load(), Discarded: m.discarded.Load(),
		Parks: m.parks.Load(), Parked: m.rt == nil,
	}
}

// Call evaluates input (a JSON document) on route number route of the manifest,
// on one pooled instance, under ctx's deadline. It returns the output JSON, an
// *abi.Error when the model refused the input, a *Failure when no answer was
// produced, or ErrRetired.
func (m *Module) Call(ctx context.Context, route int, input []byte) ([]byte, error) {
	if !m.enter() {
		return nil, ErrRetired
	}
	defer m.inflight.Done()
	m.calls.Add(1)
	if route < 0 || route >= len(m.manifest.Routes) {
		return nil, fmt.Errorf("wasmrt: route %d out of range", route)
	}
	if err := m.activate(ctx); err != nil {
		m.failures.Add(1)
		return nil, &Failure{Kind: FailCrash, Err: err}
	}
	defer m.deactivate()
	inst, err := m.pool.get(ctx, m.newInstance)
	if err != nil {
		m.failures.Add(1)
		kind := instanceFailure(ctx, err)
		return nil, &Failure{Kind: kind, Err: fmt.Errorf("waiting for an instance: %w", err)}
	}
	out, err := m.run(ctx, inst, route, input)
	var f *Failure
	if errors.As(err, &f) {
		m.failures.Add(1)
		if f.Discarded {
			m.discarded.Add(1)
			m.pool.discard(ctx, inst)
			m.log.Warn("module call failed; instance discarded", "route", m.manifest.Routes[route].Path,
				"kind", f.Kind, "error", f.Err, "guest_output", f.Detail)
			return nil, err
		}
	}
	m.pool.put(inst)
	return out, err
}

func (m *Module) enter() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.retired {
		return false
	}
	m.inflight.Add(1)
	return true
}

// Retire stops accepting calls, waits until the calls in flight have finished
// (or ctx is done) and closes the module's Runtime and instances.
func (m *Module) Retire(ctx context.Context) error {
	m.mu.Lock()
	already := m.retired
	m.retired = true
	m.mu.Unlock()
	if already {
		return nil
	}
	done := make(chan struct{})
	go func() { m.inflight.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("wasmrt: retiring %s: calls still running: %w", m.manifest.Name, ctx.Err())
	}
	m.rtMu.Lock()
	cerr := m.closeRuntime(ctx)
	m.rtMu.Unlock()
	if cerr != nil && err == nil {
		err = fmt.Errorf("wasmrt: closing %s: %w", m.manifest.Name, cerr)
	}
	return err
}

// run performs one call on inst: alloc, write input, evaluate, read the result.
func (m *Module) run(ctx context.Context, inst *instance, route int, input []byte) ([]byte, error) {
	inst.out.reset()
	cl := &callLog{base: m.log, route: m.manifest.Routes[route].Path}
	ctx = context.WithValue(ctx, callLogKey{}, cl)
	defer cl.flush()

	res, err := inst.alloc.Call(ctx, uint64(len(input)))
	if err != nil {
		return nil, m.classify(ctx, inst, err)
	}
	ptr := uint32(res[0])
	if !inst.mod.Memory().Write(ptr, input) {
		return nil, &Failure{Kind: FailBadOutput, Discarded: true, Err: fmt.Errorf("%s returned %d, outside guest memory", abi.ExportAlloc, ptr)}
	}
	res, err = inst.eval.Call(ctx, uint64(route), uint64(ptr), uint64(len(input)))
	if err != nil {
		return nil, m.classify(ctx, inst, err)
	}
	p, n := abi.Unpack(res[0])
	if n == 0 {
		return nil, &Failure{Kind: FailBadOutput, Err: errors.New("empty result")}
	}
	if int64(n)-1 > int64(m.opts.MaxOutputBytes) {
		return nil, &Failure{Kind: FailOutputTooLarge, Err: fmt.Errorf("output has %d bytes, the limit is %d", n-1, m.opts.MaxOutputBytes)}
	}
	b, ok := inst.mod.Memory().Read(p, n)
	if !ok {
		return nil, &Failure{Kind: FailBadOutput, Discarded: true, Err: fmt.Errorf("result %d+%d is outside guest memory", p, n)}
	}
	body := append([]byte(nil), b[1:]...) // copy out: guest memory is reused by the next call
	switch b[0] {
	case abi.StatusOK:
		if !json.Valid(body) {
			return nil, &Failure{Kind: FailBadOutput, Err: errors.New("output is not valid JSON")}
		}
		return body, nil
	case abi.StatusError:
		var e abi.Error
		if err := json.Unmarshal(body, &e); err != nil || !e.Kind.Valid() {
			return nil, &Failure{Kind: FailBadOutput, Err: fmt.Errorf("malformed error result %.200q", body)}
		}
		return nil, &e
	default:
		return nil, &Failure{Kind: FailBadOutput, Err: fmt.Errorf("unknown result status %d", b[0])}
	}
}

// instanceFailure names why no instance was had for a call: the caller gave
// up (canceled), the deadline passed while waiting or while a new instance
// ran its initialization (busy or timeout: the fuel check compares the clock
// itself and may see the deadline before ctx does), or instantiation failed.
func instanceFailure(ctx context.Context, err error) FailureKind {
	var ee *sys.ExitError
	switch {
	case errors.Is(err, context.Canceled), errors.As(err, &ee) && ee.ExitCode() == sys.ExitCodeContextCanceled:
		return FailCanceled
	case errors.As(err, &ee) && ee.ExitCode() == sys.ExitCodeDeadlineExceeded:
		return FailTimeout
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded):
		return FailBusy
	default:
		return FailCrash // instantiation failed
	}
}

// classify turns an error from a guest call into a Failure; the instance is
// always discarded, since its state is unknown.
func (m *Module) classify(ctx context.Context, inst *instance, err error) *Failure {
	f := &Failure{Kind: FailCrash, Discarded: true, Err: err, Detail: inst.out.String()}
	var ee *sys.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == sys.ExitCodeDeadlineExceeded,
		errors.Is(ctx.Err(), context.DeadlineExceeded):
		f.Kind = FailTimeout
	case errors.As(err, &ee) && ee.ExitCode() == sys.ExitCodeContextCanceled,
		errors.Is(ctx.Err(), context.Canceled):
		f.Kind = FailCanceled
	case strings.Contains(f.Detail, "out of memory"), inst.nearMemoryCap(m.limits.MemoryPages):
		f.Kind = FailOutOfMemory
	}
	return f
}

type callLogKey struct{}

// callLog routes a call's guest log lines to the host logger, at most
// MaxLogLinesPerCall of them. The logger tagged with the route is made on the
// first line: slog's With costs microseconds, and most calls log nothing.
type callLog struct {
	base    *slog.Logger
	route   string
	log     *slog.Logger
	lines   int
	dropped int
}

func (c *callLog) logger() *slog.Logger {
	if c.log == nil {
		c.log = c.base
		if c.route != "" {
			c.log = c.base.With("route", c.route)
		}
	}
	return c.log
}

func (c *callLog) flush() {
	if c.dropped > 0 {
		c.logger().Warn("guest log lines dropped", "dropped", c.dropped, "limit", MaxLogLinesPerCall)
	}
}

// hostLog implements toxgate.log(level, ptr, len).
func (m *Module) hostLog(ctx context.Context, mod api.Module, stack []uint64) {
	level, ptr, n := int32(stack[0]), uint32(stack[1]), uint32(stack[2])
	cl, _ := ctx.Value(callLogKey{}).(*callLog)
	if cl == nil {
		cl = &callLog{base: m.log}
	}
	if cl.lines >= MaxLogLinesPerCall {
		cl.dropped++
		return
	}
	cl.lines++
	line, ok := mod.Memory().Read(ptr, min(n, MaxLogLineBytes))
	if !ok {
		return
	}
	cl.logger().Log(ctx, slog.Level(level), string(line), "source", "guest")
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func typeNames(ts []api.ValueType) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = api.ValueTypeName(t)
	}
	return "(" + strings.Join(names, ",") + ")"
}
