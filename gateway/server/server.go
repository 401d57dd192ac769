// Package server assembles the gateway: the store, the HTTP core, liveness
// and readiness, metrics, and the parts that serve the catalog and models.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/config"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/modulehost"
	"toxgate/gateway/pluginhost"
	"toxgate/gateway/store"
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

	coreActions   map[string]CoreAction
	pluginActions ActionHandler
	plugins       *pluginhost.Host
	modules       *modulehost.Host
}

// Fallback serves a request no static route matched and reports whether it
// did (model paths are resolved this way from a registry that changes at run
// time, because router routes cannot be added while serving).
type Fallback func(ctx *fasthttp.RequestCtx) bool

type namedCheck struct {
	name  string
	check ReadyCheck
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
	a := &App{cfg: cfg, log: log, accessLog: opts.AccessLog, version: opts.Version, started: time.Now(), auth: anonymousOnly{}}
	if a.accessLog == nil {
		a.accessLog = log
	}
	st, err := store.Open(ctx, store.Options{
		URI: cfg.MongoDB.URI, DataDir: cfg.MongoDB.DataDir, Database: cfg.MongoDB.Database,
		MaxPoolSize: uint64(cfg.MongoDB.MaxPoolSize), Logger: quietLogger(log),
	})
	if err != nil {
		return nil, err
	}
	a.store = st
	if st.Embedded() {
		log.Info("embedded store started", "uri", st.URI(), "data_dir", cfg.MongoDB.DataDir)
	} else {
		log.Info("connected to MongoDB", "database", cfg.MongoDB.Database)
	}
	a.AddReadyCheck("store", func(ctx context.Context) error { return a.store.Ping(ctx) })
	a.metrics = httpcore.NewMetrics(opts.Version)

	r := router.New()
	r.SaveMatchedRoutePath = true
	r.HandleMethodNotAllowed = true
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		httpcore.WriteError(ctx, fasthttp.StatusMethodNotAllowed, "method_not_allowed",
			"method "+string(ctx.Method())+" not allowed on "+string(ctx.Path()), "")
	}
	r.NotFound = a.notFound
	a.router = r
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
}

func (l levelFilter) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.min && l.Handler.Enabled(ctx, lv)
}

func (l levelFilter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelFilter{Handler: l.Handler.WithAttrs(attrs), min: l.min}
}

func (l levelFilter) WithGroup(name string) slog.Handler {
	return levelFilter{Handler: l.Handler.WithGroup(name), min: l.min}
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

// AddReadyCheck adds a part to /readyz.
func (a *App) AddReadyCheck(name string, c ReadyCheck) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.checks = append(a.checks, namedCheck{name, c})
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
	mws = append(mws, a.metrics.Middleware(), httpcore.Recover(a.log))
	mws = append(mws, httpcore.RefuseAmbiguousFraming())
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
		HeaderReceived:        a.requestLimits,
	}
	a.log.Info("serving", "addr", ln.Addr().String(), "version", a.version)
	err := a.srv.Serve(ln)
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// requestLimits lets module uploads be larger than other request bodies.
func (a *App) requestLimits(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if string(h.Method()) == fasthttp.MethodPost && string(h.RequestURI()) == "/admin/modules" {
		return fasthttp.RequestConfig{MaxRequestBodySize: max(a.cfg.Modules.MaxUploadBytes, a.cfg.Server.MaxBodyBytes)}
	}
	return fasthttp.RequestConfig{}
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

// readiness runs every check with a short deadline.
func (a *App) readiness(ctx context.Context) map[string]string {
	a.mu.Lock()
	checks := append([]namedCheck(nil), a.checks...)
	a.mu.Unlock()
	out := make(map[string]string, len(checks))
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
			out[c.name] = status
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func (a *App) readyz(ctx *fasthttp.RequestCtx) {
	parts := a.readiness(context.Background())
	var notReady []string
	for name, s := range parts {
		if s != "ok" {
			notReady = append(notReady, name)
		}
	}
	status := fasthttp.StatusOK
	body := map[string]any{"ready": len(notReady) == 0, "parts": parts}
	if len(notReady) > 0 {
		status = fasthttp.StatusServiceUnavailable
		body["not_ready"] = notReady
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
