// Package pluginhost runs the gateway's action plugins (such as the catalog)
// as go-plugin child processes: it starts them, routes each action to the
// plugin that declared it, health-checks them, restarts a crashed plugin with
// back-off (answering a CKAN-shaped 503 at once while it is down), and hot
// reloads a plugin on demand or when its binary changes: the new process is
// started and pinged, waited for until it has loaded (a plugin that declares
// contract.ActionReady), swapped in atomically, and the old one stops after
// its in-flight calls have finished. A starting plugin that loads after its
// handshake serves at once, answering its own 503 while it loads; Ready
// reports it as loading meanwhile.
package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/prometheus/client_golang/prometheus"

	"toxgate/plugins/contract"
	"toxgate/plugins/contract/goplugin"
)

// Identity is the authenticated caller passed with each action call.
type Identity = contract.Identity

// PluginConfig names one plugin program.
type PluginConfig struct {
	// Name identifies the plugin (e.g. "catalog"); used by Reload.
	Name string
	// Path is the plugin binary.
	Path string
	// SHA256 is the expected hex checksum of the binary; empty skips the check.
	SHA256 string
}

// Config configures a Host. Zero durations take the defaults in brackets.
type Config struct {
	// Plugins are started in order; on duplicate action names the first wins.
	Plugins []PluginConfig
	// HealthInterval is how often each plugin is pinged [5s].
	HealthInterval time.Duration
	// RestartBackoff is the first wait before restarting a crashed plugin,
	// doubled after each failed start [250ms].
	RestartBackoff time.Duration
	// MaxRestartBackoff caps the restart wait [30s].
	MaxRestartBackoff time.Duration
	// WatchBinaries reloads a plugin when its binary changes on disk.
	WatchBinaries bool
	// WatchInterval is how often binaries are checked [2s].
	WatchInterval time.Duration
	// MongoURI and MongoDatabase are handed to plugins (environment
	// variables TOXGATE_MONGODB_URI and TOXGATE_MONGODB_DATABASE).
	MongoURI, MongoDatabase string
	// Transport is "netrpc" [default] or "grpc".
	Transport string
	// CallTimeout bounds one action call [60s].
	CallTimeout time.Duration
	// StartTimeout bounds a plugin's start and handshake
	// [contract.StartTimeout].
	StartTimeout time.Duration
	// LoadTimeout bounds a plugin's load after its handshake, until
	// contract.ActionReady answers [contract.LoadTimeout]: a starting
	// process still loading then is restarted, a replacing one killed
	// (the old one keeps serving).
	LoadTimeout time.Duration
	// SiteURL is the public base URL (empty: CKAN's answers carry none).
	SiteURL string
	// LogLevel is passed to plugins (TOXGATE_LOG_LEVEL) [info].
	LogLevel string
	// Settings is the configuration message every plugin receives
	// (contract.EnvSettings), built by the gateway from its configuration
	// (config.Config.PluginSettings).
	Settings contract.Settings
	// Env holds extra KEY=value variables for every plugin (benchmarks
	// set TOXGATE_CATALOG_CPUPROFILE).
	Env []string
	// Users is the user directory served to the plugins over go-plugin's
	// broker (goplugin.HostUsers on their side); nil: none.
	Users contract.Users
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.HealthInterval, 5*time.Second)
	def(&c.RestartBackoff, 250*time.Millisecond)
	def(&c.MaxRestartBackoff, 30*time.Second)
	def(&c.WatchInterval, 2*time.Second)
	def(&c.CallTimeout, 60*time.Second)
	def(&c.StartTimeout, contract.StartTimeout)
	def(&c.LoadTimeout, contract.LoadTimeout)
	if c.Transport == "" {
		c.Transport = contract.TransportNetRPC
	}
}

// Action is an action declared by a plugin.
type Action struct {
	// Plugin is the name of the plugin serving it.
	Plugin string
	contract.ActionSpec
}

