package catalog

import (
	"context"
	"path"
	"strings"

	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
)

// Reads as of a version: the actions below answer from the version's
// frozen metadata, the files it holds and its snapshot tables when the
// request names one (Request.version, found and authorized by
// checkAccessVersion).

// versionPackageShow is package_show as of v.
func versionPackageShow(v *Version) (any, error) {
	return ckan.RawJSON(v.Package), nil
}

// versionResource is resource id's dict in v's frozen metadata.
func versionResource(v *Version, id string) (map[string]any, error) {
	pkg, err := v.PackageDict()
	if err != nil {
		return nil, err
	}
	list, _ := pkg["resources"].([]any)
	for _, r := range list {
		if m, ok := r.(map[string]any); ok && m["id"] == id {
			return m, nil
		}
	}
	return nil, ckan.NotFound("Resource was not found.")
}

// versionResourceShow is resource_show as of v.
func versionResourceShow(v *Version, id string) (any, error) {
	return versionResource(v, id)
}

// versionResourceFile is resource_file as of v: the file v holds.
func (s *Service) versionResourceFile(v *Version, id string) (any, error) {
	m, err := versionResource(v, id)
	if err != nil {
		return nil, err
	}
	for _, r := range v.Resources {
		if r.ID != id {
			continue
		}
		if r.FileID == "" {
			return nil, ckan.NotFound("Resource has no uploaded file.")
		}
		u, _ := m["url"].(string)
		name := ""
		if d := s.st.lookupDataset(v.DatasetID); d != nil {
			name = d.Name
		}
		return map[string]any{"file_id": r.FileID, "filename": path.Base(u), "package_id": v.DatasetID, "package_name": name,
			"version_id": v.ID, "version_name": v.Name}, nil
	}
	return nil, ckan.NotFound("Resource was not found.")
}

// versionTable is the snapshot table of resource id in v, or 404.
func versionTable(v *Version, id string) (string, error) {
	for _, r := range v.Resources {
		if r.ID == id && r.Table != "" {
			return r.Table, nil
		}
	}
	return "", ckan.NotFound("Resource \"" + id + "\" has no DataStore table in version " + v.ID)
}

// asResource puts the resource id (and the version) back where the
// DataStore answered with the snapshot's name.
func asResource(out map[string]any, snap, id string, v *Version) map[string]any {
	if out == nil {
		return out
	}
	if _, ok := out["resource_id"]; ok {
		out["resource_id"] = id
	}
	if links, ok := out["_links"].(map[string]any); ok {
		for k, l := range links {
			if s, ok := l.(string); ok {
				links[k] = strings.ReplaceAll(s, snap, id) + "&version=" + v.ID
			}
		}
	}
	return out
}

// versionDSSearch is datastore_search (or, info, datastore_info) as of v.
func (s *Service) versionDSSearch(ctx context.Context, v *Version, data map[string]any, info bool) (any, error) {
	id := datastore.ResourceID(data)
	snap, err := versionTable(v, id)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if info {
		out, err = s.ds.Info(ctx, snap)
	} else {
		out, err = s.ds.Search(ctx, snap, data)
	}
	if err != nil {
		return nil, err
	}
	return asResource(out, snap, id, v), nil
}

// versionDSSearchSQL is datastore_search_sql as of v: the statement's
// tables named by v's resource ids read v's snapshots.
func (s *Service) versionDSSearchSQL(ctx context.Context, r *Request) (any, error) {
	v := r.version
	tables := map[string]string{}
	for _, res := range v.Resources {
		if res.Table != "" {
			tables[res.ID] = res.Table
		}
	}
	return s.ds.SearchSQLAsOf(ctx, r.Data, r.Caller.UserID, func(id string) error {
		if _, ok := tables[id]; ok {
			return nil // v's dataset: authorized by authVersionRead
		}
		return s.authDatastoreSQLTable(r.Caller, id)
	}, tables)
}
