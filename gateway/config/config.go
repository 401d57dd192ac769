// Package config loads the gateway's configuration: defaults, then a YAML
// file, then TOXGATE_* environment variables, each key checked and every bad
// value reported with the key's name.
package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"toxgate/sdk/abi"
)

// DefaultMaxMemoryPages is the most linear memory a module's manifest may
// ask for, in 64 KiB pages: modules.max_memory_pages by default
// (abi.DefaultMaxMemoryPages, the runtime's own default too).
const DefaultMaxMemoryPages = abi.DefaultMaxMemoryPages

// Config is the whole configuration of a toxgate gateway. Each leaf has a
// dotted key (yaml tags joined by dots, e.g. "server.addr") and an
// environment variable (TOXGATE_ plus the key in upper case with dots as
// underscores, e.g. TOXGATE_SERVER_ADDR).
type Config struct {
	Server  Server  `yaml:"server"`
	Log     Log     `yaml:"log"`
	MongoDB MongoDB `yaml:"mongodb"`
	// Store selects the engine of the embedded store (mongodb.uri empty).
	Store   Store   `yaml:"store"`
	Plugins Plugins `yaml:"plugins"`
	Catalog Catalog `yaml:"catalog"`
	// Files selects where the bytes of uploaded files live.
	Files   Files   `yaml:"files"`
	Modules Modules `yaml:"modules"`
	Jobs    Jobs    `yaml:"jobs"`
	Auth    Auth    `yaml:"auth"`
	SMTP    SMTP    `yaml:"smtp"`
	OIDC    OIDC    `yaml:"oidc"`
	// OIDCProvider configures the gateway as an OpenID Connect provider
	// (gateway/oidcprovider).
	OIDCProvider OIDCProvider `yaml:"oidc_provider"`

	// DataStore configures the catalog's DataStore (tables of tabular resources).
	DataStore DataStore `yaml:"datastore"`
	// Egress bounds the outbound fetches of URLs that users or remote
	// sites choose (internal/egress).
	Egress  Egress  `yaml:"egress"`
	Metrics Metrics `yaml:"metrics"`
	// DataCite registers DOIs for datasets and their versions
	// (gateway/citation).
	DataCite DataCite `yaml:"datacite"`
}

// DataCite is the DataCite repository that registers DOIs: off while
// repository_id is empty.
type DataCite struct {
	APIURL       string        `yaml:"api_url" doc:"DataCite's REST API (the test system by default; https://api.datacite.org for real DOIs)"`
	RepositoryID string        `yaml:"repository_id" doc:"the repository's account (empty: DOI registration is off)"`
	Password     string        `yaml:"password" doc:"the repository's password (prefer TOXGATE_DATACITE_PASSWORD)"`
	Prefix       string        `yaml:"prefix" doc:"the repository's DOI prefix, e.g. 10.5072"`
	Timeout      time.Duration `yaml:"timeout" doc:"longest registration call"`
}

// Server holds the HTTP listener settings and limits.
type Server struct {
	Addr            string        `yaml:"addr" doc:"listen address (host:port)"`
	PublicURL       string        `yaml:"public_url" doc:"external base URL, used in links (empty: http://<addr> as listening; required when addr listens on every interface)"`
	TrustedProxies  []string      `yaml:"trusted_proxies" doc:"addresses or CIDR ranges of proxies whose X-Forwarded-For names the client (empty: the TCP peer is the client)"`
	ReadTimeout     time.Duration `yaml:"read_timeout" doc:"max time to read a whole request"`
	WriteTimeout    time.Duration `yaml:"write_timeout" doc:"max time to write a response"`
	IdleTimeout     time.Duration `yaml:"idle_timeout" doc:"keep-alive idle time"`
	MaxBodyBytes    int           `yaml:"max_body_bytes" doc:"largest request body accepted (413 beyond); resource uploads have catalog.max_resource_bytes"`
	MaxBodyMemory   int           `yaml:"max_body_memory" doc:"bytes all request bodies held in memory may take at once (503 beyond)"`
	MaxHeaderBytes  int           `yaml:"max_header_bytes" doc:"largest request header block (431 beyond)"`
	MaxConns        int           `yaml:"max_conns" doc:"max concurrent connections"`
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout" doc:"how long in-flight requests may take at shutdown"`
	ReadyStatus     string        `yaml:"ready_status" doc:"what /readyz's status code waits for: all (every part, models included) or core (store, identity, catalog)"`
}