// Host supervises the plugins.
type Host struct {
	cfg      Config
	settings string // cfg.Settings, encoded once
	log      *slog.Logger
	metrics  *metrics
	plugins  []*managed
	routes   atomic.Pointer[map[string]route]
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

type route struct {
	m    *managed
	spec contract.ActionSpec
}

// New checks cfg and prepares a Host; Start launches the plugins. reg may be
// nil (no metrics registered).
func New(cfg Config, logger *slog.Logger, reg prometheus.Registerer) (*Host, error) {
	cfg.defaults()
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.Transport != contract.TransportGRPC && cfg.Transport != contract.TransportNetRPC {
		return nil, fmt.Errorf("pluginhost: unknown transport %q", cfg.Transport)
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("pluginhost: %w", err)
	}
	settings, err := contract.EncodeSettings(cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("pluginhost: %w", err)
	}
	h := &Host{cfg: cfg, settings: settings, log: logger.With("component", "pluginhost"), metrics: m}
	seen := map[string]bool{}
	for _, pc := range cfg.Plugins {
		if pc.Name == "" || pc.Path == "" {
			return nil, errors.New("pluginhost: a plugin needs a name and a path")
		}
		if seen[pc.Name] {
			return nil, fmt.Errorf("pluginhost: plugin %q configured twice", pc.Name)
		}
		seen[pc.Name] = true
		var sum []byte
		if pc.SHA256 != "" {
			if sum, err = hex.DecodeString(pc.SHA256); err != nil || len(sum) != sha256.Size {
				return nil, fmt.Errorf("pluginhost: plugin %q: bad sha256 %q", pc.Name, pc.SHA256)
			}
		}
		h.plugins = append(h.plugins, &managed{h: h, cfg: pc, sum: sum, wake: make(chan struct{}, 1),
			log: h.log.With("plugin", pc.Name), relay: logger.With("plugin", pc.Name)})
	}
	empty := map[string]route{}
	h.routes.Store(&empty)
	return h, nil
}

// Start launches every plugin and its supervisor. It fails if a plugin
// cannot be started now; supervisors keep retrying in the background until
// Close either way.
func (h *Host) Start(ctx context.Context) error {
	h.ctx, h.cancel = context.WithCancel(context.Background())
	var errs []error
	for _, m := range h.plugins {
		if err := m.start(ctx); err != nil {
			errs = append(errs, err)
			m.setDown(err)
		}
	}
	h.rebuildRoutes()
	for _, m := range h.plugins {
		h.wg.Add(1)
		go m.supervise()
	}
	if h.cfg.WatchBinaries {
		h.wg.Add(1)
		go h.watch()
	}
	return errors.Join(errs...)
}

// Close stops supervision and every plugin, waiting for in-flight calls
// until ctx ends.
func (h *Host) Close(ctx context.Context) error {
	if h.cancel != nil {
		h.cancel()
	}
	h.wg.Wait()
	for _, m := range h.plugins {
		m.mu.Lock()
		if inst := m.cur.Swap(nil); inst != nil {
			inst.retire(ctx)
		}
		m.mu.Unlock()
		h.metrics.up.WithLabelValues(m.cfg.Name).Set(0)
	}
	return nil
}

// Ready is nil when every plugin is running and loaded, else an error
// naming the first plugin that is not ("plugin catalog is loading" while
// it loads).
func (h *Host) Ready() error {
	for _, m := range h.plugins {
		if inst := m.cur.Load(); inst != nil && !inst.isReady() {
			return fmt.Errorf("plugin %s is loading", m.cfg.Name)
		}
		if m.cur.Load() == nil {
			m.mu.Lock()
			last := m.lastErr
			m.mu.Unlock()
			if last != nil {
				return fmt.Errorf("plugin %s is not running: %w", m.cfg.Name, last)
			}
			return fmt.Errorf("plugin %s is not running", m.cfg.Name)
		}
	}
	return nil
}

// notRunning names a plugin that has no running process (it failed to
// start, or waits to be restarted), or is "" when every plugin runs.
func (h *Host) notRunning() string {
	for _, m := range h.plugins {
		if m.cur.Load() == nil {
			return m.cfg.Name
		}
	}
	return ""
}

// WaitReady waits until every plugin runs and has loaded, or ctx ends.
func (h *Host) WaitReady(ctx context.Context) error {
	for _, m := range h.plugins {
		for {
			inst := m.cur.Load()
			if inst == nil {
				return fmt.Errorf("plugin %s is not running", m.cfg.Name)
			}
			select {
			case <-inst.ready:
			case <-inst.gone:
				continue // crashed or replaced: wait for the next process
			case <-ctx.Done():
				return fmt.Errorf("plugin %s: %w", m.cfg.Name, ctx.Err())
			}
			break
		}
	}
	return nil
}

// Reload replaces plugin name with a fresh process of its binary: start,
// describe, ping, swap, then stop the old process once its in-flight calls
// are done (or ctx ends). On failure the old process keeps serving.
func (h *Host) Reload(ctx context.Context, name string) error {
	for _, m := range h.plugins {
		if m.cfg.Name == name {
			return m.reload(ctx)
		}
	}
	return fmt.Errorf("pluginhost: no plugin named %q", name)
}

// Actions lists the declared actions, by name.
func (h *Host) Actions() []Action {
	routes := *h.routes.Load()
	out := make([]Action, 0, len(routes))
	for _, r := range routes {
		if r.spec.Internal {
			continue
		}
		out = append(out, Action{Plugin: r.m.cfg.Name, ActionSpec: r.spec})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// rebuildRoutes maps each declared action to its plugin, from the last
// manifest of every plugin (kept while a plugin is down, so its actions
// answer 503 rather than "unknown").
func (h *Host) rebuildRoutes() {
	routes := map[string]route{}
	for _, m := range h.plugins {
		m.mu.Lock()
		specs := m.actions
		m.mu.Unlock()
		for _, a := range specs {
			if prev, dup := routes[a.Name]; dup {
				h.log.Warn("action declared by two plugins; first wins", "action", a.Name, "kept", prev.m.cfg.Name, "ignored", m.cfg.Name)
				continue
			}
			routes[a.Name] = route{m: m, spec: a}
		}
	}
	h.routes.Store(&routes)
}

// managed is one configured plugin and its current process.
type managed struct {
	h   *Host
	cfg PluginConfig
	sum []byte
	log *slog.Logger
	// relay logs the plugin's own lines: the plugin's name and the line's
	// attributes, without the host's component.
	relay *slog.Logger
	cur   atomic.Pointer[instance]
	wake  chan struct{}

	mu      sync.Mutex // serializes start, reload and restart
	actions []contract.ActionSpec
	lastErr error
	binStat binStat
}

// instance is one running plugin process.
type instance struct {
	client *plugin.Client
	rpc    contract.ActionPlugin
	proto  plugin.ClientProtocol
	pid    int
	// sockDir is the 0700 directory of the process's RPC socket, removed
	// once the process is stopped (also after a crash or kill -9).
	sockDir string

	// ready is closed once the process has loaded (at once for a plugin
	// that does not declare contract.ActionReady); gone once it is retired.
	ready    chan struct{}
	gone     chan struct{}
	loadOnce sync.Once

	mu       sync.Mutex
	inflight int
	retired  bool
	idle     chan struct{}
}

// isReady reports whether the process has loaded.
func (i *instance) isReady() bool {
	select {
	case <-i.ready:
		return true
	default:
		return false
	}
}

// setReady records that the process has loaded.
func (i *instance) setReady() { i.loadOnce.Do(func() { close(i.ready) }) }

// acquire registers a call on the instance; false once it is retired.
func (i *instance) acquire() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.retired {
		return false
	}
	i.inflight++
	return true
}

func (i *instance) release() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.inflight--
	if i.retired && i.inflight == 0 && i.idle != nil {
		close(i.idle)
		i.idle = nil
	}
}

// retire refuses new calls, waits for in-flight ones (or ctx), then stops
// the process.
func (i *instance) retire(ctx context.Context) {
	i.mu.Lock()
	if !i.retired {
		close(i.gone)
	}
	i.retired = true
	var wait chan struct{}
	if i.inflight > 0 {
		wait = make(chan struct{})
		i.idle = wait
	}
	i.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
		}
	}
	i.client.Kill()
	_ = os.RemoveAll(i.sockDir)
}

