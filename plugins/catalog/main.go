// Command toxgate-catalog is the catalog plugin: it serves the CKAN action
// API's catalog actions (see package catalog) to the gateway over the
// go-plugin contract of plugins/contract. The gateway starts it; it is not
// meant to be run by hand, except as "toxgate-catalog generate" (see
// generate.go), which "toxgate catalog generate" runs.
//
// Environment (set by the gateway's plugin host):
//
//	TOXGATE_MONGODB_URI       MongoDB URI (required)
//	TOXGATE_MONGODB_DATABASE  database name (default "toxgate")
//	TOXGATE_PLUGIN_TRANSPORT  "netrpc" (default) or "grpc"
//	TOXGATE_LOG_LEVEL         debug, info (default), warn or error
//	TOXGATE_CATALOG_CONCURRENT_WRITES  "true" lets writes run in parallel
//	                          (for a MongoDB replica set; default one at a time)
//	TOXGATE_CATALOG_UPLOAD_GRACE, TOXGATE_CATALOG_SWEEP_INTERVAL  the file
//	                          store sweep (catalog.upload_grace, catalog.sweep_interval)
//	TOXGATE_CATALOG_FILES     JSON: the file store's backends (files.*, as
//	                          catalog/filestore.Config; empty: segment collections)
//	AWS_*                     credentials and region of the s3 backend when
//	                          TOXGATE_CATALOG_FILES leaves them empty
//	TOXGATE_CATALOG_ALLOW_DATASET_COLLABORATORS, TOXGATE_CATALOG_ALLOW_ADMIN_COLLABORATORS
//	                          "true"/"false": dataset collaborators (catalog.allow_*_collaborators)
//	TOXGATE_CATALOG_ACTIVITY_LIST_LIMIT, TOXGATE_CATALOG_ACTIVITY_LIST_LIMIT_MAX  the
//	                          activity lists' default and largest limit (0 or unset: 31, 100)
//	TOXGATE_CATALOG_AUTH_*    "true"/"false": CKAN's ckan.auth.* switches (catalog.auth;
//	                          see authEnv); unset: off
//	TOXGATE_DATASTORE_URL     DataStore PostgreSQL URL (empty: embedded SQLite)
//	TOXGATE_DATASTORE_DIR     embedded DataStore directory (empty: no DataStore)
//	TOXGATE_DATASTORE_LIMITS  JSON: limits, loader settings and the egress policy
//	                          of the loader's fetches (see dataStoreLimits)
//	TOXGATE_CATALOG_CPUPROFILE  a file: SIGUSR1 starts a CPU profile, the
//	                          next SIGUSR1 writes it there (benchmarks)
//
// Logs are JSON lines on stderr, which the host forwards to its own log.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"toxgate/catalog"
	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
	"toxgate/catalog/filestore"
	"toxgate/internal/egress"
	"toxgate/internal/version"
	"toxgate/plugins/contract"
	"toxgate/plugins/contract/goplugin"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "generate" {
		os.Exit(generateCommand(os.Args[2:], os.Stdout, os.Stderr))
	}
	log := contract.NewLogger(os.Stderr)
	slog.SetDefault(log) // what the contract logs (a recovered panic) goes to the host too
	users := goplugin.NewHostUsers()
	srv, closeFn, err := open(log, users)
	if err != nil {
		log.Error("catalog plugin cannot start", "err", err)
		os.Exit(1)
	}
	defer closeFn()
	if path := os.Getenv("TOXGATE_CATALOG_CPUPROFILE"); path != "" {
		go profileOnSignal(path, log)
	}
	goplugin.Serve(srv, users)
}

// profileOnSignal starts a CPU profile on SIGUSR1 and writes it to path on
// the next one, for benchmarks that profile only their measured part.
func profileOnSignal(path string, log *slog.Logger) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	var f *os.File
	for range ch {
		if f == nil {
			var err error
			if f, err = os.Create(path); err != nil {
				log.Error("cpu profile", "err", err)
				continue
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				log.Error("cpu profile", "err", err)
				_ = f.Close()
				f = nil
			}
			continue
		}
		pprof.StopCPUProfile()
		_ = f.Close()
		f = nil
	}
}

