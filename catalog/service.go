package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
	"toxgate/catalog/filestore"
	"toxgate/catalog/internal/groupcommit"
	"toxgate/plugins/contract"
)

// Options configure a Service.
type Options struct {
	// SiteTitle and SiteDescription are reported by status_show.
	SiteTitle, SiteDescription string
	// Version is the toxgate version reported by status_show.
	Version string
	// Logger receives the catalog's logs; nil means slog.Default().
	Logger *slog.Logger
	// DataStore is the DataStore engine; nil leaves the datastore_* and
	// xloader_* actions out.
	DataStore *datastore.Store
	// Loader configures automatic loading of tabular resources into the
	// DataStore (used only with a DataStore).
	Loader LoaderOptions
	// ConcurrentWrites sends the grouped store writes of different
	// collections in parallel (store_group.go). Off by default: the
	// embedded store (SQLite) takes one writer at a time and concurrent
	// writers there wait on each other for up to hundreds of milliseconds,
	// so the process sends one group at a time. Turn it on for a MongoDB
	// replica set. Write actions run concurrently either way.
	ConcurrentWrites bool
	// Files is the file store of uploaded files (nil: one keeping bytes in
	// segment collections of db).
	Files *filestore.Store
	// Users is the gateway's user directory, through which the catalog
	// resolves member names and renders member lists (nil: no users).
	Users contract.Users
	// GentleLoad makes New load the catalog at half pace (it pauses after
	// each batch for as long as the batch took), for a process that
	// replaces a running one: that one serves meanwhile, and its requests
	// wait less for the machine.
	GentleLoad bool
	// IndexSnapshot is the file of the search index's snapshot
	// (catalog.index_snapshot; "" for none): New starts from it when it is
	// usable (see restoreIndex) and the process writes it in the
	// background, once loaded and then every IndexSnapshotEvery
	// (catalog.index_snapshot_every; 0: once).
	IndexSnapshot      string
	IndexSnapshotEvery time.Duration
	// RecordsFile is the file of the datasets' records with the journal
	// of their changes ("" for none; the plugin keeps it beside the index
	// snapshot, RecordsFileBeside): Load starts from it when it is usable
	// (see loadFromRecords), and the process rewrites it once loaded and
	// appends every change (keepRecords).
	RecordsFile string
	// AllowCollaborators lets dataset collaborators read (member) and edit
	// (editor) single datasets (catalog.allow_dataset_collaborators, CKAN's
	// ckan.auth.allow_dataset_collaborators).
	AllowCollaborators bool
	// AllowAdminCollaborators adds the admin capacity, which also manages
	// a dataset's collaborators (catalog.allow_admin_collaborators).
	AllowAdminCollaborators bool
	// Auth holds CKAN's ckan.auth.* switches (catalog.auth); the zero
	// value keeps each closed.
	Auth AuthOptions
	// MaxVersionsPerDataset bounds the versions of one dataset
	// (catalog.versions.max_per_dataset); 0 means the default, 100.
	MaxVersionsPerDataset int
	// ActivityListLimit and ActivityListLimitMax are the default and the
	// largest limit of the activity lists (ckan.activity_list_limit, 31,
	// and ckan.activity_list_limit_max, 100); 0 means the default.
	ActivityListLimit, ActivityListLimitMax int
	// Chem configures the compound resolver and the structure index.
	Chem ChemOptions
	// ReplyCacheEntries is how many encoded package_show replies the
	// catalog keeps, the most recently read (catalog.reply_cache_entries);
	// 0 means DefaultReplyCacheEntries.
	ReplyCacheEntries int
}

// Service runs catalog actions against one MongoDB database.
type Service struct {
	c      recordStore
	lockMu sync.Mutex
	locks  map[string]*keyLock
	// marks queues the changes waiting to be recorded in the change
	// marker; one goroutine at a time records all of them (record).
	marks *groupcommit.Queue[changeEntry]
	// lastMarker is the marker this process last wrote (nil: unknown);
	// used only by the goroutine recording changes.
	lastMarker *marker
	// writes counts this process's recorded changes; pruning is true
	// while old claims are being deleted (see pruneClaims).
	writes  atomic.Int64
	pruning atomic.Bool
	st      *readModel
	// kinds are the record kinds of the write path (store_kinds.go).
	kinds kinds
	sy    syncer
	files *filestore.Store
	log   *slog.Logger
	opts  Options
	// ds and loader are the DataStore and its loader (nil without one).
	ds     *datastore.Store
	loader *datastore.Loader
	// acts is the in-memory index of the activity stream (activity.go).
	acts activityIndex
	// vs holds the dataset versions (versions.go).
	vs versionStore
	// sweepGrace is the grace of the last sweep (versions' heartbeats).
	sweepGrace atomic.Int64
	// chem is the compound resolver and structure index (chem.go).
	chem *chemState
	// snapFirst is closed once the first index snapshot was attempted.
	snapFirst chan struct{}
	// snapCurrent is set when the load started from an index snapshot
	// that needed few documents indexed again (firstSnapshot).
	snapCurrent atomic.Bool
	// storeID is the store's identity (recordStore.storeID), read by Load
	// when a records file is kept.
	storeID string
	// recordsFirst is closed once the first records file was attempted;
	// stopRecords ends its writing, and recordsDone is closed after.
	recordsFirst, recordsDone chan struct{}
	stopRecords               context.CancelFunc
	// loaded is closed once the catalog is in memory (Load); until then
	// every action answers errLoading. isLoaded is the same, for Do.
	loaded   chan struct{}
	isLoaded atomic.Bool
}