// Values of server.ready_status.
const (
	ReadyAll  = "all"  // /readyz answers 200 once every part is ready, models included
	ReadyCore = "core" // /readyz answers 200 once the core parts are ready; models may still load
)

// Log sets the format and level of the structured logs.
type Log struct {
	Level  string `yaml:"level" doc:"debug, info, warn or error"`
	Format string `yaml:"format" doc:"text or json"`
	Access bool   `yaml:"access" doc:"write one access-log line per request"`
}

// MongoDB selects the store.
type MongoDB struct {
	URI         string `yaml:"uri" doc:"MongoDB URI; empty starts the embedded store"`
	Database    string `yaml:"database" doc:"database name"`
	DataDir     string `yaml:"data_dir" doc:"embedded store data directory"`
	MaxPoolSize int    `yaml:"max_pool_size" doc:"connection pool size (0: driver default)"`
}

// Store selects where the embedded store (FerretDB in the gateway's
// process, used when mongodb.uri is empty) keeps its data.
type Store struct {
	Backend     string `yaml:"backend" doc:"engine of the embedded store: sqlite (files under mongodb.data_dir, one gateway) or postgresql (the database of store.postgres_url, shared by several gateways)"`
	PostgresURL string `yaml:"postgres_url" doc:"postgres:// URL of the database of store.backend postgresql (may be the DataStore's server, another database)"`
}

// Values of store.backend.
const (
	StoreSQLite     = "sqlite"
	StorePostgreSQL = "postgresql"
)

// Plugins lists the plugin programs the gateway starts.
type Plugins struct {
	Programs       map[string]string `yaml:"programs" doc:"plugin name to program path (env: name=path,...)"`
	Checksums      map[string]string `yaml:"checksums" doc:"plugin name to expected SHA-256 of its program (optional)"`
	HealthInterval time.Duration     `yaml:"health_interval" doc:"how often each plugin is pinged"`
	RestartBackoff time.Duration     `yaml:"restart_backoff" doc:"first delay before restarting a crashed plugin (doubles, max 30s)"`
	Watch          bool              `yaml:"watch" doc:"reload a plugin when its program changes on disk"`
	Transport      string            `yaml:"transport" doc:"RPC transport between the gateway and its plugins: netrpc or grpc"`
}

// Catalog configures the catalog's file store.
type Catalog struct {
	MaxResourceBytes int           `yaml:"max_resource_bytes" doc:"largest file a resource upload may hold (413 beyond)"`
	UploadGrace      time.Duration `yaml:"upload_grace" doc:"an upload without progress, or a stored file no resource holds, is removed by the sweep after this long"`
	SweepInterval    time.Duration `yaml:"sweep_interval" doc:"how often the catalog plugin sweeps the file store"`
	PublishModels    bool          `yaml:"publish_models" doc:"publish one dataset per loaded model (card, module SHA-256, training data, page link) in models_org"`
	ModelsOrg        string        `yaml:"models_org" doc:"organization holding the models' datasets"`
	ModelsDataDir    string        `yaml:"models_data_dir" doc:"source folder of the modules' cards and data files (modules/, with internal/data/SOURCES.md)"`
	// AllowDatasetCollaborators and AllowAdminCollaborators are CKAN's
	// ckan.auth.allow_dataset_collaborators and allow_admin_collaborators.
	AllowDatasetCollaborators bool `yaml:"allow_dataset_collaborators" doc:"users may be made collaborators on single datasets: a member reads it, an editor edits it and its resources"`
	AllowAdminCollaborators   bool `yaml:"allow_admin_collaborators" doc:"collaborators may also have the admin capacity, which manages the dataset's collaborators"`
	// ActivityListLimit and ActivityListLimitMax are CKAN's
	// ckan.activity_list_limit and ckan.activity_list_limit_max.
	ActivityListLimit    int  `yaml:"activity_list_limit" doc:"activities an activity list returns when limit is not given (ckan.activity_list_limit)"`
	ActivityListLimitMax int  `yaml:"activity_list_limit_max" doc:"largest limit of an activity list; larger ones are cut to it (ckan.activity_list_limit_max)"`
	DCATPerPage          int  `yaml:"dcat_per_page" doc:"datasets per page of the DCAT catalog (/catalog.ttl and friends, Hydra-paged)"`
	MaxUploadsPerUser    int  `yaml:"max_uploads_per_user" doc:"resource uploads one user may have in progress at once on one gateway (429 + Retry-After beyond)"`
	ConcurrentWrites     bool `yaml:"concurrent_writes" doc:"the catalog plugin sends its grouped store writes in parallel (a MongoDB replica set); otherwise one at a time"`
	ReplyCacheEntries    int  `yaml:"reply_cache_entries" doc:"encoded package_show replies the catalog plugin keeps in memory, the most recently read; others are encoded again when read"`
	// MaxVersionsPerDataset bounds dataset_version_create.
	MaxVersionsPerDataset int `yaml:"max_versions_per_dataset" doc:"versions one dataset may have (deleted ones not counted); each copies the dataset's DataStore tables"`
	// IndexSnapshot and IndexSnapshotEvery place and pace the catalog
	// plugin's search index snapshot (catalog/README.md, "Start-up").
	IndexSnapshot      string        `yaml:"index_snapshot" doc:"file of the catalog's search index snapshot, which a starting catalog plugin begins from; empty: catalog-index.snap beside mongodb.data_dir; off: none; the datasets' records file is kept beside it, <file>.records"`
	IndexSnapshotEvery time.Duration `yaml:"index_snapshot_every" doc:"how often the catalog plugin writes the snapshot while the catalog changes (0: once, after loading)"`
	// MemoryLimit is the catalog plugin's soft memory limit
	// (runtime/debug.SetMemoryLimit; catalog/README.md, "Memory per dataset").
	MemoryLimit int `yaml:"memory_limit" doc:"soft memory limit of the catalog plugin process in bytes: its collector runs more often as the heap nears it (0: none, the heap may grow to twice the live data)"`
	// Auth holds CKAN's ckan.auth.* switches.
	Auth CatalogAuth `yaml:"auth"`
}