// launch starts a new process of the plugin binary and checks it answers;
// replacing tells it that a running process serves until it is ready.
func (m *managed) launch(ctx context.Context, replacing bool) (*instance, *contract.Manifest, error) {
	cfg := m.h.cfg
	cmd := exec.Command(m.cfg.Path)
	cmd.Env = []string{
		contract.EnvMongoURI + "=" + cfg.MongoURI,
		contract.EnvMongoDatabase + "=" + cfg.MongoDatabase,
		contract.EnvTransport + "=" + cfg.Transport,
		contract.EnvLogLevel + "=" + cfg.LogLevel,
		contract.EnvSettings + "=" + m.h.settings,
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	}
	if replacing {
		cmd.Env = append(cmd.Env, contract.EnvReplacing+"=1")
	}
	cmd.Env = append(cmd.Env, cfg.Env...)
	// The plugin listens on a Unix socket in a directory only this user
	// can enter, removed when the process ends (see instance.retire).
	sockDir, err := os.MkdirTemp("", "toxgate-plugin-")
	if err != nil {
		return nil, nil, fmt.Errorf("plugin %s: socket directory: %w", m.cfg.Name, err)
	}
	cmd.Env = append(cmd.Env, plugin.EnvUnixSocketDir+"="+sockDir)
	cc := &plugin.ClientConfig{
		HandshakeConfig:  goplugin.Handshake,
		Plugins:          goplugin.ClientPlugins(m.h.cfg.Users),
		Cmd:              cmd,
		AllowedProtocols: goplugin.Protocols(cfg.Transport),
		GRPCDialOptions:  goplugin.GRPCDialOptions(),
		StartTimeout:     cfg.StartTimeout,
		SkipHostEnv:      true,
		Logger:           hclog.New(&hclog.LoggerOptions{Level: hclog.Off}),
		Stderr:           &logWriter{log: m.relay},
	}
	if m.sum != nil {
		cc.SecureConfig = &plugin.SecureConfig{Checksum: m.sum, Hash: sha256.New()}
	}
	client := plugin.NewClient(cc)
	fail := func(err error) (*instance, *contract.Manifest, error) {
		client.Kill()
		_ = os.RemoveAll(sockDir)
		return nil, nil, fmt.Errorf("plugin %s: %w", m.cfg.Name, err)
	}
	proto, err := client.Client()
	if err != nil {
		return fail(fmt.Errorf("start %s: %w", m.cfg.Path, err))
	}
	raw, err := proto.Dispense(goplugin.PluginKey)
	if err != nil {
		return fail(fmt.Errorf("dispense: %w", err))
	}
	rpc, ok := raw.(contract.ActionPlugin)
	if !ok {
		return fail(fmt.Errorf("dispensed %T, not an action plugin", raw))
	}
	if err := proto.Ping(); err != nil {
		return fail(fmt.Errorf("ping: %w", err))
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	manifest, err := rpc.Describe(dctx)
	if err != nil {
		return fail(err)
	}
	inst := &instance{client: client, rpc: rpc, proto: proto, sockDir: sockDir, ready: make(chan struct{}), gone: make(chan struct{})}
	if rc := client.ReattachConfig(); rc != nil {
		inst.pid = rc.Pid
	}
	if !declaresReady(manifest) {
		inst.setReady()
	}
	return inst, manifest, nil
}

// start launches the plugin when it is not running.
func (m *managed) start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur.Load() != nil {
		return nil
	}
	m.binStat, _ = statBinary(m.cfg.Path)
	inst, manifest, err := m.launch(ctx, false)
	if err != nil {
		m.lastErr = err
		return err
	}
	m.actions, m.lastErr = manifest.Actions, nil
	m.cur.Store(inst)
	m.h.metrics.up.WithLabelValues(m.cfg.Name).Set(1)
	m.log.Info("plugin started", "pid", inst.pid, "version", manifest.Version, "actions", len(manifest.Actions), "socket_dir", inst.sockDir,
		"loading", !inst.isReady())
	if !inst.isReady() {
		m.h.metrics.loading.WithLabelValues(m.cfg.Name).Set(1)
		go m.watchLoad(inst)
	}
	return nil
}