// open connects to MongoDB and loads the catalog.
func open(log *slog.Logger, users contract.Users) (*server, func(), error) {
	uri := os.Getenv(contract.EnvMongoURI)
	if uri == "" {
		return nil, nil, fmt.Errorf("%s is not set", contract.EnvMongoURI)
	}
	dbName := os.Getenv(contract.EnvMongoDatabase)
	if dbName == "" {
		dbName = "toxgate"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to MongoDB: %w", err)
	}
	concurrent, _ := strconv.ParseBool(os.Getenv("TOXGATE_CATALOG_CONCURRENT_WRITES"))
	gentle := os.Getenv(contract.EnvReplacing) == "1"
	opts := catalog.Options{Logger: log, Version: version.Version, ConcurrentWrites: concurrent, GentleLoad: gentle}
	opts.AllowCollaborators = true // catalog.allow_dataset_collaborators' default
	if v := os.Getenv("TOXGATE_CATALOG_ALLOW_DATASET_COLLABORATORS"); v != "" {
		opts.AllowCollaborators, _ = strconv.ParseBool(v)
	}
	opts.AllowAdminCollaborators, _ = strconv.ParseBool(os.Getenv("TOXGATE_CATALOG_ALLOW_ADMIN_COLLABORATORS"))
	opts.ActivityListLimit, _ = strconv.Atoi(os.Getenv("TOXGATE_CATALOG_ACTIVITY_LIST_LIMIT"))
	opts.ActivityListLimitMax, _ = strconv.Atoi(os.Getenv("TOXGATE_CATALOG_ACTIVITY_LIST_LIMIT_MAX"))
	opts.Auth = authEnv(os.Getenv)
	ds, err := openDataStore(ctx, log, &opts)
	if err != nil {
		_ = client.Disconnect(context.Background())
		return nil, nil, err
	}
	db := client.Database(dbName)
	if opts.Files, err = openFiles(ctx, db, log); err != nil {
		_ = client.Disconnect(context.Background())
		return nil, nil, err
	}
	// The users belong to the gateway's identity store; the catalog asks
	// the gateway for them (goplugin.HostUsers).
	opts.Users = users
	svc, err := catalog.New(ctx, db, opts)
	if err != nil {
		_ = client.Disconnect(context.Background())
		return nil, nil, err
	}
	grace := envDuration("TOXGATE_CATALOG_UPLOAD_GRACE", 2*time.Minute, log)
	interval := envDuration("TOXGATE_CATALOG_SWEEP_INTERVAL", time.Minute, log)
	sweepCtx, stopSweep := context.WithCancel(context.Background())
	go svc.RunFileSweeper(sweepCtx, interval, grace)
	return &server{svc: svc, log: log}, func() {
		stopSweep()
		if ds != nil {
			_ = ds.Close()
		}
		_ = client.Disconnect(context.Background())
	}, nil
}

// dataStoreLimits is TOXGATE_DATASTORE_LIMITS.
type dataStoreLimits struct {
	MaxRowsPerCall int      `json:"max_rows_per_call"`
	MaxColumns     int      `json:"max_columns"`
	MaxCellBytes   int      `json:"max_cell_bytes"`
	MaxTableBytes  int64    `json:"max_table_bytes"`
	SQLTimeoutMS   int64    `json:"sql_timeout_ms"`
	LoadFormats    []string `json:"load_formats"`
	MaxLoadBytes   int64    `json:"max_load_bytes"`
	// the read and call limits and the per-user quotas (see
	// catalog/datastore/README.md, "Limits")
	SQLMaxValueBytes  int   `json:"sql_max_value_bytes"`
	SQLMaxLength      int   `json:"sql_max_length"`
	MaxResultBytes    int64 `json:"max_result_bytes"`
	SQLiteHeapLimit   int64 `json:"sqlite_heap_limit"`
	PGWorkMem         int64 `json:"pg_work_mem"`
	PGTempFileLimit   int64 `json:"pg_temp_file_limit"`
	SQLCallsPerUser   int   `json:"sql_calls_per_user"`
	SQLCallsAnonymous int   `json:"sql_calls_anonymous"`
	MaxQWords         int   `json:"max_q_words"`
	MaxQBytes         int   `json:"max_q_bytes"`
	MaxFilterValues   int   `json:"max_filter_values"`
	QuotaBytes        int64 `json:"quota_bytes"`
	QuotaTables       int64 `json:"quota_tables"`
	QuotaRows         int64 `json:"quota_rows"`
	// the loader's queue and the egress policy of its fetches
	LoadWorkers        int      `json:"load_workers"`
	LoadWorkersPerUser int      `json:"load_workers_per_user"`
	LoadQueuePerUser   int      `json:"load_queue_per_user"`
	LoadFetchTimeoutMS int64    `json:"load_fetch_timeout_ms"`
	LoadIdleTimeoutMS  int64    `json:"load_idle_timeout_ms"`
	EgressAllow        []string `json:"egress_allow"`
	EgressMaxRedirects *int     `json:"egress_max_redirects"`
}