// Files selects the backend of the catalog's file store (catalog/filestore):
// the bytes of new files go to Backend; files already stored are read from
// the backend that holds them while it stays configured. The catalog plugin
// receives these as TOXGATE_CATALOG_FILES (JSON) with the AWS_* variables
// of the gateway's environment.
type Files struct {
	Backend  string   `yaml:"backend" doc:"where the bytes of new files go: dir (files.dir), s3 (files.s3) or mongodb (segment collections of the catalog's database)"`
	Dir      string   `yaml:"dir" doc:"files directory of the dir backend (empty: files/ beside mongodb.data_dir, i.e. ./data/files); several gateways need it on a shared file system"`
	Download string   `yaml:"download" doc:"proxy: downloads stream through the gateway (Range, ETag); redirect: an authorized download of a file in s3 is a 302 to a presigned URL (files.s3.presign_ttl)"`
	S3       FilesS3  `yaml:"s3"`
	Tus      FilesTus `yaml:"tus"`
}

// FilesTus configures the resumable uploads at /uploads/ (gateway/tusup):
// where partial uploads live and how much one user may hold.
type FilesTus struct {
	Dir                    string        `yaml:"dir" doc:"directory of partial and finished resumable uploads (empty: uploads/ beside mongodb.data_dir, i.e. ./data/uploads); survives a crash; one gateway per directory"`
	Expiry                 time.Duration `yaml:"expiry" doc:"an upload, finished or not, is removed this long after its creation unless attached to a resource (Upload-Expires)"`
	CleanInterval          time.Duration `yaml:"clean_interval" doc:"how often expired uploads are removed"`
	MaxUnfinishedPerUser   int           `yaml:"max_unfinished_per_user" doc:"unfinished resumable uploads one user may have at once (429 beyond)"`
	MaxPendingBytesPerUser int           `yaml:"max_pending_bytes_per_user" doc:"declared bytes of one user's unfinished resumable uploads (413 beyond)"`
}

// FilesS3 is the S3-compatible bucket of the s3 backend. Empty credentials
// come from the usual AWS environment (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, ~/.aws/credentials, an instance role).
type FilesS3 struct {
	Bucket          string        `yaml:"bucket" doc:"bucket holding the files (must exist; empty leaves the s3 backend out)"`
	Prefix          string        `yaml:"prefix" doc:"start of every object key (files/ gives files/<file id>)"`
	Region          string        `yaml:"region" doc:"bucket region (empty: us-east-1)"`
	Endpoint        string        `yaml:"endpoint" doc:"URL of an S3-compatible server, e.g. http://127.0.0.1:7070 (empty: AWS S3)"`
	PathStyle       bool          `yaml:"path_style" doc:"address the bucket in the URL path rather than the host name (most S3-compatible servers)"`
	AccessKeyID     string        `yaml:"access_key_id" doc:"access key (empty: from the AWS environment)"`
	SecretAccessKey string        `yaml:"secret_access_key" doc:"secret key (empty: from the AWS environment)"`
	PartBytes       int           `yaml:"part_bytes" doc:"part size of a multipart upload, the memory one upload holds (5 MiB to 5 GiB)"`
	PresignTTL      time.Duration `yaml:"presign_ttl" doc:"lifetime of a presigned download URL (files.download: redirect)"`
}

