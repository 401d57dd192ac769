package catalog

import (
	"fmt"

	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
)

// Auth functions of the DataStore actions (ckanext-datastore's
// logic/auth.py, and ckanext-xloader's): writes need the right to edit
// the resource's dataset, reads the right to read it. datastore_search_sql
// is public here: each table its statement reads is checked with canRead
// once the statement is parsed.

// authDatastoreCreate: resource_update's rule on resource_id, or, for a
// new resource given as "resource" with its package_id, resource_create's
// rule on that dataset.
func authDatastoreCreate(a *authArgs) error {
	if rd, ok := a.data["resource"].(map[string]any); ok && datastore.ResourceID(a.data) == "" {
		pkg, _ := str(rd["package_id"])
		if pkg == "" {
			// resource_create's refusal, as the action words it
			return ckan.Validation(map[string]any{"resource": map[string]any{"package_id": []string{ckan.MsgMissing}}})
		}
		return authResourceCreate(&authArgs{action: a.action, s: a.s, st: a.st, c: a.c, data: rd})
	}
	return authDatastoreWrite(a)
}

// authDatastoreWrite (datastore_upsert, datastore_delete,
// datastore_records_delete, xloader_submit): those who may edit the
// resource's dataset.
func authDatastoreWrite(a *authArgs) error { return a.st.datastoreAuth(a, true) }

// authDatastoreRead (datastore_info, datastore_search, xloader_status):
// those who may read the resource's dataset.
func authDatastoreRead(a *authArgs) error { return a.st.datastoreAuth(a, false) }

// datastoreAuth finds the active resource the DataStore action names and
// checks the caller's right on its dataset. Callers hold a lock.
func (st *readModel) datastoreAuth(a *authArgs, write bool) error {
	id := datastore.ResourceID(a.data)
	if id == "" {
		return ckan.FieldError("resource_id", ckan.MsgMissing)
	}
	d, _ := st.findResource(id)
	if d == nil {
		return ckan.NotFound(fmt.Sprintf("Resource \"%s\" was not found.", id))
	}
	if write {
		if !st.canEdit(a.c, d, PermUpdateDataset) {
			return denied(a.c, "update resource %s", id)
		}
	} else if !st.canRead(a.c, d) {
		return denied(a.c, "read resource %s", id)
	}
	return nil
}

// authDatastoreSQLTable is datastore_search_sql's check of each table its
// statement reads, asked once the statement is parsed: those who may read
// the table's resource's dataset.
func (s *Service) authDatastoreSQLTable(c Caller, id string) error {
	return viewed(s.st, func() error {
		d, _ := s.st.findResource(id)
		if d == nil || !s.st.canRead(c, d) {
			return denied(c, "read resource %s", id)
		}
		return nil
	})
}