// watchLoad waits for a started process to load; one that fails to
// within Config.LoadTimeout is taken out of service and restarted.
func (m *managed) watchLoad(inst *instance) {
	ctx, cancel := context.WithTimeout(m.h.ctx, m.h.cfg.LoadTimeout)
	defer cancel()
	start := time.Now()
	err := m.awaitLoad(ctx, inst)
	m.h.metrics.loading.WithLabelValues(m.cfg.Name).Set(0)
	if err != nil {
		if m.h.ctx.Err() == nil {
			m.crashed(inst, fmt.Errorf("not loaded: %w", err))
		}
		return
	}
	m.loaded(inst, time.Since(start))
}

// loaded records that inst has loaded, took after its handshake.
func (m *managed) loaded(inst *instance, took time.Duration) {
	m.h.metrics.loadSeconds.WithLabelValues(m.cfg.Name).Set(took.Seconds())
	m.log.Info("plugin loaded", "pid", inst.pid, "took", took)
}

func (m *managed) reload(ctx context.Context) error {
	m.mu.Lock()
	st, _ := statBinary(m.cfg.Path)
	inst, manifest, err := m.launch(ctx, m.cur.Load() != nil)
	if err == nil && !inst.isReady() {
		// the old process serves until the new one has loaded; the wait
		// is bounded by LoadTimeout and the host's life, not by the
		// caller's deadline (as the start of the process before it)
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.h.cfg.LoadTimeout)
		stop := context.AfterFunc(m.h.ctx, cancel)
		start := time.Now()
		if err = m.awaitLoad(lctx, inst); err != nil {
			inst.retire(context.Background())
			err = fmt.Errorf("plugin %s: not loaded: %w", m.cfg.Name, err)
		} else {
			m.loaded(inst, time.Since(start))
		}
		stop()
		cancel()
	}
	if err != nil {
		m.mu.Unlock()
		m.h.metrics.reloads.WithLabelValues(m.cfg.Name, "failed").Inc()
		m.log.Error("plugin reload failed; the running process keeps serving", "err", err)
		return err
	}
	m.warmUp(ctx, inst, manifest)
	m.binStat = st
	m.actions, m.lastErr = manifest.Actions, nil
	old := m.cur.Swap(inst)
	m.mu.Unlock()
	m.h.rebuildRoutes()
	m.h.metrics.up.WithLabelValues(m.cfg.Name).Set(1)
	m.h.metrics.reloads.WithLabelValues(m.cfg.Name, "ok").Inc()
	m.log.Info("plugin reloaded", "pid", inst.pid, "version", manifest.Version, "socket_dir", inst.sockDir)
	if old != nil {
		old.retire(ctx)
	}
	return nil
}