// CatalogAuth are CKAN's ckan.auth.* switches that a shared deployment
// sets: who may create organizations, groups and datasets without an
// organization, and who sees user details and activity detail. The
// catalog plugin receives them in its settings message (PluginSettings;
// user_list and user_show, served by the core, read
// public_user_details here). See catalog/README.md, "Authorization".
type CatalogAuth struct {
	UserCreateOrganizations            bool `yaml:"user_create_organizations" doc:"every logged-in user may create organizations, becoming their admin (ckan.auth.user_create_organizations); otherwise sysadmins only"`
	UserCreateGroups                   bool `yaml:"user_create_groups" doc:"every logged-in user may create groups (ckan.auth.user_create_groups); otherwise sysadmins only"`
	CreateUnownedDataset               bool `yaml:"create_unowned_dataset" doc:"datasets may have no organization: every logged-in user may create one, which its creator edits (ckan.auth.create_unowned_dataset)"`
	AnonCreateDataset                  bool `yaml:"anon_create_dataset" doc:"anonymous callers may create datasets without organization; needs create_unowned_dataset (ckan.auth.anon_create_dataset)"`
	PublicUserDetails                  bool `yaml:"public_user_details" doc:"anonymous callers see users: user_list, user_show, organization and group members, a user's activity and organizations (ckan.auth.public_user_details)"`
	PublicActivityStreamDetail         bool `yaml:"public_activity_stream_detail" doc:"an activity's data and diffs for whoever may read the dataset; otherwise for those who may edit it (ckan.auth.public_activity_stream_detail)"`
	AllowCollaboratorsToChangeOwnerOrg bool `yaml:"allow_collaborators_to_change_owner_org" doc:"editor and admin collaborators may move a dataset to another organization where they may create datasets; otherwise that needs edit rights in its organization (ckan.auth.allow_collaborators_to_change_owner_org)"`
}

// DataStore selects the DataStore's SQL engine and its limits. The catalog
// plugin receives these in its settings message (PluginSettings).
type DataStore struct {
	URL            string        `yaml:"url" doc:"PostgreSQL URL (postgres://user:pass@host/db); empty: embedded SQLite under dir"`
	Dir            string        `yaml:"dir" doc:"embedded engine directory (empty: datastore/ beside mongodb.data_dir)"`
	MaxRowsPerCall int           `yaml:"max_rows_per_call" doc:"most records one datastore_create/datastore_upsert call may carry"`
	MaxColumns     int           `yaml:"max_columns" doc:"most fields a table may have"`
	MaxCellBytes   int           `yaml:"max_cell_bytes" doc:"largest value of one cell, in bytes of text"`
	MaxTableBytes  int           `yaml:"max_table_bytes" doc:"largest table, as the sum of its values' text sizes"`
	SQLTimeout     time.Duration `yaml:"sql_timeout" doc:"time limit of one datastore_search_sql or datastore_search call, enforced by the engine"`
	LoadFormats    []string      `yaml:"load_formats" doc:"resource formats loaded automatically (empty: no automatic loading)"`
	MaxLoadBytes   int           `yaml:"max_load_bytes" doc:"largest file the loader reads"`
	// Read limits of datastore_search and datastore_search_sql, and
	// per-user quotas: see catalog/datastore/README.md.
	SQLMaxValueBytes  int `yaml:"sql_max_value_bytes" doc:"largest string, blob or row a DataStore read may build or return (SQLite: SQLITE_LIMIT_LENGTH; PostgreSQL: largest result row)"`
	SQLMaxLength      int `yaml:"sql_max_length" doc:"longest datastore_search_sql statement, in bytes"`
	MaxResultBytes    int `yaml:"max_result_bytes" doc:"most bytes of values one datastore_search or datastore_search_sql answer may carry"`
	SQLiteHeapLimit   int `yaml:"sqlite_heap_limit" doc:"hard heap limit of the embedded SQLite engine in the catalog plugin, all connections together (soft limit: half)"`
	PGWorkMem         int `yaml:"pg_work_mem" doc:"PostgreSQL work_mem of datastore_search_sql, in bytes"`
	PGTempFileLimit   int `yaml:"pg_temp_file_limit" doc:"PostgreSQL temp_file_limit of datastore_search_sql, in bytes (needs a role allowed to set it)"`
	SQLCallsPerUser   int `yaml:"sql_calls_per_user" doc:"datastore_search_sql calls one user may run at once; past it 429"`
	SQLCallsAnonymous int `yaml:"sql_calls_anonymous" doc:"datastore_search_sql calls all anonymous callers together may run at once; past it 429"`
	MaxQWords         int `yaml:"max_q_words" doc:"most different words in datastore_search's q"`
	MaxQBytes         int `yaml:"max_q_bytes" doc:"longest text of datastore_search's q, in bytes"`
	MaxFilterValues   int `yaml:"max_filter_values" doc:"most values in the filters of one datastore_search or delete"`
	QuotaBytes        int `yaml:"quota_bytes" doc:"most bytes the DataStore tables one user owns may hold together (sysadmins exempt)"`
	QuotaTables       int `yaml:"quota_tables" doc:"most DataStore tables one user may own (sysadmins exempt)"`
	QuotaRows         int `yaml:"quota_rows" doc:"most rows the DataStore tables one user owns may hold together (sysadmins exempt)"`

	// StructureIndexMaxRows bounds the catalog's structure index.
	StructureIndexMaxRows int `yaml:"structure_index_max_rows" doc:"most DataStore rows with a SMILES the structure index (structure_search) holds over every table, about 550 bytes each; 0 turns the index off"`

	// The loader's queue: see catalog/datastore/README.md.
	LoadWorkers        int           `yaml:"load_workers" doc:"loads the catalog plugin runs at once"`
	LoadWorkersPerUser int           `yaml:"load_workers_per_user" doc:"loads of one user that run at once (the others wait their turn)"`
	LoadQueuePerUser   int           `yaml:"load_queue_per_user" doc:"loads one user may have waiting; past it xloader_submit answers 429 and an automatic load ends in error"`
	LoadFetchTimeout   time.Duration `yaml:"load_fetch_timeout" doc:"longest fetch of a linked file, its last byte included"`
}