// openDataStore opens the DataStore the environment names (none when
// neither a URL nor a directory is set) and puts it into opts.
func openDataStore(ctx context.Context, log *slog.Logger, opts *catalog.Options) (*datastore.Store, error) {
	url, dir := os.Getenv(contract.EnvDataStoreURL), os.Getenv(contract.EnvDataStoreDir)
	if url == "" && dir == "" {
		log.Info("no DataStore configured; datastore actions are off")
		return nil, nil
	}
	var lim dataStoreLimits
	if raw := os.Getenv(contract.EnvDataStoreLimits); raw != "" {
		if err := json.Unmarshal([]byte(raw), &lim); err != nil {
			return nil, fmt.Errorf("%s: %w", contract.EnvDataStoreLimits, err)
		}
	} else {
		lim.LoadFormats = []string{"CSV", "TSV", "XLSX"}
	}
	ds, err := datastore.Open(ctx, datastore.Config{URL: url, Dir: dir, Logger: log.With("component", "datastore"), Limits: datastore.Limits{
		MaxRowsPerCall: lim.MaxRowsPerCall, MaxColumns: lim.MaxColumns, MaxCellBytes: lim.MaxCellBytes,
		MaxTableBytes: lim.MaxTableBytes, SQLTimeout: time.Duration(lim.SQLTimeoutMS) * time.Millisecond,
		SQLMaxValueBytes: lim.SQLMaxValueBytes, SQLMaxLength: lim.SQLMaxLength, MaxResultBytes: lim.MaxResultBytes,
		SQLiteHeapLimit: lim.SQLiteHeapLimit, PGWorkMem: lim.PGWorkMem, PGTempFileLimit: lim.PGTempFileLimit,
		SQLCallsPerUser: lim.SQLCallsPerUser, SQLCallsAnonymous: lim.SQLCallsAnonymous,
		MaxQWords: lim.MaxQWords, MaxQBytes: lim.MaxQBytes, MaxFilterValues: lim.MaxFilterValues,
		QuotaBytes: lim.QuotaBytes, QuotaTables: lim.QuotaTables, QuotaRows: lim.QuotaRows,
	}})
	if err != nil {
		return nil, err
	}
	var policy *egress.Policy // the default policy unless the gateway sent one
	if lim.EgressMaxRedirects != nil || len(lim.EgressAllow) > 0 {
		redirects := egress.DefaultMaxRedirects
		if lim.EgressMaxRedirects != nil {
			redirects = *lim.EgressMaxRedirects
		}
		if policy, err = egress.New(egress.Options{Allow: lim.EgressAllow, MaxRedirects: redirects}); err != nil {
			_ = ds.Close()
			return nil, fmt.Errorf("%s: %w", contract.EnvDataStoreLimits, err)
		}
	}
	log.Info("DataStore open", "engine", ds.Engine(), "egress_allow", policy.Allowed())
	opts.DataStore = ds
	opts.Loader = catalog.LoaderOptions{Formats: lim.LoadFormats, Config: datastore.LoaderConfig{
		MaxBytes: lim.MaxLoadBytes, Egress: policy,
		Workers: lim.LoadWorkers, WorkersPerUser: lim.LoadWorkersPerUser, QueuePerUser: lim.LoadQueuePerUser,
		FetchTimeout: time.Duration(lim.LoadFetchTimeoutMS) * time.Millisecond, IdleTimeout: time.Duration(lim.LoadIdleTimeoutMS) * time.Millisecond,
	}}
	return ds, nil
}