// warmUp lets a new process catch up with the store before it takes
// traffic, while the old process keeps serving: a plugin that keeps state
// (the catalog holds everything in memory and re-reads what changed since
// its load, which writers go on changing meanwhile) answers its first
// calls only after that work. It sends the manifest's first
// side-effect-free action until one answers within warmFast, at most
// warmTries times; a plugin without such an action is not warmed.
func (m *managed) warmUp(ctx context.Context, inst *instance, manifest *contract.Manifest) {
	action := ""
	for _, a := range manifest.Actions {
		if a.GET && a.Name != contract.ActionReady && (action == "" || a.Name < action) {
			action = a.Name
		}
	}
	if action == "" {
		return
	}
	start := time.Now()
	for try := 1; try <= warmTries; try++ {
		cctx, cancel := context.WithTimeout(ctx, m.h.cfg.CallTimeout)
		t0 := time.Now()
		_, err := inst.rpc.Call(cctx, &contract.Request{Action: action, Method: "GET", Deadline: time.Now().Add(m.h.cfg.CallTimeout)})
		took := time.Since(t0)
		cancel()
		if err != nil || took < warmFast {
			m.log.Info("plugin warmed up", "pid", inst.pid, "calls", try, "took", time.Since(start), "err", err)
			return
		}
	}
	m.log.Warn("plugin still slow after warm-up; swapping it in anyway", "pid", inst.pid, "took", time.Since(start))
}