// Egress bounds outbound fetches of URLs chosen by users or by remote
// sites: the DataStore loader's links and the files of catalog import.
// See internal/egress/README.md.
type Egress struct {
	Allow        []string      `yaml:"allow" doc:"destinations reached although internal: IP, CIDR, IP:port, host, host:port, *.domain"`
	MaxRedirects int           `yaml:"max_redirects" doc:"most redirects one fetch follows (0: none)"`
	IdleTimeout  time.Duration `yaml:"idle_timeout" doc:"a fetch whose server sends nothing for this long is aborted"`
}

// Modules configures the WebAssembly model host.
type Modules struct {
	Dir            string        `yaml:"dir" doc:"directory of .wasm model modules"`
	CacheDir       string        `yaml:"cache_dir" doc:"on-disk compilation cache"`
	PoolSize       int           `yaml:"pool_size" doc:"instances per module"`
	Timeout        time.Duration `yaml:"timeout" doc:"default per-call deadline"`
	MaxMemoryPages int           `yaml:"max_memory_pages" doc:"memory cap per instance, in 64 KiB pages"`
	MaxInputBytes  int           `yaml:"max_input_bytes" doc:"largest model input accepted"`
	MaxUploadBytes int           `yaml:"max_upload_bytes" doc:"largest module accepted by POST /admin/modules"`
	Watch          bool          `yaml:"watch" doc:"hot-load modules when the directory changes"`
	// Fair sharing, batch slicing and release of idle modules: see gateway/modulehost/README.md.
	IdleRelease     time.Duration     `yaml:"idle_release" doc:"a module without a call for this long drops its instances and compiled code (negative: never)"`
	LoadWorkers     int               `yaml:"load_workers" doc:"module files compiled at once at start and on reload (0: one per CPU)"`
	RunSlots        int               `yaml:"run_slots" doc:"model calls run at once when callers contend (0: one per CPU); a caller below its fair share starts at once"`
	RoleWeights     map[string]string `yaml:"role_weights" doc:"role: weight of the fair share of a caller holding it (default 1; the largest of a caller's roles counts)"`
	QueueSize       int               `yaml:"queue_size" doc:"calls that may wait for an instance of one module; past it 429"`
	CallerQueue     int               `yaml:"caller_queue" doc:"calls one caller may have waiting for one module; past it 429"`
	QueueTimeout    time.Duration     `yaml:"queue_timeout" doc:"longest wait for an instance before 429 (0s: the module's call timeout)"`
	CallerRunning   int               `yaml:"caller_running" doc:"hard cap on the calls one caller runs at once across all models (0: none)"`
	BatchSliceItems int               `yaml:"batch_slice_items" doc:"most list items per slice of a batch request"`
	BatchSliceBytes int               `yaml:"batch_slice_bytes" doc:"most bytes of list items per slice of a batch request"`
	RequireToken    bool              `yaml:"require_token" doc:"model calls need a token of a user with the models role"`
	BackgroundShare int               `yaml:"background_percent" doc:"percent of a module's instances, and of the run slots, scoring jobs may hold at once (at least one)"`
	// ResponseCacheBytes bounds the response cache (0: off); see gateway/modulehost/README.md.
	ResponseCacheBytes int `yaml:"response_cache_bytes" doc:"bytes of recent model answers kept, keyed by module SHA-256, route and canonical input (0: no cache)"`
}

