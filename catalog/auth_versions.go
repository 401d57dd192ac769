package catalog

import (
	"context"

	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
)

// Auth functions of the dataset versions (versions.go): editors of the
// dataset create and rename its versions, its readers list, show, compare
// and read them, sysadmins delete them. A read that names a version
// ("version" on package_show, resource_show, the downloads, datastore_info,
// datastore_search, datastore_search_sql) is decided by authVersionRead on
// the version's dataset, which may have lost the resource since.

// versionedReads are the read actions that take "version".
var versionedReads = map[string]bool{
	"package_show": true, "resource_show": true, "resource_file": true,
	"datastore_info": true, "datastore_search": true, "datastore_search_sql": true,
	"dataset_version_show": true,
}

// versionFor finds the version a call names before its auth function runs
// (a read of the store, outside the read lock): dataset_version_show's and
// _update's "id" (or "dataset" and "version"), and "version" on the
// versioned reads. nil when the call names none; 404 when it names one
// that does not exist.
func (s *Service) versionFor(ctx context.Context, action string, data map[string]any) (*Version, error) {
	switch action {
	case "dataset_version_show", "dataset_version_update", "dataset_version_doi_set":
		return s.versionByRequest(ctx, data)
	}
	if !versionedReads[action] {
		return nil, nil
	}
	ref, cerr := versionRef(data, "version")
	if cerr != nil {
		return nil, cerr
	}
	if ref == "" {
		return nil, nil
	}
	var v *Version
	var err error
	switch action {
	case "package_show":
		d := s.st.lookupDataset(datasetRef(data))
		if d == nil {
			return nil, ckan.NotFound("")
		}
		v, err = s.findVersion(ctx, d.ID, "", ref)
	case "datastore_search_sql":
		v, err = s.findVersion(ctx, "", "", ref)
	case "resource_show", "resource_file":
		id, _ := str(data["id"])
		if id == "" {
			return nil, ckan.FieldError("id", ckan.MsgMissing)
		}
		v, err = s.findVersion(ctx, "", id, ref)
	default:
		id := datastore.ResourceID(data)
		if id == "" {
			return nil, ckan.FieldError("resource_id", ckan.MsgMissing)
		}
		v, err = s.findVersion(ctx, "", id, ref)
	}
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, versionNotFound()
	}
	return v, nil
}

// versionDataset is the dataset of the call's version. Callers hold a lock.
func (a *authArgs) versionDataset() (*Dataset, error) {
	if a.version == nil {
		return nil, versionNotFound()
	}
	d := a.st.datasets[a.version.DatasetID]
	if d == nil {
		return nil, ckan.NotFound("Package was not found.")
	}
	return d, nil
}

// authVersionRead: those who may read the version's dataset.
func authVersionRead(a *authArgs) error {
	d, err := a.versionDataset()
	if err != nil {
		return err
	}
	if !a.st.canRead(a.c, d) {
		return denied(a.c, "read package %s", d.ID)
	}
	return nil
}

// authVersionUpdate: those who may edit the version's dataset.
func authVersionUpdate(a *authArgs) error {
	d, err := a.versionDataset()
	if err != nil {
		return err
	}
	if !a.st.canEdit(a.c, d, PermUpdateDataset) {
		return denied(a.c, "edit package %s", d.ID)
	}
	return nil
}

// versionedDataset is the dataset a call's "dataset" names, or 409/404.
func versionedDataset(a *authArgs) (*Dataset, error) {
	ref, _ := str(a.data["dataset"])
	if ref == "" {
		return nil, ckan.FieldError("dataset", ckan.MsgMissing)
	}
	d := a.st.dataset(ref)
	if d == nil {
		return nil, ckan.NotFound("Package was not found.")
	}
	return d, nil
}

// authVersionCreate: package_update's rule on "dataset".
func authVersionCreate(a *authArgs) error {
	d, err := versionedDataset(a)
	if err != nil {
		return err
	}
	if !a.st.canEdit(a.c, d, PermUpdateDataset) {
		return denied(a.c, "edit package %s", d.ID)
	}
	return nil
}

// authVersionList (dataset_version_list, dataset_version_diff):
// package_show's rule on "dataset".
func authVersionList(a *authArgs) error {
	d, err := versionedDataset(a)
	if err != nil {
		return err
	}
	if !a.st.canRead(a.c, d) {
		return denied(a.c, "read package %s", d.ID)
	}
	return nil
}
