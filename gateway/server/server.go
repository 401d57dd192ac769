// Package server assembles the gateway: the store, the HTTP core, liveness
// and readiness, metrics, and the parts that serve the catalog and models.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"toxgate/catalog/filestore"
	"toxgate/gateway/catalogclient"
	"toxgate/gateway/config"
	"toxgate/gateway/filehttp"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
	"toxgate/gateway/jobs"
	"toxgate/gateway/modulehost"
	"toxgate/gateway/pluginhost"
	"toxgate/gateway/store"
	"toxgate/gateway/tusup"
	"toxgate/gateway/web"
	"toxgate/plugins/contract"
)

// ReadyCheck reports whether one part of the gateway is ready (nil) or why not.
type ReadyCheck func(ctx context.Context) error

// App is a running gateway.
type App struct {
	cfg       config.Config
	log       *slog.Logger
	accessLog *slog.Logger
	version   string
	started   time.Time
	// testRoutes is Options.EnableTestRoutes (it also passes the test
	// hooks on to the plugins, see pluginTestEnv).
	testRoutes bool

	store   *store.Store
	metrics *httpcore.Metrics
	router  *router.Router
	srv     *fasthttp.Server

	mu        sync.Mutex
	checks    []namedCheck
	closers   []namedCloser
	fallbacks []Fallback
	reloaders []namedReloader
	banner    []string
	auth      Authenticator
	// clientIPs finds a request's client behind server.trusted_proxies.
	clientIPs clientIPs

	coreActions   map[string]CoreAction
	pluginActions ActionHandler
	bodies        *httpcore.BodyBudget
	// sessionCaller resolves the web session cookie, for the GET routes a
	// browser follows (file downloads); set by attachIdentity.
	sessionCaller func(*fasthttp.RequestCtx) identity.Caller
	bodyRejected  *prometheus.CounterVec
	plugins       *pluginhost.Host
	// catalog is the one client of the catalog plugin (web, DCAT, jobs,
	// models' datasets, user counts); made by attachPlugins.
	catalog *catalogclient.Client
	// identity is the identity service; set by attachIdentity.
	identity *identity.Service
	modules  *modulehost.Host
	// roleWeights weigh model callers' fair shares (modules.role_weights).
	roleWeights map[string]float64
	files       *filehttp.Handler
	// fileStore is the catalog's file store, opened once (attachFiles)
	// and shared by uploads, downloads, scoring jobs and modelcat.
	fileStore *filestore.Store
	// users is the identity store's user directory, served to the plugins
	// (nil until identity is attached).
	users contract.Users
	// pages are the web pages; made by attachWeb, the last part, and read
	// by the job and model routes on requests only.
	pages *web.Web
	// adminGuard is the admin API's sysadmin check; set by attachIdentity.
	adminGuard func(next func(*fasthttp.RequestCtx, identity.Caller)) fasthttp.RequestHandler
	// jobs runs scoring jobs; made by attachJobs.
	jobs *jobs.Service
	// peers is this gateway's heartbeat and the other gateways of the
	// store it sees.
	peers *peers
}

// Fallback serves a request no static route matched and reports whether it
// did (model paths are resolved this way from a registry that changes at run
// time, because router routes cannot be added while serving).
type Fallback func(ctx *fasthttp.RequestCtx) bool

type namedCheck struct {
	name  string
	check ReadyCheck
	// core parts decide /readyz's status code with server.ready_status
	// core; the others (the models) only with all.
	core bool
}

type namedCloser struct {
	name  string
	close func(context.Context) error
}

// Options are the inputs of New besides the configuration.
type Options struct {
	Version string
	Logger  *slog.Logger
	// AccessLog receives the access log (nil: Logger). Pass a logger over a
	// BufferedWriter so that one line per request does not cost a syscall.
	AccessLog *slog.Logger
	// EnableTestRoutes adds routes used only by the test suite
	// (GET /debug/panic, GET /debug/slow?ms=).
	EnableTestRoutes bool
}