// Weights parses role_weights: role → weight of the fair share (a
// positive number, at most 1000).
func (m Modules) Weights() (map[string]float64, error) {
	out := make(map[string]float64, len(m.RoleWeights))
	for role, v := range m.RoleWeights {
		w, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(w > 0 && w <= 1000) {
			return nil, fmt.Errorf("role %q: weight %q is not a number above 0 and at most 1000", role, v)
		}
		out[role] = w
	}
	return out, nil
}

// Jobs configures scoring jobs (POST /jobs): see gateway/jobs/README.md.
type Jobs struct {
	Workers      int           `yaml:"workers" doc:"chunks this gateway scores at once (0: none; jobs are still accepted)"`
	ChunkRows    int           `yaml:"chunk_rows" doc:"rows of a chunk, the unit of work a gateway leases"`
	CallRows     int           `yaml:"call_rows" doc:"rows of one model call of a job"`
	Lease        time.Duration `yaml:"lease" doc:"how long a chunk stays with a gateway that stopped renewing its lease"`
	PollInterval time.Duration `yaml:"poll_interval" doc:"how often a gateway looks for job work"`
	MaxRows      int           `yaml:"max_rows" doc:"most rows of a job's input table"`
	MaxPerUser   int           `yaml:"max_per_user" doc:"queued and running jobs one user may have at once, across the gateways of the store (429 beyond)"`
	VersionInput bool          `yaml:"version_input" doc:"a job records the dataset version it scores, making one when the input table changed since the dataset's last version"`
}

// Auth configures accounts, sessions and tokens.
type Auth struct {
	AdminUsername string        `yaml:"admin_username" doc:"first sysadmin created on an empty store"`
	AdminEmail    string        `yaml:"admin_email" doc:"e-mail of the first sysadmin"`
	AdminPassword string        `yaml:"admin_password" doc:"initial password of the first sysadmin (empty: generated and printed once)"`
	Roles         []string      `yaml:"roles" doc:"roles an administrator may grant besides sysadmin, models, notebooks"`
	SessionTTL    time.Duration `yaml:"session_ttl" doc:"web session lifetime"`
	TokenCacheTTL time.Duration `yaml:"token_cache_ttl" doc:"how long a checked token is cached (revocation delay bound)"`
	VerifyTTL     time.Duration `yaml:"verify_ttl" doc:"lifetime of an e-mail verification link"`
	// Login throttling: see identity.Service.Login.
	LoginMaxFails        int           `yaml:"login_max_fails" doc:"login attempts of one account from one address that go through at once; then each further one waits"`
	LoginDelay           time.Duration `yaml:"login_delay" doc:"wait after login_max_fails attempts of one account from one address; doubles with each further attempt"`
	LoginMaxDelay        time.Duration `yaml:"login_max_delay" doc:"longest wait between two login attempts of one account from one address"`
	LoginAccountMaxFails int           `yaml:"login_account_max_fails" doc:"failed logins of one account from all addresses within a window of login_account_window and the one before it, after which its logins are refused until the window ends"`
	LoginAccountWindow   time.Duration `yaml:"login_account_window" doc:"the fixed windows of login_account_max_fails; also how long an idle address's count is kept"`
	LoginThrottleEntries int           `yaml:"login_throttle_entries" doc:"(account, address) pairs the login throttle keeps in memory; the least recently used go first"`
	SecureCookies        bool          `yaml:"secure_cookies" doc:"mark cookies Secure (set behind TLS)"`
	TokenMaxTTL          time.Duration `yaml:"token_max_ttl" doc:"longest API token lifetime (0: no limit)"`
	BcryptCost           int           `yaml:"bcrypt_cost" doc:"password hashing cost"`
}

