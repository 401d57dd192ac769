package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// EnvSettings carries a plugin's Settings, encoded by EncodeSettings. The
// host sets it for every plugin process; a plugin reads it once at start
// with ReadSettings.
const EnvSettings = "TOXGATE_PLUGIN_SETTINGS"

// maxSettingsBytes bounds the settings message a plugin decodes.
const maxSettingsBytes = 1 << 20

// Settings is the configuration the gateway hands its plugins: the
// catalog and DataStore sections of its configuration (gateway/config),
// with every value filled in by the gateway. A plugin holds no defaults of
// its own: the gateway's configuration is the one place they live.
type Settings struct {
	// Catalog is the catalog section (catalog.* keys).
	Catalog CatalogSettings `json:"catalog"`
	// DataStore is the DataStore section (datastore.* keys) with the
	// egress policy of the loader's fetches.
	DataStore DataStoreSettings `json:"datastore"`
}

// CatalogSettings are the catalog's settings (catalog.* keys).
type CatalogSettings struct {
	// ConcurrentWrites lets write actions run in parallel (a MongoDB
	// replica set); off: one writer at a time.
	ConcurrentWrites bool `json:"concurrent_writes"`
	// UploadGrace and SweepInterval drive the file store sweep.
	UploadGrace   time.Duration `json:"upload_grace"`
	SweepInterval time.Duration `json:"sweep_interval"`
	// Files is the file store's configuration (the files.* keys, as
	// catalog/filestore.Config encodes it); empty: segment collections of
	// the store.
	Files json.RawMessage `json:"files,omitempty"`
	// AllowDatasetCollaborators and AllowAdminCollaborators are CKAN's
	// ckan.auth.allow_dataset_collaborators and allow_admin_collaborators.
	AllowDatasetCollaborators bool `json:"allow_dataset_collaborators"`
	AllowAdminCollaborators   bool `json:"allow_admin_collaborators"`
	// ActivityListLimit and ActivityListLimitMax are the activity lists'
	// default and largest limit.
	ActivityListLimit    int `json:"activity_list_limit"`
	ActivityListLimitMax int `json:"activity_list_limit_max"`
	// MaxVersionsPerDataset bounds the versions of one dataset.
	MaxVersionsPerDataset int `json:"max_versions_per_dataset"`
	// ReplyCacheEntries is how many encoded package_show replies the
	// plugin keeps in memory (catalog.reply_cache_entries).
	ReplyCacheEntries int `json:"reply_cache_entries"`
	// Auth holds CKAN's ckan.auth.* switches.
	Auth CatalogAuthSettings `json:"auth"`
	// IndexSnapshot is the file of the search index snapshot ("": none);
	// IndexSnapshotEvery how often it is written (0: once, after loading).
	IndexSnapshot      string        `json:"index_snapshot,omitempty"`
	IndexSnapshotEvery time.Duration `json:"index_snapshot_every,omitempty"`
	// MemoryLimit is the plugin process's soft memory limit in bytes
	// (runtime/debug.SetMemoryLimit; catalog.memory_limit); 0: none.
	MemoryLimit int64 `json:"memory_limit,omitempty"`
}

// CatalogAuthSettings are CKAN's ckan.auth.* switches (catalog.auth.*).
type CatalogAuthSettings struct {
	// UserCreateOrganizations is ckan.auth.user_create_organizations.
	UserCreateOrganizations bool `json:"user_create_organizations"`
	// UserCreateGroups is ckan.auth.user_create_groups.
	UserCreateGroups bool `json:"user_create_groups"`
	// CreateUnownedDataset is ckan.auth.create_unowned_dataset.
	CreateUnownedDataset bool `json:"create_unowned_dataset"`
	// AnonCreateDataset is ckan.auth.anon_create_dataset.
	AnonCreateDataset bool `json:"anon_create_dataset"`
	// PublicUserDetails is ckan.auth.public_user_details.
	PublicUserDetails bool `json:"public_user_details"`
	// PublicActivityStreamDetail is ckan.auth.public_activity_stream_detail.
	PublicActivityStreamDetail bool `json:"public_activity_stream_detail"`
	// AllowCollaboratorsToChangeOwnerOrg is
	// ckan.auth.allow_collaborators_to_change_owner_org.
	AllowCollaboratorsToChangeOwnerOrg bool `json:"allow_collaborators_to_change_owner_org"`
}

// DataStoreSettings are the DataStore's engine, limits and loader settings
// (datastore.* keys) and the egress policy of the loader's fetches
// (egress.* keys). See catalog/datastore/README.md.
type DataStoreSettings struct {
	// URL is the PostgreSQL URL ("": the embedded engine in Dir).
	URL string `json:"url"`
	// Dir is the embedded engine's absolute directory ("" with URL "":
	// no DataStore).
	Dir string `json:"dir"`

	MaxRowsPerCall int           `json:"max_rows_per_call"`
	MaxColumns     int           `json:"max_columns"`
	MaxCellBytes   int           `json:"max_cell_bytes"`
	MaxTableBytes  int64         `json:"max_table_bytes"`
	SQLTimeout     time.Duration `json:"sql_timeout"`
	LoadFormats    []string      `json:"load_formats"`
	MaxLoadBytes   int64         `json:"max_load_bytes"`

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

	LoadWorkers        int           `json:"load_workers"`
	LoadWorkersPerUser int           `json:"load_workers_per_user"`
	LoadQueuePerUser   int           `json:"load_queue_per_user"`
	LoadFetchTimeout   time.Duration `json:"load_fetch_timeout"`
	LoadIdleTimeout    time.Duration `json:"load_idle_timeout"`
	EgressAllow        []string      `json:"egress_allow"`
	EgressMaxRedirects int           `json:"egress_max_redirects"`

	// StructureIndexMaxRows bounds the catalog's structure index (0: off).
	StructureIndexMaxRows int `json:"structure_index_max_rows"`
}

// EncodeSettings encodes s for EnvSettings.
func EncodeSettings(s Settings) (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode plugin settings: %w", err)
	}
	return string(b), nil
}

// DecodeSettings decodes what EncodeSettings encoded. It fails on an empty
// or oversized message and on one that is not a settings object.
func DecodeSettings(raw string) (Settings, error) {
	var s Settings
	if raw == "" {
		return s, fmt.Errorf("%s is not set", EnvSettings)
	}
	if len(raw) > maxSettingsBytes {
		return s, fmt.Errorf("%s: %d bytes, at most %d", EnvSettings, len(raw), maxSettingsBytes)
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return s, fmt.Errorf("%s: %w", EnvSettings, err)
	}
	if s.Catalog.UploadGrace <= 0 || s.Catalog.SweepInterval <= 0 {
		return s, errors.New(EnvSettings + ": catalog upload_grace and sweep_interval must be positive")
	}
	return s, nil
}

// ReadSettings decodes the settings the host set in the environment that
// getenv reads (os.Getenv in a plugin).
func ReadSettings(getenv func(string) string) (Settings, error) {
	return DecodeSettings(getenv(EnvSettings))
}