// Request is one action call.
type Request struct {
	// Action is the action name.
	Action string
	// Caller is who calls.
	Caller Caller
	// Data is the parsed data dict (see ckan.ParseData).
	Data map[string]any
	// SiteURL is the public base URL (for upload links).
	SiteURL string
	// Upload is the file the gateway stored from the request's "upload"
	// field (resource_create, resource_update, resource_patch); nil: none.
	Upload *FileRef
	// Arrived is when the gateway took the request, on the machine's
	// monotonic clock (contract.Monotonic); 0: not known. The freshness
	// check (SyncSince) may then answer from a read of the change marker
	// that started after this instant.
	Arrived int64
	// version is the dataset version the request names ("version"),
	// found before its auth function ran; nil: none.
	version *Version
}

// Action describes one action the catalog serves: the plugin contract's
// action descriptor.
type Action = contract.ActionSpec

type handler func(ctx context.Context, s *Service, r *Request) (any, error)

type actionDef struct {
	Action
	run handler
	// datastore marks DataStore actions, served only with a DataStore.
	datastore bool
	// ownWrites marks a write action that takes the write lock itself
	// (catalogWrite) for its catalog change only.
	ownWrites bool
}

var actions = map[string]actionDef{}

func register(name string, get bool, desc string, run handler) {
	actions[name] = actionDef{Action: Action{Name: name, GET: get, Description: desc}, run: run}
}

// registerOwnWrites adds a write action that takes the write lock itself.
func registerOwnWrites(name string, desc string, run handler) {
	actions[name] = actionDef{Action: Action{Name: name, Description: desc}, run: run, ownWrites: true}
}

// registerInternal adds an action the gateway calls itself.
func registerInternal(name string, desc string, run handler) {
	actions[name] = actionDef{Action: Action{Name: name, GET: true, Description: desc, Internal: true}, run: run}
}

// takesUpload lists the actions that accept a file.
var takesUpload = map[string]bool{"resource_create": true, "resource_update": true, "resource_patch": true}