// New opens the store and builds the HTTP core. Parts that serve the
// catalog and models are attached with the Attach* methods before Serve.
func New(ctx context.Context, cfg config.Config, opts Options) (*App, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	a := &App{cfg: cfg, log: log, accessLog: opts.AccessLog, version: opts.Version, started: time.Now(), auth: anonymousOnly{},
		clientIPs: newClientIPs(cfg.Server.TrustedProxies)}
	if a.accessLog == nil {
		a.accessLog = log
	}
	st, err := store.Open(ctx, store.Options{
		URI: cfg.MongoDB.URI, DataDir: cfg.MongoDB.DataDir, Database: cfg.MongoDB.Database,
		Backend: cfg.Store.Backend, PostgresURL: cfg.Store.PostgresURL,
		MaxPoolSize: uint64(cfg.MongoDB.MaxPoolSize), Logger: quietLogger(log),
	})
	if err != nil {
		return nil, err
	}
	a.store = st
	if st.Embedded() {
		log.Info("embedded store started", "uri", st.URI(), "backend", st.Backend(), "data_dir", cfg.MongoDB.DataDir)
	} else {
		log.Info("connected to MongoDB", "database", cfg.MongoDB.Database)
	}
	a.AddReadyCheck("store", func(ctx context.Context) error { return a.store.Ping(ctx) })
	a.metrics = httpcore.NewMetrics(opts.Version)
	a.bodies = httpcore.NewBodyBudget(int64(cfg.Server.MaxBodyMemory))
	a.bodyRejected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toxgate_http_bodies_rejected_total",
		Help: "Request bodies refused before the handler: too_large (413) or memory (503, server.max_body_memory)."}, []string{"reason"})
	a.peers = startPeers(st.DB(), cfg.Server.Addr, cfg.Server.PublicURL, opts.Version, log)
	a.AddCloser("peers", a.peers.close)
	backends := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "toxgate_backend_info",
		Help: "The backends this gateway uses: store (sqlite, postgresql or mongodb) and files (dir, s3 or mongodb); always 1."},
		[]string{"part", "backend"})
	backends.WithLabelValues("store", st.Backend()).Set(1)
	backends.WithLabelValues("files", cfg.Files.Backend).Set(1)
	a.metrics.Registry().MustRegister(backends, a.peers.collector())
	a.metrics.Registry().MustRegister(a.bodyRejected, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "toxgate_http_body_bytes_in_use",
		Help: "Bytes of request bodies held in memory now (bounded by server.max_body_memory)."}, func() float64 { return float64(a.bodies.InUse()) }))

	r := router.New()
	r.SaveMatchedRoutePath = true
	r.HandleMethodNotAllowed = true
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		httpcore.WriteError(ctx, fasthttp.StatusMethodNotAllowed, "method_not_allowed",
			"method "+string(ctx.Method())+" not allowed on "+string(ctx.Path()), "")
	}
	r.NotFound = a.notFound
	a.router = r
	a.testRoutes = opts.EnableTestRoutes
	a.routes(opts.EnableTestRoutes)
	return a, nil
}

// quietLogger keeps only the embedded store's errors.
func quietLogger(log *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{Handler: log.Handler(), min: slog.LevelError})
}

type levelFilter struct {
	slog.Handler
	min slog.Level
	// with applies the WithAttrs/WithGroup calls made so far. They are
	// applied only to records that pass the filter: slog's handlers format
	// attributes when With is called, and the embedded store attaches each
	// SQL statement's arguments (a whole file chunk) to its logger.
	with []func(slog.Handler) slog.Handler
}

func (l levelFilter) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.min && l.Handler.Enabled(ctx, lv)
}

func (l levelFilter) Handle(ctx context.Context, r slog.Record) error {
	h := l.Handler
	for _, w := range l.with {
		h = w(h)
	}
	return h.Handle(ctx, r)
}

func (l levelFilter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return l.plus(func(h slog.Handler) slog.Handler { return h.WithAttrs(attrs) })
}