// Warm-up of a reloaded plugin (see warmUp).
const (
	warmFast  = 20 * time.Millisecond
	warmTries = 50
)

// setDown records that the plugin is not running.
func (m *managed) setDown(err error) {
	m.mu.Lock()
	m.lastErr = err
	m.mu.Unlock()
	m.h.metrics.up.WithLabelValues(m.cfg.Name).Set(0)
}

// crashed takes inst out of service if it is still current, and wakes the
// supervisor to restart the plugin.
func (m *managed) crashed(inst *instance, why error) {
	if m.cur.CompareAndSwap(inst, nil) {
		m.log.Error("plugin is down", "pid", inst.pid, "err", why)
		m.setDown(why)
		go inst.retire(context.Background())
		m.h.metrics.restarts.WithLabelValues(m.cfg.Name).Inc()
	}
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// check pings the current process; a failure marks it crashed.
func (m *managed) check() {
	inst := m.cur.Load()
	if inst == nil {
		return
	}
	if inst.client.Exited() {
		m.crashed(inst, errors.New("process exited"))
		return
	}
	if err := inst.proto.Ping(); err != nil {
		m.crashed(inst, fmt.Errorf("ping: %w", err))
	}
}

// supervise health-checks the plugin and restarts it with back-off while
// it is down.
func (m *managed) supervise() {
	defer m.h.wg.Done()
	backoff := m.h.cfg.RestartBackoff
	tick := time.NewTicker(m.h.cfg.HealthInterval)
	defer tick.Stop()
	for {
		if m.cur.Load() == nil {
			if err := m.start(m.h.ctx); err != nil {
				m.log.Error("plugin restart failed", "err", err, "retry_in", backoff)
				select {
				case <-m.h.ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(backoff*2, m.h.cfg.MaxRestartBackoff)
				continue
			}
			m.h.rebuildRoutes()
			backoff = m.h.cfg.RestartBackoff
		}
		select {
		case <-m.h.ctx.Done():
			return
		case <-tick.C:
			m.check()
		case <-m.wake:
			m.check()
		}
	}
}

// Status describes one plugin for operators.
type Status struct {
	// Name is the plugin's name.
	Name string `json:"name"`
	// Up is true while a process is serving.
	Up bool `json:"up"`
	// Loading is true while the serving process loads (its actions
	// answer 503 meanwhile).
	Loading bool `json:"loading,omitempty"`
	// PID is the serving process id (0 when down).
	PID int `json:"pid"`
	// Protocol is the RPC transport negotiated with the serving process,
	// netrpc or grpc ("" when down).
	Protocol string `json:"protocol,omitempty"`
	// Error is the last start or health failure ("" when up).
	Error string `json:"error,omitempty"`
}

// Status reports every plugin.
func (h *Host) Status() []Status {
	out := make([]Status, 0, len(h.plugins))
	for _, m := range h.plugins {
		s := Status{Name: m.cfg.Name}
		if inst := m.cur.Load(); inst != nil {
			s.Up, s.PID, s.Protocol, s.Loading = true, inst.pid, string(inst.client.Protocol()), !inst.isReady()
		} else {
			m.mu.Lock()
			if m.lastErr != nil {
				s.Error = m.lastErr.Error()
			}
			m.mu.Unlock()
		}
		out = append(out, s)
	}
	return out
}
