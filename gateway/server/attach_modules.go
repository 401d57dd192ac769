package server

import (
	"context"
	"sort"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/apidocs"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
	"toxgate/gateway/modulehost"
	"toxgate/gateway/web"
)

// attachModules loads the model modules, serves their paths (behind the
// models role unless modules.require_token is false), the model index, the
// Open Inference Protocol health routes, module administration and the API
// documentation.
func (a *App) attachModules(ctx context.Context) error {
	mc := a.cfg.Modules
	host, err := modulehost.New(ctx, modulehost.Config{
		ModulesDir:      mc.Dir,
		CacheDir:        mc.CacheDir,
		PoolSize:        mc.PoolSize,
		Timeout:         mc.Timeout,
		MaxMemoryPages:  uint32(mc.MaxMemoryPages),
		MaxInputBytes:   min(mc.MaxInputBytes, a.cfg.Server.MaxBodyBytes),
		MaxModuleBytes:  mc.MaxUploadBytes,
		IdleRelease:     mc.IdleRelease,
		QueueSize:       mc.QueueSize,
		CallerQueue:     mc.CallerQueue,
		QueueTimeout:    mc.QueueTimeout,
		CallerRunning:   mc.CallerRunning,
		BatchSliceItems: mc.BatchSliceItems,
		BatchSliceBytes: mc.BatchSliceBytes,
		BackgroundShare: float64(mc.BackgroundShare) / 100,
		ServerVersion:   a.version,
		Watch:           mc.Watch,
	}, a.log, a.metrics.Registry())
	if err != nil {
		return err
	}
	a.modules = host
	a.AddCloser("modules", host.Close)
	a.AddReadyCheck("modules", func(context.Context) error { return host.Ready() })
	a.AddReloader("modules", host.Sync)
	for _, rt := range host.Routes() {
		h := rt.Handler
		switch {
		case rt.Admin:
			h = a.adminWithBody(h)
		case rt.Path == "/models/{name}" && a.modelPage != nil:
			// A browser (Accept: text/html) gets the model's page; API
			// clients the index entry as JSON.
			h = func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
				return func(ctx *fasthttp.RequestCtx) {
					if web.WantsHTML(ctx) {
						a.modelPage(ctx)
						return
					}
					next(ctx)
				}
			}(h)
		}
		a.router.Handle(rt.Method, rt.Path, h)
	}

	// The caller whose share of a module's instances a call uses: the
	// authenticated user, else (models open to anonymous callers) the
	// client's address.
	serve := func(ctx *fasthttp.RequestCtx, c identity.Caller) {
		httpcore.SetRoute(ctx, string(ctx.Path()))
		host.ServeModelAs(ctx, callerName(ctx, c))
	}
	infer := func(ctx *fasthttp.RequestCtx) {
		c := identity.Caller{}
		if mc.RequireToken {
			var ok bool
			if c, ok = a.authorize(ctx, identity.RoleModels); !ok {
				return
			}
		}
		host.ServeInfer(ctx, callerName(ctx, c))
	}
	a.router.POST("/v2/models/{name}/infer", infer)
	a.router.POST("/v2/models/{name}/versions/{version}/infer", infer)
	a.AddFallback(func(ctx *fasthttp.RequestCtx) bool {
		if !host.IsModelPath(ctx.Path()) {
			return false
		}
		if !mc.RequireToken {
			serve(ctx, identity.Caller{})
			return true
		}
		if c, ok := a.authorize(ctx, identity.RoleModels); ok {
			serve(ctx, c)
		} else {
			httpcore.SetRoute(ctx, string(ctx.Path()))
		}
		return true
	})

	docs := apidocs.New(apidocs.Config{
		Info: apidocs.Info{
			Title:       "toxgate API",
			Version:     a.version,
			Description: "CKAN action API v3 (catalog) and the model execution API (WebAssembly modules) of toxgate.",
		},
		Actions: a.docActions(),
		Modules: host,
	})
	docs.RegisterRoutes(a.router)
	return nil
}

// docActions lists the CKAN actions of the core and of the plugins for the docs.
func (a *App) docActions() []apidocs.Action {
	var out []apidocs.Action
	seen := map[string]bool{}
	for _, act := range a.CoreActions() {
		out = append(out, apidocs.Action{Name: act.Name, GET: act.GETAllowed, Summary: act.Description})
		seen[act.Name] = true
	}
	if a.plugins != nil {
		for _, act := range a.plugins.Actions() {
			if !seen[act.Name] {
				out = append(out, apidocs.Action{Name: act.Name, GET: act.GET, Summary: act.Description})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// callerName is the caller whose share of a module's instances a call uses:
// the authenticated user, else (models open to anonymous callers) the
// client's address.
func callerName(ctx *fasthttp.RequestCtx, c identity.Caller) string {
	switch {
	case c.UserID != "":
		return "user:" + c.UserID
	case c.Name != "":
		return "user:" + c.Name
	}
	return "ip:" + ctx.RemoteIP().String()
}