// envDuration reads a positive duration from the environment.
func envDuration(key string, def time.Duration, log *slog.Logger) time.Duration {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		log.Warn("ignoring bad duration", "key", key, "value", v)
		return def
	}
	return d
}

// server adapts the catalog to the plugin contract: the CKAN wire handling
// (catalog/ckan) runs here, inside the plugin.
type server struct {
	svc *catalog.Service
	log *slog.Logger
}

func (s *server) Describe(context.Context) (*contract.Manifest, error) {
	m := &contract.Manifest{Name: "catalog", Version: version.Version}
	for _, a := range s.svc.Actions() {
		m.Actions = append(m.Actions, contract.ActionSpec{Name: a.Name, GET: a.GET, Description: a.Description, Internal: a.Internal})
	}
	return m, nil
}

func (s *server) Call(ctx context.Context, req *contract.Request) (*contract.Response, error) {
	r := ckan.Request{Action: req.Action, Method: req.Method, ContentType: req.ContentType, Query: req.Query, Body: req.Body, SiteURL: req.SiteURL}
	get, ok := s.svc.Lookup(req.Action)
	if !ok {
		resp := ckan.Failure(req.SiteURL, req.Action, ckan.UnknownAction(req.Action))
		return &contract.Response{Status: resp.Status, ContentType: resp.ContentType, Body: resp.Body}, nil
	}
	var errType string
	resp := ckan.Serve(r, get, func(data map[string]any, anonymous bool) (any, error) {
		caller := catalog.Caller{UserID: req.Caller.UserID, Name: req.Caller.Name, Sysadmin: req.Caller.Sysadmin}
		if anonymous {
			caller = catalog.Caller{}
		}
		cr := catalog.Request{Action: req.Action, Caller: caller, Data: data, SiteURL: req.SiteURL}
		if u := req.Upload; u != nil {
			cr.Upload = &catalog.FileRef{FileID: u.FileID, Filename: u.Filename, Mimetype: u.Mimetype, SHA256: u.SHA256, Size: u.Size}
		}
		res, err := s.svc.Do(ctx, cr)
		if err != nil {
			errType = ckan.AsError(err).Type
		}
		return res, err
	})
	return &contract.Response{Status: resp.Status, ContentType: resp.ContentType, Body: resp.Body, ErrorType: errType}, nil
}

// authEnv reads catalog.auth, CKAN's ckan.auth.* switches, from the
// TOXGATE_CATALOG_AUTH_* variables the gateway sets; unset or unreadable
// leaves a switch off.
func authEnv(getenv func(string) string) catalog.AuthOptions {
	var a catalog.AuthOptions
	for name, dst := range map[string]*bool{
		"USER_CREATE_ORGANIZATIONS":               &a.UserCreateOrganizations,
		"USER_CREATE_GROUPS":                      &a.UserCreateGroups,
		"CREATE_UNOWNED_DATASET":                  &a.CreateUnownedDataset,
		"ANON_CREATE_DATASET":                     &a.AnonCreateDataset,
		"PUBLIC_USER_DETAILS":                     &a.PublicUserDetails,
		"PUBLIC_ACTIVITY_STREAM_DETAIL":           &a.PublicActivityStreamDetail,
		"ALLOW_COLLABORATORS_TO_CHANGE_OWNER_ORG": &a.AllowCollaboratorsToChangeOwnerOrg,
	} {
		*dst, _ = strconv.ParseBool(getenv("TOXGATE_CATALOG_AUTH_" + name))
	}
	return a
}

// openFiles opens the file store described by contract.EnvFiles (unset:
// bytes in segment collections of db).
func openFiles(ctx context.Context, db *mongo.Database, log *slog.Logger) (*filestore.Store, error) {
	cfg := filestore.Config{Backend: filestore.BackendMongoDB}
	if raw := os.Getenv(contract.EnvFiles); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", contract.EnvFiles, err)
		}
	}
	return filestore.New(ctx, db, cfg, log.With("component", "filestore"))
}