// New opens the catalog on db (Open) and loads it into memory (Load).
func New(ctx context.Context, db *mongo.Database, opts Options) (*Service, error) {
	s, err := Open(ctx, db, opts)
	if err != nil {
		return nil, err
	}
	if err := s.Load(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Open opens the catalog on db: it makes the indexes, but loads nothing;
// until Load has finished, every action answers 503 "the catalog is
// loading" (see Loaded). The catalog plugin opens, completes its handshake
// and then loads, so that the gateway serves everything else meanwhile.
func Open(ctx context.Context, db *mongo.Database, opts Options) (*Service, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SiteTitle == "" {
		opts.SiteTitle = "toxgate"
	}
	s := &Service{c: newRecordStore(db, opts.Users), st: newReadModel(), log: opts.Logger, opts: opts, locks: map[string]*keyLock{},
		files: opts.Files, vs: newVersionStore(db), ds: opts.DataStore, loaded: make(chan struct{})}
	s.c.groups = newStoreGroups(&s.c, !opts.ConcurrentWrites)
	s.marks = groupcommit.New(markerKeep, func(ctx context.Context, batch []changeEntry) []error {
		ctx, cancel := context.WithTimeout(ctx, groupTimeout)
		defer cancel()
		return groupcommit.All(len(batch), s.recordAll(ctx, batch))
	})
	if s.files == nil {
		fs, err := filestore.New(ctx, db, filestore.Config{Backend: filestore.BackendMongoDB}, opts.Logger)
		if err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		s.files = fs
	}
	s.st.rendered = newReplyCache(opts.ReplyCacheEntries)
	s.st.allowCollaborators, s.st.allowAdminCollaborators = opts.AllowCollaborators, opts.AllowAdminCollaborators
	s.st.auth = opts.Auth
	s.kinds = s.newKinds()
	if err := s.c.ensureIndexes(ctx); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if err := s.vs.ensureIndexes(ctx); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if err := s.c.ensureClaims(ctx); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return s, nil
}

// Load reads the whole catalog into memory (from the index snapshot when
// usable), starts the DataStore loader, the structure index, the activity
// index and the index snapshots, and then lets actions run. Call it once,
// after Open; ctx bounds the load only.
func (s *Service) Load(ctx context.Context) error {
	readAt := time.Now()
	m, err := s.c.readMarker(ctx)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	records := s.opts.RecordsFile
	restored := false
	if records != "" {
		if s.storeID, err = s.c.storeID(ctx); err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		if restored, err = s.loadFromRecords(ctx, records); err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
	}
	if !restored {
		if err := s.load(ctx, m.Seq, readAt, s.opts.GentleLoad); err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
	}
	// What the load left behind (the store's batches, a snapshot read
	// whole) goes back to the system now rather than when the scavenger
	// gets to it: the process's resident size is then about what it holds.
	debug.FreeOSMemory()
	if s.opts.IndexSnapshot != "" {
		s.snapFirst = make(chan struct{})
		written := s.firstSnapshot() // before the catalog serves
		go s.keepSnapshots(context.WithoutCancel(ctx), written)
	}
	s.startDataStore()
	s.startChem()
	go s.warmActivity()
	if records != "" {
		rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		s.stopRecords, s.recordsFirst, s.recordsDone = stop, make(chan struct{}), make(chan struct{})
		go func() {
			defer close(s.recordsDone)
			s.keepRecords(rctx, records)
		}()
	}
	s.isLoaded.Store(true)
	close(s.loaded)
	return nil
}

// Loaded is closed once Load has finished: from then on actions run.
func (s *Service) Loaded() <-chan struct{} { return s.loaded }

// errLoading is the answer to every action while the catalog loads.
var errLoading = ckan.Unavailable("The catalog is loading; please retry")

// Actions lists the actions the catalog serves, by name.
func (s *Service) Actions() []Action {
	out := make([]Action, 0, len(actions))
	for _, a := range actions {
		if a.datastore && s.ds == nil {
			continue
		}
		out = append(out, a.Action)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup reports whether name is a catalog action and whether it accepts GET.
func (s *Service) Lookup(name string) (get, ok bool) {
	a, ok := actions[name]
	if a.datastore && s.ds == nil {
		return false, false
	}
	return a.GET, ok
}

// Do runs one action: after Sync, its auth function (authTable, CKAN's
// check_access), then the action. The error is a *ckan.Error for every
// outcome CKAN defines; anything else is an internal failure (logged
// here).
func (s *Service) Do(ctx context.Context, r Request) (result any, err error) {
	a, ok := actions[r.Action]
	if !ok || (a.datastore && s.ds == nil) {
		return nil, ckan.UnknownAction(r.Action)
	}
	if !s.isLoaded.Load() {
		return nil, errLoading
	}
	if r.Data == nil {
		r.Data = map[string]any{}
	}
	if r.Upload != nil {
		if !takesUpload[r.Action] {
			return nil, ckan.FieldError("upload", "Files are accepted only by resource_create, resource_update and resource_patch")
		}
		r.Data["upload"] = *r.Upload
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("catalog action panicked", "action", r.Action, "panic", p, "stack", string(debug.Stack()))
			result, err = nil, ckan.Internal()
		}
	}()
	if err := s.SyncSince(ctx, r.Arrived); err != nil {
		s.log.Error("catalog sync failed", "action", r.Action, "err", err)
		return nil, ckan.Internal()
	}
	if r.version, err = s.checkAccessVersion(ctx, r.Action, r.Caller, r.Data); err != nil {
		var ce *ckan.Error
		if errors.As(err, &ce) {
			return nil, ce
		}
		s.log.Error("catalog authorization failed", "action", r.Action, "err", err)
		if errors.Is(err, errNoAuthFunction) {
			return nil, ckan.NotAuthorized("")
		}
		return nil, ckan.Internal()
	}
	result, err = a.run(withActor(ctx, r.Caller, r.SiteURL), s, &r)
	var ce *ckan.Error
	if err != nil && !errors.As(err, &ce) {
		s.log.Error("catalog action failed", "action", r.Action, "err", err)
		return nil, ckan.Internal()
	}
	return result, err
}
