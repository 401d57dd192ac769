package server

import (
	"context"
	"fmt"
	"sort"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/apidocs"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
	"toxgate/gateway/modulehost"
	"toxgate/gateway/modulehost/modelapi"
	"toxgate/gateway/web"
)

// attachModules loads the model modules, serves their paths (behind the
// models role unless modules.require_token is false), the model index, the
// Open Inference Protocol health routes, module administration and the API
// documentation.
func (a *App) attachModules(ctx context.Context) error {
	mc := a.cfg.Modules
	weights, err := mc.Weights()
	if err != nil {
		return fmt.Errorf("modules.role_weights: %w", err)
	}
	a.roleWeights = weights
	// The modules load in the background: the gateway serves the catalog,
	// identity and pages meanwhile, and each model as soon as it is ready.
	host, err := modulehost.Start(ctx, modulehost.Config{
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
		RunSlots:        mc.RunSlots,
		LoadWorkers:     mc.LoadWorkers,
		BatchSliceItems: mc.BatchSliceItems,
		BatchSliceBytes: mc.BatchSliceBytes,
		BackgroundShare: float64(mc.BackgroundShare) / 100,
		ServerVersion:   a.version,
		Watch:           mc.Watch,

		ResponseCacheBytes: int64(mc.ResponseCacheBytes),
	}, a.log, a.metrics.Registry())
	if err != nil {
		return err
	}
	a.modules = host
	a.AddCloser("modules", host.Close)
	a.addReadyPart("modules", false, func(context.Context) error { return host.Ready() })
	a.AddReloader("modules", host.Sync)
	for _, rt := range host.Routes() {
		h := rt.Handler
		switch {
		case rt.Admin:
			h = a.adminWithBody(h)
		case rt.Path == "/models/{name}":
			// A browser (Accept: text/html) gets the model's page; API
			// clients the index entry as JSON.
			h = func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
				return func(ctx *fasthttp.RequestCtx) {
					if web.WantsHTML(ctx) {
						a.pages.ModelPage(ctx)
						return
					}
					next(ctx)
				}
			}(h)
		}
		a.router.Handle(rt.Method, rt.Path, h)
	}

	serve := func(ctx *fasthttp.RequestCtx, c identity.Caller) {
		httpcore.SetRoute(ctx, string(ctx.Path()))
		host.ServeModelAs(ctx, a.modelCaller(c, ctx.RemoteIP().String()))
	}
	infer := func(ctx *fasthttp.RequestCtx) {
		c := identity.Caller{}
		if mc.RequireToken {
			var ok bool
			if c, ok = a.authorize(ctx, identity.RoleModels); !ok {
				return
			}
		}
		host.ServeInfer(ctx, a.modelCaller(c, ctx.RemoteIP().String()))
	}
	a.router.POST("/v2/models/{name}/infer", infer)
	a.router.POST("/v2/models/{name}/versions/{version}/infer", infer)
	a.AddFallback(func(ctx *fasthttp.RequestCtx) bool {
		if !host.IsModelPath(ctx.Path()) {
			// While modules load, a model call to a path no loaded
			// module serves yet gets 503 + Retry-After, not 404.
			if host.ServeLoading(ctx) {
				httpcore.SetRoute(ctx, "models loading")
				return true
			}
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
		out = append(out, act.ActionSpec)
		seen[act.Name] = true
	}
	for _, act := range a.plugins.Actions() {
		if !seen[act.Name] {
			out = append(out, act.ActionSpec)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// modelCaller is the caller whose fair share of the models a call uses
// (modelapi.CallerKey: the authenticated user, else, with models open to
// anonymous callers, the client's address), weighted by the largest
// modules.role_weights of the caller's roles (1 without any). Every way
// into the models uses it: the API, the Open Inference Protocol, the web
// pages.
func (a *App) modelCaller(c identity.Caller, remoteIP string) modulehost.Caller {
	w := 0.0
	for _, role := range c.Roles {
		w = max(w, a.roleWeights[role])
	}
	if c.Sysadmin {
		for _, rw := range a.roleWeights {
			w = max(w, rw)
		}
	}
	if w == 0 {
		w = 1
	}
	return modulehost.Caller{Key: modelapi.CallerKey(c.UserID, c.Name, remoteIP), Weight: w}
}
