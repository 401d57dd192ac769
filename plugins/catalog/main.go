// Command toxgate-catalog is the catalog plugin: it serves the CKAN action
// API's catalog actions (see package catalog) to the gateway over the
// go-plugin contract of plugins/contract. The gateway starts it; it is not
// meant to be run by hand, except as "toxgate-catalog generate" (see
// generate.go), which "toxgate catalog generate" runs.
//
// Environment (set by the gateway's plugin host):
//
//	TOXGATE_MONGODB_URI       MongoDB URI (required)
//	TOXGATE_MONGODB_DATABASE  database name (required)
//	TOXGATE_PLUGIN_TRANSPORT  "netrpc" or "grpc" (plugins.transport)
//	TOXGATE_LOG_LEVEL         debug, info, warn or error
//	TOXGATE_PLUGIN_SETTINGS   the settings message (contract.Settings, required):
//	                          the gateway's catalog and datastore sections, every
//	                          value filled in by the gateway's configuration
//	AWS_*                     credentials and region of the s3 backend when
//	                          the settings' files section leaves them empty
//	TOXGATE_CATALOG_CPUPROFILE  a file: SIGUSR1 starts a CPU profile, the
//	                          next SIGUSR1 writes it there (benchmarks)
//	TOXGATE_CATALOG_LOAD_GATE a FIFO read to its end before the load (tests)
//
// Logs are JSON lines on stderr, which the host forwards to its own log.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
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
	// The handshake comes first and the load after it: the host counts the
	// plugin as loading until contract.ActionReady answers.
	go srv.load()
	if path := os.Getenv(contract.EnvCPUProfile); path != "" {
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

// open decodes the settings, connects to MongoDB and opens the catalog
// (server.load loads it).
func open(log *slog.Logger, users contract.Users) (*server, func(), error) {
	set, err := contract.ReadSettings(os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	uri, dbName := os.Getenv(contract.EnvMongoURI), os.Getenv(contract.EnvMongoDatabase)
	if uri == "" || dbName == "" {
		return nil, nil, fmt.Errorf("%s and %s must be set", contract.EnvMongoURI, contract.EnvMongoDatabase)
	}
	cs := set.Catalog
	applyMemoryLimit(log, cs.MemoryLimit)
	log.Info("catalog plugin settings", "concurrent_writes", cs.ConcurrentWrites,
		"transport", cmp.Or(os.Getenv(contract.EnvTransport), contract.TransportNetRPC))
	// opening the store comes before the handshake, loading the catalog after
	ctx, cancel := context.WithTimeout(context.Background(), contract.StartTimeout)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to MongoDB: %w", err)
	}
	opts := catalog.Options{Logger: log, Version: version.Version, ConcurrentWrites: cs.ConcurrentWrites,
		GentleLoad:         os.Getenv(contract.EnvReplacing) == "1",
		AllowCollaborators: cs.AllowDatasetCollaborators, AllowAdminCollaborators: cs.AllowAdminCollaborators,
		ActivityListLimit: cs.ActivityListLimit, ActivityListLimitMax: cs.ActivityListLimitMax,
		MaxVersionsPerDataset: cs.MaxVersionsPerDataset,
		ReplyCacheEntries:     cs.ReplyCacheEntries,
		Auth:                  catalog.AuthOptions(cs.Auth),
		IndexSnapshot:         cs.IndexSnapshot, IndexSnapshotEvery: cs.IndexSnapshotEvery,
		RecordsFile: catalog.RecordsFileBeside(cs.IndexSnapshot)}
	ds, err := openDataStore(ctx, log, set.DataStore, &opts)
	if err != nil {
		_ = client.Disconnect(context.Background())
		return nil, nil, err
	}
	db := client.Database(dbName)
	if opts.Files, err = openFiles(ctx, db, cs.Files, log); err != nil {
		_ = client.Disconnect(context.Background())
		return nil, nil, err
	}
	// The users belong to the gateway's identity store; the catalog asks
	// the gateway for them (goplugin.HostUsers).
	opts.Users = users
	svc, err := catalog.Open(ctx, db, opts)
	if err != nil {
		_ = client.Disconnect(context.Background())
		return nil, nil, err
	}
	sweepCtx, stopSweep := context.WithCancel(context.Background())
	srv := &server{svc: svc, log: log, afterLoad: func() {
		// the sweeper reads which files the catalog references: only once loaded
		go svc.RunFileSweeper(sweepCtx, cs.SweepInterval, cs.UploadGrace)
	}}
	return srv, func() {
		stopSweep()
		svc.Close() // appends the last changes to the records file
		if ds != nil {
			_ = ds.Close()
		}
		_ = client.Disconnect(context.Background())
	}, nil
}

// openDataStore opens the DataStore the settings name (none when neither
// a URL nor a directory is set) and puts it into opts.
func openDataStore(ctx context.Context, log *slog.Logger, lim contract.DataStoreSettings, opts *catalog.Options) (*datastore.Store, error) {
	if lim.URL == "" && lim.Dir == "" {
		log.Info("no DataStore configured; datastore actions are off")
		return nil, nil
	}
	policy, err := egress.New(egress.Options{Allow: lim.EgressAllow, MaxRedirects: lim.EgressMaxRedirects})
	if err != nil {
		return nil, fmt.Errorf("%s: datastore egress: %w", contract.EnvSettings, err)
	}
	ds, err := datastore.Open(ctx, datastore.Config{URL: lim.URL, Dir: lim.Dir, Logger: log.With("component", "datastore"), Limits: datastore.Limits{
		MaxRowsPerCall: lim.MaxRowsPerCall, MaxColumns: lim.MaxColumns, MaxCellBytes: lim.MaxCellBytes,
		MaxTableBytes: lim.MaxTableBytes, SQLTimeout: lim.SQLTimeout,
		SQLMaxValueBytes: lim.SQLMaxValueBytes, SQLMaxLength: lim.SQLMaxLength, MaxResultBytes: lim.MaxResultBytes,
		SQLiteHeapLimit: lim.SQLiteHeapLimit, PGWorkMem: lim.PGWorkMem, PGTempFileLimit: lim.PGTempFileLimit,
		SQLCallsPerUser: lim.SQLCallsPerUser, SQLCallsAnonymous: lim.SQLCallsAnonymous,
		MaxQWords: lim.MaxQWords, MaxQBytes: lim.MaxQBytes, MaxFilterValues: lim.MaxFilterValues,
		QuotaBytes: lim.QuotaBytes, QuotaTables: lim.QuotaTables, QuotaRows: lim.QuotaRows,
	}})
	if err != nil {
		return nil, err
	}
	log.Info("DataStore open", "engine", ds.Engine(), "egress_allow", policy.Allowed())
	opts.DataStore = ds
	opts.Chem = catalog.ChemOptions{IndexMaxRows: lim.StructureIndexMaxRows, Warm: true}
	opts.Loader = catalog.LoaderOptions{Formats: lim.LoadFormats, Config: datastore.LoaderConfig{
		MaxBytes: lim.MaxLoadBytes, Egress: policy,
		Workers: lim.LoadWorkers, WorkersPerUser: lim.LoadWorkersPerUser, QueuePerUser: lim.LoadQueuePerUser,
		FetchTimeout: lim.LoadFetchTimeout, IdleTimeout: lim.LoadIdleTimeout,
	}}
	return ds, nil
}

// server adapts the catalog to the plugin contract: the CKAN wire handling
// (catalog/ckan) runs here, inside the plugin.
type server struct {
	svc *catalog.Service
	log *slog.Logger
	// afterLoad runs once the catalog is loaded.
	afterLoad func()
}

// load loads the catalog within contract.LoadTimeout; a failed load ends
// the process, which the host restarts.
func (s *server) load() {
	ctx, cancel := context.WithTimeout(context.Background(), contract.LoadTimeout)
	defer cancel()
	if gate := os.Getenv(contract.EnvLoadGate); gate != "" {
		// a test holds the load here: opening a FIFO waits for its writer
		s.log.Info("catalog load waits at its gate", "gate", gate)
		if f, err := os.Open(gate); err == nil {
			_, _ = io.Copy(io.Discard, f)
			_ = f.Close()
		}
	}
	if err := s.svc.Load(ctx); err != nil {
		s.log.Error("catalog plugin cannot load the catalog", "err", err)
		os.Exit(1)
	}
	s.afterLoad()
}

func (s *server) Describe(context.Context) (*contract.Manifest, error) {
	m := &contract.Manifest{Name: "catalog", Version: version.Version}
	for _, a := range s.svc.Actions() {
		m.Actions = append(m.Actions, contract.ActionSpec{Name: a.Name, GET: a.GET, Description: a.Description, Internal: a.Internal})
	}
	m.Actions = append(m.Actions, contract.ActionSpec{Name: contract.ActionReady, GET: true, Internal: true,
		Description: "Waits until the catalog is loaded (the host's readiness)."})
	return m, nil
}

func (s *server) Call(ctx context.Context, req *contract.Request) (*contract.Response, error) {
	if req.Action == contract.ActionReady {
		return s.ready(ctx, req), nil
	}
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
		cr := catalog.Request{Action: req.Action, Caller: caller, Data: data, SiteURL: req.SiteURL, Arrived: req.Arrived}
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

// openFiles opens the file store the settings describe (empty: bytes in
// segment collections of db).
func openFiles(ctx context.Context, db *mongo.Database, raw json.RawMessage, log *slog.Logger) (*filestore.Store, error) {
	cfg := filestore.Config{Backend: filestore.BackendMongoDB}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, fmt.Errorf("settings: files: %w", err)
		}
	}
	return filestore.New(ctx, db, cfg, log.With("component", "filestore"))
}

// readyWaitMax bounds one wait of contract.ActionReady whatever the
// request's deadline.
const readyWaitMax = time.Minute

// ready answers contract.ActionReady: 200 once the catalog is loaded,
// waiting for it until ctx (the request's deadline) ends, then 503.
func (s *server) ready(ctx context.Context, req *contract.Request) *contract.Response {
	ctx, cancel := context.WithTimeout(ctx, readyWaitMax)
	defer cancel()
	select {
	case <-s.svc.Loaded():
		resp := ckan.Success(req.SiteURL, req.Action, map[string]any{"ready": true})
		return &contract.Response{Status: resp.Status, ContentType: resp.ContentType, Body: resp.Body}
	case <-ctx.Done():
		e := ckan.Unavailable("The catalog is loading; please retry")
		resp := ckan.Failure(req.SiteURL, req.Action, e)
		return &contract.Response{Status: resp.Status, ContentType: resp.ContentType, Body: resp.Body, ErrorType: e.Type}
	}
}
