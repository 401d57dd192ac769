package catalog

import (
	"fmt"

	"toxgate/catalog/ckan"
)

// Auth functions of the update actions (CKAN's ckan/logic/auth/update.py
// and patch.py).

// authPackageUpdate: org editors and admins, the creator of a dataset
// without organization, editor and admin collaborators. Moving the dataset
// to another organization is decided while its dict is validated
// (ownerOrgRefusal), on the freshest stored copy. The gateway's
// package_writable asks this same function.
func authPackageUpdate(a *authArgs) error {
	ref, _ := str(a.data["id"])
	if ref == "" {
		ref, _ = str(a.data["name"])
	}
	if ref == "" {
		return ckan.Validation(map[string]any{"id": ckan.MsgMissing})
	}
	return a.st.editDataset(a.c, ref, PermUpdateDataset, "edit", "Package was not found.")
}

// authPackagePatch: package_update's rule.
func authPackagePatch(a *authArgs) error {
	ref, _ := str(a.data["id"])
	if ref == "" {
		return ckan.ValidationMessage("Missing id, can not get Package object")
	}
	return a.st.editDataset(a.c, ref, PermUpdateDataset, "edit", "")
}

// editDataset finds dataset ref and checks that c holds perm on it, with
// CKAN's messages. Callers hold a lock.
func (st *readModel) editDataset(c Caller, ref, perm, verb, notFound string) error {
	d := st.dataset(ref)
	if d == nil {
		return ckan.NotFound(notFound)
	}
	if !st.canEdit(c, d, perm) {
		return denied(c, "%s package %s", verb, d.ID)
	}
	return nil
}

// authPackageRevise: package_update's rule, after package_show's (CKAN
// reads the dataset first).
func authPackageRevise(a *authArgs) error {
	p, verr := parseRevise(a.data)
	if verr != nil {
		return verr
	}
	ref := p.ref()
	if ref == "" {
		return ckan.FieldError("match__id", ckan.MsgMissing)
	}
	return a.st.readThenEdit(a.c, ref, "package_revise")
}

// readThenEdit is the check of the actions that read a dataset with
// package_show and then change it: 404, 403 to read, then the login and
// edit rights. Callers hold a lock.
func (st *readModel) readThenEdit(c Caller, ref, action string) error {
	d := st.dataset(ref)
	if d == nil {
		return ckan.NotFound("")
	}
	if !st.canRead(c, d) {
		return denied(c, "read package %s", d.ID)
	}
	if c.Anonymous() {
		return needsUser(action)
	}
	if !st.canEdit(c, d, PermUpdateDataset) {
		return denied(c, "edit package %s", d.ID)
	}
	return nil
}

// authPackageResourceReorder: package_update's rule, after package_show's.
func authPackageResourceReorder(a *authArgs) error {
	ref, verr := reorderRef(a.data)
	if verr != nil {
		return verr
	}
	return a.st.readThenEdit(a.c, ref, "package_update")
}

// authResourceUpdate (resource_update, resource_patch): those who may edit
// the resource's dataset.
func authResourceUpdate(a *authArgs) error { return a.st.resourceWriteAuth(a, "edit") }

// resourceWriteAuth finds resource "id" and checks that c may edit its
// dataset; verb completes CKAN's refusal. Callers hold a lock.
func (st *readModel) resourceWriteAuth(a *authArgs, verb string) error {
	id, _ := str(a.data["id"])
	if id == "" {
		return ckan.FieldError("id", ckan.MsgMissing)
	}
	d, _ := st.findResource(id)
	if d == nil {
		return ckan.NotFound("Resource was not found.")
	}
	if !st.canEdit(a.c, d, PermUpdateDataset) {
		return denied(a.c, "%s resource %s", verb, id)
	}
	return nil
}

// authOrgAdmin (organization_update/patch/delete, group_update/patch/delete):
// the admins of the organization or group.
func authOrgAdmin(k groupKind, verb string) authFunc {
	word := map[string]string{"update": "edit", "patch": "edit", "delete": "delete"}[verb]
	return func(a *authArgs) error {
		ref, _ := str(a.data["id"])
		if ref == "" {
			return ckan.FieldError("id", ckan.MsgMissing)
		}
		o := a.st.lookupGroup(k, ref)
		if o == nil {
			return ckan.NotFound("Group was not found.")
		}
		if !a.st.hasPerm(a.c, o.ID, PermAdmin) {
			return denied(a.c, "%s %s %s", word, k.word(), o.ID)
		}
		return nil
	}
}

// authBulkUpdate (bulk_update_private/public/delete): the admins of the
// organization.
func authBulkUpdate(a *authArgs) error {
	orgRef, _, verr := bulkParams(a.data)
	if verr != nil {
		return verr
	}
	o := a.st.org(orgRef)
	if o == nil {
		return ckan.NotFound("Organization was not found")
	}
	if !a.st.hasPerm(a.c, o.ID, PermAdmin) {
		return ckan.NotAuthorized("")
	}
	return nil
}

// authVocabularyWrite (vocabulary_update, vocabulary_delete): sysadmins.
func authVocabularyWrite(a *authArgs) error {
	ref, _ := str(a.data["id"])
	if ref == "" {
		return ckan.Validation(map[string]any{"id": "id not in data"})
	}
	if a.st.vocab(ref) == nil {
		return ckan.NotFound(fmt.Sprintf("Could not find vocabulary %q", ref))
	}
	return sysadminOnly(a)
}

// sysadminOnly: a login, then sysadmins.
func sysadminOnly(a *authArgs) error {
	if a.c.Anonymous() {
		return needsUser(a.action)
	}
	return authSysadmin(a)
}