// SMTP configures outgoing mail (e-mail verification). Empty host: links are logged.
type SMTP struct {
	Host     string `yaml:"host" doc:"SMTP server host (empty: verification links go to the log)"`
	Port     int    `yaml:"port" doc:"SMTP server port"`
	Username string `yaml:"username" doc:"SMTP user"`
	Password string `yaml:"password" doc:"SMTP password"`
	From     string `yaml:"from" doc:"sender address"`
}

// OIDC configures acceptance of bearer JWTs from an identity provider.
type OIDC struct {
	Issuer     string `yaml:"issuer" doc:"issuer URL (empty: OIDC off)"`
	JWKSURL    string `yaml:"jwks_url" doc:"JWKS URL (empty: <issuer>/protocol/openid-connect/certs)"`
	Audience   string `yaml:"audience" doc:"required aud"`
	RolesClaim string `yaml:"roles_claim" doc:"dotted path of the roles claim"`
	UserClaim  string `yaml:"user_claim" doc:"claim holding the user name"`
}

// OIDCProvider configures toxgate's own OpenID Connect provider (single
// sign-on for JupyterHub, oauth2-proxy and other relying parties).
type OIDCProvider struct {
	Enabled         bool          `yaml:"enabled" doc:"serve the OpenID Connect provider under /oidc (issuer <server.public_url>/oidc)"`
	AccessTokenTTL  time.Duration `yaml:"access_token_ttl" doc:"lifetime of an access token (JWT, accepted by the gateway as a Bearer token)"`
	IDTokenTTL      time.Duration `yaml:"id_token_ttl" doc:"lifetime of an ID token"`
	RefreshTokenTTL time.Duration `yaml:"refresh_token_ttl" doc:"lifetime of a refresh token (each use replaces it by a new one with a new lifetime)"`
	AuthRequestTTL  time.Duration `yaml:"auth_request_ttl" doc:"how long a sign-in (authorization request and its code) may take"`
	KeyRotation     time.Duration `yaml:"key_rotation" doc:"how long one signing key signs before a new one replaces it (old keys stay published until their tokens expire)"`
	MaxRequestBytes int           `yaml:"max_request_bytes" doc:"largest query string or form body an /oidc endpoint accepts (400 invalid_request beyond)"`
	MaxClients      int           `yaml:"max_clients" doc:"most registered clients"`
}

// Metrics sets where the Prometheus metrics are served and who may read them.
type Metrics struct {
	Addr  string `yaml:"addr" doc:"serve /metrics on this host:port only, not on server.addr (empty: on server.addr)"`
	Token string `yaml:"token" doc:"bearer token a scraper must send for /metrics (empty: none needed)"`
}