func (l levelFilter) WithGroup(name string) slog.Handler {
	return l.plus(func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}

func (l levelFilter) plus(w func(slog.Handler) slog.Handler) levelFilter {
	return levelFilter{Handler: l.Handler, min: l.min, with: append(l.with[:len(l.with):len(l.with)], w)}
}

// Config returns the configuration the gateway runs with.
func (a *App) Config() config.Config { return a.cfg }

// Logger is the gateway's logger.
func (a *App) Logger() *slog.Logger { return a.log }

// Store is the shared MongoDB connection pool.
func (a *App) Store() *store.Store { return a.store }

// Router is the gateway's router, for parts to register routes before Serve.
func (a *App) Router() *router.Router { return a.router }

// Metrics is the gateway's metrics registry holder.
func (a *App) Metrics() *httpcore.Metrics { return a.metrics }

// AddReadyCheck adds a core part to /readyz.
func (a *App) AddReadyCheck(name string, c ReadyCheck) { a.addReadyPart(name, true, c) }

// addReadyPart adds a part to /readyz; a part that is not core (the
// models) decides its status code only with server.ready_status all.
func (a *App) addReadyPart(name string, core bool, c ReadyCheck) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.checks = append(a.checks, namedCheck{name, c, core})
}

// AddCloser registers a part to stop at shutdown, after the HTTP server and
// before the store; closers run in reverse order of registration.
func (a *App) AddCloser(name string, c func(context.Context) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closers = append(a.closers, namedCloser{name, c})
}

// AddFallback adds a handler tried, in order, for requests that match no route.
func (a *App) AddFallback(f Fallback) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fallbacks = append(a.fallbacks, f)
}

// Handler is the whole middleware chain around the router.
func (a *App) Handler() fasthttp.RequestHandler {
	mws := []httpcore.Middleware{httpcore.RequestIDs()}
	if a.cfg.Log.Access {
		mws = append(mws, httpcore.AccessLog(a.accessLog))
	}
	mws = append(mws, a.metrics.Middleware(), httpcore.Recover(a.log), httpcore.RefuseAmbiguousFraming(),
		httpcore.Bodies(a.bodyPolicy, a.bodies, func(reason string) { a.bodyRejected.WithLabelValues(reason).Inc() }))
	return httpcore.Chain(a.router.Handler, mws...)
}

// Serve serves HTTP on ln until Shutdown.
func (a *App) Serve(ln net.Listener) error {
	s := a.cfg.Server
	a.srv = &fasthttp.Server{
		Handler:               a.Handler(),
		ErrorHandler:          httpcore.ServerErrorHandler,
		Name:                  "toxgate",
		ReadTimeout:           s.ReadTimeout,
		WriteTimeout:          s.WriteTimeout,
		IdleTimeout:           s.IdleTimeout,
		MaxRequestBodySize:    s.MaxBodyBytes,
		ReadBufferSize:        s.MaxHeaderBytes,
		Concurrency:           s.MaxConns,
		CloseOnShutdown:       true,
		NoDefaultDate:         false,
		NoDefaultServerHeader: false,
		Logger:                fasthttpLogger{a.log},
		// Bodies are streamed: nothing is allocated for a declared length,
		// and each route's limit and the memory budget apply as bytes come
		// (httpcore.Bodies); uploads go to the file store as they arrive.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
	}
	a.log.Info("serving", "addr", ln.Addr().String(), "version", a.version)
	err := a.srv.Serve(ln)
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// bodyPolicy is each request's body limit: module uploads (read after the
// sysadmin check) and resource uploads (streamed into the file store after
// the caller is authenticated) have their own; every other body is read
// before the handler, within server.max_body_bytes.
func (a *App) bodyPolicy(ctx *fasthttp.RequestCtx) httpcore.BodyPolicy {
	switch {
	case ctx.IsPost() && string(ctx.Path()) == "/admin/modules":
		return httpcore.BodyPolicy{Limit: int64(max(a.cfg.Modules.MaxUploadBytes, a.cfg.Server.MaxBodyBytes)), Deferred: true}
	case filehttp.IsUpload(ctx) || web.IsUpload(ctx):
		return httpcore.BodyPolicy{Limit: int64(a.cfg.Catalog.MaxResourceBytes) + filehttp.FormSlack, Deferred: true}
	case tusup.IsUpload(ctx):
		return httpcore.BodyPolicy{Limit: int64(a.cfg.Catalog.MaxResourceBytes), Deferred: true}
	}
	return httpcore.BodyPolicy{Limit: int64(a.cfg.Server.MaxBodyBytes)}
}

// adminWithBody is AdminOnly for routes with deferred bodies: the body is
// read (within the route's limit and the memory budget) only after the
// caller proved to be a sysadmin.
func (a *App) adminWithBody(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return a.AdminOnly(func(ctx *fasthttp.RequestCtx) {
		held, ok := httpcore.ReadBody(ctx, a.bodyPolicy(ctx).Limit, a.bodies, func(reason string) { a.bodyRejected.WithLabelValues(reason).Inc() })
		defer httpcore.ReleaseBody(a.bodies, held)
		if ok {
			h(ctx)
		}
	})
}

type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Debug("fasthttp: " + fmt.Sprintf(format, args...))
}

