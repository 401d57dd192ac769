package server

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/config"
	"toxgate/gateway/filehttp"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
	"toxgate/gateway/pluginhost"
	"toxgate/plugins/contract"
)

// dataStoreEnv is the DataStore's configuration for the catalog plugin,
// with the egress policy its loader fetches links under. The embedded
// engine's directory defaults to datastore/ beside the embedded store's
// directory (./data/datastore by default).
func dataStoreEnv(c config.DataStore, e config.Egress, storeDir string) []string {
	dir := c.Dir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(filepath.Clean(storeDir)), "datastore")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	limits, _ := json.Marshal(map[string]any{
		"max_rows_per_call": c.MaxRowsPerCall, "max_columns": c.MaxColumns, "max_cell_bytes": c.MaxCellBytes,
		"max_table_bytes": c.MaxTableBytes, "sql_timeout_ms": c.SQLTimeout.Milliseconds(), "load_formats": c.LoadFormats,
		"max_load_bytes":      c.MaxLoadBytes,
		"sql_max_value_bytes": c.SQLMaxValueBytes, "sql_max_length": c.SQLMaxLength, "max_result_bytes": c.MaxResultBytes,
		"sqlite_heap_limit": c.SQLiteHeapLimit, "pg_work_mem": c.PGWorkMem, "pg_temp_file_limit": c.PGTempFileLimit,
		"sql_calls_per_user": c.SQLCallsPerUser, "sql_calls_anonymous": c.SQLCallsAnonymous,
		"max_q_words": c.MaxQWords, "max_q_bytes": c.MaxQBytes, "max_filter_values": c.MaxFilterValues,
		"quota_bytes": c.QuotaBytes, "quota_tables": c.QuotaTables, "quota_rows": c.QuotaRows,
		"load_workers": c.LoadWorkers, "load_workers_per_user": c.LoadWorkersPerUser, "load_queue_per_user": c.LoadQueuePerUser,
		"load_fetch_timeout_ms": c.LoadFetchTimeout.Milliseconds(), "load_idle_timeout_ms": e.IdleTimeout.Milliseconds(),
		"egress_allow": e.Allow, "egress_max_redirects": e.MaxRedirects,
	})
	return []string{contract.EnvDataStoreURL + "=" + c.URL, contract.EnvDataStoreDir + "=" + dir, contract.EnvDataStoreLimits + "=" + string(limits)}
}

// catalogAuthEnv is catalog.auth (CKAN's ckan.auth.* switches) for the
// catalog plugin, one TOXGATE_CATALOG_AUTH_* variable each.
func catalogAuthEnv(c config.CatalogAuth) []string {
	b := strconv.FormatBool
	return []string{
		"TOXGATE_CATALOG_AUTH_USER_CREATE_ORGANIZATIONS=" + b(c.UserCreateOrganizations),
		"TOXGATE_CATALOG_AUTH_USER_CREATE_GROUPS=" + b(c.UserCreateGroups),
		"TOXGATE_CATALOG_AUTH_CREATE_UNOWNED_DATASET=" + b(c.CreateUnownedDataset),
		"TOXGATE_CATALOG_AUTH_ANON_CREATE_DATASET=" + b(c.AnonCreateDataset),
		"TOXGATE_CATALOG_AUTH_PUBLIC_USER_DETAILS=" + b(c.PublicUserDetails),
		"TOXGATE_CATALOG_AUTH_PUBLIC_ACTIVITY_STREAM_DETAIL=" + b(c.PublicActivityStreamDetail),
		"TOXGATE_CATALOG_AUTH_ALLOW_COLLABORATORS_TO_CHANGE_OWNER_ORG=" + b(c.AllowCollaboratorsToChangeOwnerOrg),
	}
}

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
		Env: append([]string{
			"TOXGATE_CATALOG_UPLOAD_GRACE=" + a.cfg.Catalog.UploadGrace.String(),
			"TOXGATE_CATALOG_SWEEP_INTERVAL=" + a.cfg.Catalog.SweepInterval.String(),
			"TOXGATE_CATALOG_ALLOW_DATASET_COLLABORATORS=" + strconv.FormatBool(a.cfg.Catalog.AllowDatasetCollaborators),
			"TOXGATE_CATALOG_ALLOW_ADMIN_COLLABORATORS=" + strconv.FormatBool(a.cfg.Catalog.AllowAdminCollaborators),
			"TOXGATE_CATALOG_ACTIVITY_LIST_LIMIT=" + strconv.Itoa(a.cfg.Catalog.ActivityListLimit),
			"TOXGATE_CATALOG_ACTIVITY_LIST_LIMIT_MAX=" + strconv.Itoa(a.cfg.Catalog.ActivityListLimitMax),
		}, append(append(catalogAuthEnv(a.cfg.Catalog.Auth), filesEnv(a.cfg)...), dataStoreEnv(a.cfg.DataStore, a.cfg.Egress, a.cfg.MongoDB.DataDir)...)...),
	}, a.log, a.metrics.Registry())
	if err != nil {
		return err
	}
	if err := host.Start(ctx); err != nil {
		// The supervisor keeps retrying; /readyz names the plugin meanwhile.
		a.log.Error("plugin not started; retrying in the background", "err", err)
	}
	a.plugins = host
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
		host.HandleAction(ctx, action, id)
	})
	r := a.router
	download := func(ctx *fasthttp.RequestCtx) {
		c := a.Caller(ctx)
		if c.Anonymous() && a.sessionCaller != nil {
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