// Default returns the configuration used when nothing is set.
func Default() Config {
	return Config{
		Server: Server{
			Addr:            "127.0.0.1:8080",
			ReadyStatus:     ReadyAll,
			TrustedProxies:  []string{},
			ReadTimeout:     30 * time.Second,
			WriteTimeout:    60 * time.Second,
			IdleTimeout:     120 * time.Second,
			MaxBodyBytes:    8 << 20,
			MaxBodyMemory:   256 << 20,
			MaxHeaderBytes:  16 << 10,
			MaxConns:        10000,
			ShutdownTimeout: 15 * time.Second,
		},
		Log:     Log{Level: "info", Format: "text", Access: true},
		MongoDB: MongoDB{Database: "toxgate", DataDir: "./data/store"},
		Store:   Store{Backend: StoreSQLite},
		Plugins: Plugins{
			Programs:       map[string]string{"catalog": "./bin/toxgate-catalog"},
			Checksums:      map[string]string{},
			HealthInterval: 2 * time.Second,
			RestartBackoff: 250 * time.Millisecond,
			Watch:          true,
			Transport:      "netrpc",
		},
		Files: Files{Backend: "dir", Download: "proxy", S3: FilesS3{PartBytes: 16 << 20, PresignTTL: 5 * time.Minute},
			Tus: FilesTus{Expiry: 24 * time.Hour, CleanInterval: 10 * time.Minute, MaxUnfinishedPerUser: 4, MaxPendingBytesPerUser: 100 << 30}},
		Catalog: Catalog{MaxResourceBytes: 50 << 30, UploadGrace: 2 * time.Minute, SweepInterval: time.Minute,
			PublishModels: true, ModelsOrg: "toxgate-models", ModelsDataDir: "./modules",
			AllowDatasetCollaborators: true, DCATPerPage: 100,
			ActivityListLimit: 31, ActivityListLimitMax: 100, MaxUploadsPerUser: 2, ConcurrentWrites: false,
			MaxVersionsPerDataset: 100,
			IndexSnapshot:         "", IndexSnapshotEvery: 0,
			ReplyCacheEntries: 20000, MemoryLimit: 0,
			Auth: CatalogAuth{UserCreateOrganizations: false, UserCreateGroups: false, CreateUnownedDataset: false,
				AnonCreateDataset: false, PublicUserDetails: false, PublicActivityStreamDetail: false,
				AllowCollaboratorsToChangeOwnerOrg: false}},
		DataStore: DataStore{
			MaxRowsPerCall: 100000,
			MaxColumns:     500,
			MaxCellBytes:   1 << 20,
			MaxTableBytes:  10 << 30,
			SQLTimeout:     10 * time.Second,
			LoadFormats:    []string{"CSV", "TSV", "XLSX"},
			MaxLoadBytes:   1 << 30,

			SQLMaxValueBytes:   16 << 20,
			SQLMaxLength:       64 << 10,
			MaxResultBytes:     64 << 20,
			SQLiteHeapLimit:    1 << 30,
			PGWorkMem:          16 << 20,
			PGTempFileLimit:    1 << 30,
			SQLCallsPerUser:    2,
			SQLCallsAnonymous:  4,
			MaxQWords:          20,
			MaxQBytes:          1000,
			MaxFilterValues:    1000,
			QuotaBytes:         10 << 30,
			QuotaTables:        1000,
			QuotaRows:          100000000,
			LoadWorkers:        4,
			LoadWorkersPerUser: 2,
			LoadQueuePerUser:   20,
			LoadFetchTimeout:   15 * time.Minute,

			StructureIndexMaxRows: 2000000,
		},
		Egress:   Egress{Allow: []string{}, MaxRedirects: 5, IdleTimeout: 30 * time.Second},
		DataCite: DataCite{APIURL: "https://api.test.datacite.org", Timeout: 30 * time.Second},
		Jobs:     Jobs{Workers: 2, ChunkRows: 1000, CallRows: 100, Lease: 30 * time.Second, PollInterval: time.Second, MaxRows: 1000000, MaxPerUser: 4, VersionInput: true},
		Modules: Modules{
			Dir:             "./bin/modules",
			CacheDir:        "./data/wazero-cache",
			PoolSize:        4,
			Timeout:         10 * time.Second,
			MaxMemoryPages:  DefaultMaxMemoryPages,
			MaxInputBytes:   4 << 20,
			MaxUploadBytes:  64 << 20,
			Watch:           true,
			RequireToken:    true,
			IdleRelease:     2 * time.Minute,
			RoleWeights:     map[string]string{},
			QueueSize:       512,
			CallerQueue:     128,
			BatchSliceItems: 50,
			BatchSliceBytes: 64 << 10,
			BackgroundShare: 50,
			// 64 MiB: about 75,000 single-SMILES hERG answers.
			ResponseCacheBytes: 64 << 20,
		},
		Auth: Auth{
			AdminUsername: "admin",
			AdminEmail:    "admin@localhost",
			Roles:         []string{},
			SessionTTL:    12 * time.Hour,
			TokenCacheTTL: 2 * time.Second,
			VerifyTTL:     24 * time.Hour,
			BcryptCost:    10,

			LoginMaxFails:        5,
			LoginDelay:           time.Second,
			LoginMaxDelay:        5 * time.Minute,
			LoginAccountMaxFails: 100,
			LoginAccountWindow:   15 * time.Minute,
			LoginThrottleEntries: 100000,
		},
		SMTP: SMTP{Port: 587},
		OIDC: OIDC{RolesClaim: "realm_access.roles", UserClaim: "preferred_username"},
		OIDCProvider: OIDCProvider{
			Enabled:         true,
			AccessTokenTTL:  10 * time.Minute,
			IDTokenTTL:      10 * time.Minute,
			RefreshTokenTTL: 30 * 24 * time.Hour,
			AuthRequestTTL:  10 * time.Minute,
			KeyRotation:     30 * 24 * time.Hour,
			MaxRequestBytes: 16 << 10,
			MaxClients:      1000,
		},
	}
}