// Shutdown stops accepting connections, lets in-flight requests finish
// within ctx, then stops the attached parts and the store.
func (a *App) Shutdown(ctx context.Context) error {
	var errs []error
	if a.srv != nil {
		if err := a.srv.ShutdownWithContext(ctx); err != nil {
			errs = append(errs, fmt.Errorf("http shutdown: %w", err))
		}
	}
	a.mu.Lock()
	closers := append([]namedCloser(nil), a.closers...)
	a.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i].close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", closers[i].name, err))
		}
	}
	if err := a.store.Close(ctx); err != nil {
		errs = append(errs, err)
	} else {
		a.log.Info("store closed")
	}
	return errors.Join(errs...)
}

// uptime in whole seconds, for IsAlive.
func (a *App) uptime() int64 { return int64(time.Since(a.started) / time.Second) }

func (a *App) isAlive(ctx *fasthttp.RequestCtx) {
	buf := make([]byte, 0, 96)
	buf = append(buf, `{"alive":true,"version":`...)
	buf = strconv.AppendQuote(buf, a.version)
	buf = append(buf, `,"uptime_s":`...)
	buf = strconv.AppendInt(buf, a.uptime(), 10)
	buf = append(buf, '}')
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBody(buf)
}

// readiness runs every check with a short deadline: each part's status
// ("ok" or why not) and whether it is core.
func (a *App) readiness(ctx context.Context) (parts map[string]string, core map[string]bool) {
	a.mu.Lock()
	checks := append([]namedCheck(nil), a.checks...)
	a.mu.Unlock()
	parts, core = make(map[string]string, len(checks)), make(map[string]bool, len(checks))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			status := "ok"
			if err := c.check(cctx); err != nil {
				status = err.Error()
			}
			mu.Lock()
			parts[c.name], core[c.name] = status, c.core
			mu.Unlock()
		}()
	}
	wg.Wait()
	return parts, core
}

// readyz answers what is ready: "parts" maps each part to "ok" or why not,
// "models" each model to ready, loading or failed; "store_backend" and
// "files_backend" name the backends, "instance" this gateway's id in the
// store and "peers" the other gateways whose heartbeat is recent; "ready" and the status
// code (200 or 503) cover every part, or with server.ready_status core the
// core parts only (a load balancer may then send traffic while models
// load; their routes answer 503 + Retry-After meanwhile).
func (a *App) readyz(ctx *fasthttp.RequestCtx) {
	parts, core := a.readiness(context.Background())
	var notReady, coreNotReady []string
	for name, s := range parts {
		if s != "ok" {
			notReady = append(notReady, name)
			if core[name] {
				coreNotReady = append(coreNotReady, name)
			}
		}
	}
	sort.Strings(notReady)
	ready := len(notReady) == 0
	if a.cfg.Server.ReadyStatus == config.ReadyCore {
		ready = len(coreNotReady) == 0
	}
	status := fasthttp.StatusOK
	body := map[string]any{"ready": ready, "parts": parts, "ready_status": a.cfg.Server.ReadyStatus}
	body["models"] = a.modules.Readiness()
	body["store_backend"] = a.store.Backend()
	body["files_backend"] = a.cfg.Files.Backend
	body["instance"] = a.peers.self.ID
	body["peers"] = a.peers.list()
	if len(notReady) > 0 {
		body["not_ready"] = notReady
	}
	if !ready {
		status = fasthttp.StatusServiceUnavailable
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	httpcore.WriteJSON(ctx, status, body)
}

func (a *App) notFound(ctx *fasthttp.RequestCtx) {
	a.mu.Lock()
	fallbacks := a.fallbacks
	a.mu.Unlock()
	for _, f := range fallbacks {
		if f(ctx) {
			return
		}
	}
	httpcore.SetRoute(ctx, "unmatched")
	httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "no route for "+string(ctx.Path()), "")
}
