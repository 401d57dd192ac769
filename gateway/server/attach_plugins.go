package server

import (
	"context"
	"os"
	"sort"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/catalogclient"
	"toxgate/gateway/filehttp"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
	"toxgate/gateway/pluginhost"
	"toxgate/plugins/contract"
)

// attachPlugins starts the plugin programs (the catalog) and routes the CKAN
// actions they declare; SIGHUP and POST /admin/plugins/{name}/reload reload them.
func (a *App) attachPlugins(ctx context.Context) error {
	pc := a.cfg.Plugins
	names := make([]string, 0, len(pc.Programs))
	for name := range pc.Programs {
		names = append(names, name)
	}
	sort.Strings(names)
	var plugins []pluginhost.PluginConfig
	for _, name := range names {
		plugins = append(plugins, pluginhost.PluginConfig{Name: name, Path: pc.Programs[name], SHA256: pc.Checksums[name]})
	}
	host, err := pluginhost.New(pluginhost.Config{
		Plugins:        plugins,
		HealthInterval: pc.HealthInterval,
		RestartBackoff: pc.RestartBackoff,
		WatchBinaries:  pc.Watch,
		MongoURI:       a.store.URI(),
		Users:          a.users,
		MongoDatabase:  a.cfg.MongoDB.Database,
		SiteURL:        SiteURL(a.cfg.Server.PublicURL, a.cfg.Server.Addr),
		LogLevel:       a.cfg.Log.Level,
		Transport:      pc.Transport,
		Settings:       pluginSettings(a.cfg),
		Env:            append(awsEnv(), a.pluginTestEnv()...),
	}, a.log, a.metrics.Registry())
	if err != nil {
		return err
	}
	if err := host.Start(ctx); err != nil {
		// The supervisor keeps retrying; /readyz names the plugin meanwhile.
		a.log.Error("plugin not started; retrying in the background", "err", err)
	}
	a.plugins = host
	a.catalog = catalogclient.New(host, SiteURL(a.cfg.Server.PublicURL, a.cfg.Server.Addr))
	a.AddCloser("plugins", host.Close)
	a.AddReadyCheck("plugins", func(context.Context) error { return host.Ready() })
	a.AddReloader("plugins", func(ctx context.Context) error {
		for _, name := range names {
			if err := host.Reload(ctx, name); err != nil {
				return err
			}
		}
		return nil
	})
	files := filehttp.New(a.fileStore, host, filehttp.Config{
		MaxBytes: int64(a.cfg.Catalog.MaxResourceBytes), ReadTimeout: a.cfg.Server.ReadTimeout, WriteTimeout: a.cfg.Server.WriteTimeout,
		MaxUploadsPerUser: a.cfg.Catalog.MaxUploadsPerUser,
	}, a.metrics.Registry())
	a.files = files
	a.SetPluginActions(func(ctx *fasthttp.RequestCtx, action string, c identity.Caller) {
		id := c.Identity
		if filehttp.IsUpload(ctx) {
			files.Upload(ctx, action, id)
			return
		}
		if filehttp.TakesUpload(action) && ctx.IsPost() {
			ct := string(ctx.Request.Header.ContentType())
			if ref, rest, ok := filehttp.UploadIDOf(ct, ctx.PostBody()); ok {
				files.Attach(ctx, action, id, ct, rest, ref)
				return
			}
		}
		host.HandleAction(ctx, action, id)
	})
	r := a.router
	download := func(ctx *fasthttp.RequestCtx) {
		c := a.Caller(ctx)
		if c.Anonymous() {
			c = a.sessionCaller(ctx)
		}
		files.Download(ctx, c.Identity)
	}
	for _, p := range []string{"/dataset/{id}/resource/{resource_id}/download", "/dataset/{id}/resource/{resource_id}/download/{filename}"} {
		r.GET(p, download)
		r.HEAD(p, download)
	}
	r.GET("/admin/plugins", a.AdminOnly(func(ctx *fasthttp.RequestCtx) {
		httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"plugins": host.Status()})
	}))
	r.POST("/admin/plugins/{name}/reload", a.AdminOnly(func(ctx *fasthttp.RequestCtx) {
		name, _ := ctx.UserValue("name").(string)
		if _, ok := pc.Programs[name]; !ok {
			httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "no plugin named "+name, "name")
			return
		}
		rctx, cancel := context.WithTimeout(context.Background(), a.cfg.Server.WriteTimeout)
		defer cancel()
		if err := host.Reload(rctx, name); err != nil {
			httpcore.WriteError(ctx, fasthttp.StatusBadGateway, "reload_failed", err.Error(), "")
			return
		}
		httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"reloaded": name, "plugins": host.Status()})
	}))
	return nil
}

// pluginTestEnv passes the catalog's load gate (contract.EnvLoadGate) and
// its CPU profile file (contract.EnvCPUProfile) on to the plugins, with the
// test routes on only.
func (a *App) pluginTestEnv() []string {
	if !a.testRoutes {
		return nil
	}
	var env []string
	for _, k := range []string{contract.EnvLoadGate, contract.EnvCPUProfile} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
