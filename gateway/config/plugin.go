package config

import (
	"path/filepath"

	"toxgate/plugins/contract"
)

// PluginSettings is the settings message the gateway hands its plugins:
// the catalog and DataStore sections, with the egress policy of the
// DataStore loader's fetches. Directories are made absolute (a plugin
// may run in another working directory); the embedded DataStore's
// directory defaults to datastore/ beside the embedded store's directory
// (./data/datastore by default).
func (c Config) PluginSettings() contract.Settings {
	cat, ds, a := c.Catalog, c.DataStore, c.Catalog.Auth
	dir := ds.Dir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(filepath.Clean(c.MongoDB.DataDir)), "datastore")
	}
	return contract.Settings{
		Catalog: contract.CatalogSettings{
			ConcurrentWrites: cat.ConcurrentWrites,
			UploadGrace:      cat.UploadGrace, SweepInterval: cat.SweepInterval,
			AllowDatasetCollaborators: cat.AllowDatasetCollaborators, AllowAdminCollaborators: cat.AllowAdminCollaborators,
			ActivityListLimit: cat.ActivityListLimit, ActivityListLimitMax: cat.ActivityListLimitMax,
			MaxVersionsPerDataset: cat.MaxVersionsPerDataset,
			IndexSnapshot:         c.indexSnapshotPath(), IndexSnapshotEvery: cat.IndexSnapshotEvery,
			ReplyCacheEntries: cat.ReplyCacheEntries, MemoryLimit: int64(cat.MemoryLimit),
			Auth: contract.CatalogAuthSettings{
				UserCreateOrganizations: a.UserCreateOrganizations, UserCreateGroups: a.UserCreateGroups,
				CreateUnownedDataset: a.CreateUnownedDataset, AnonCreateDataset: a.AnonCreateDataset,
				PublicUserDetails: a.PublicUserDetails, PublicActivityStreamDetail: a.PublicActivityStreamDetail,
				AllowCollaboratorsToChangeOwnerOrg: a.AllowCollaboratorsToChangeOwnerOrg,
			},
		},
		DataStore: contract.DataStoreSettings{
			URL: ds.URL, Dir: absDir(dir),
			MaxRowsPerCall: ds.MaxRowsPerCall, MaxColumns: ds.MaxColumns, MaxCellBytes: ds.MaxCellBytes,
			MaxTableBytes: int64(ds.MaxTableBytes), SQLTimeout: ds.SQLTimeout, LoadFormats: ds.LoadFormats,
			MaxLoadBytes:     int64(ds.MaxLoadBytes),
			SQLMaxValueBytes: ds.SQLMaxValueBytes, SQLMaxLength: ds.SQLMaxLength, MaxResultBytes: int64(ds.MaxResultBytes),
			SQLiteHeapLimit: int64(ds.SQLiteHeapLimit), PGWorkMem: int64(ds.PGWorkMem), PGTempFileLimit: int64(ds.PGTempFileLimit),
			SQLCallsPerUser: ds.SQLCallsPerUser, SQLCallsAnonymous: ds.SQLCallsAnonymous,
			MaxQWords: ds.MaxQWords, MaxQBytes: ds.MaxQBytes, MaxFilterValues: ds.MaxFilterValues,
			QuotaBytes: int64(ds.QuotaBytes), QuotaTables: int64(ds.QuotaTables), QuotaRows: int64(ds.QuotaRows),
			LoadWorkers: ds.LoadWorkers, LoadWorkersPerUser: ds.LoadWorkersPerUser, LoadQueuePerUser: ds.LoadQueuePerUser,
			LoadFetchTimeout: ds.LoadFetchTimeout, LoadIdleTimeout: c.Egress.IdleTimeout,
			EgressAllow: c.Egress.Allow, EgressMaxRedirects: c.Egress.MaxRedirects,
			StructureIndexMaxRows: ds.StructureIndexMaxRows,
		},
	}
}

// absDir is d as an absolute path ("" stays "").
func absDir(d string) string {
	if d == "" {
		return ""
	}
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// indexSnapshotPath is catalog.index_snapshot as an absolute path: beside
// the embedded store's data directory when empty, "" when "off".
func (c Config) indexSnapshotPath() string {
	switch p := c.Catalog.IndexSnapshot; p {
	case "off":
		return ""
	case "":
		return filepath.Join(absDir(filepath.Dir(filepath.Clean(c.MongoDB.DataDir))), "catalog-index.snap")
	default:
		return absDir(p)
	}
}
