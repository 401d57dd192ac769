package catalog

import (
	"fmt"

	"toxgate/catalog/ckan"
)

// Auth functions of the read actions (CKAN's ckan/logic/auth/get.py).

// authPackageShow: active public datasets for everyone; others for those
// canRead admits.
func authPackageShow(a *authArgs) error {
	ref := datasetRef(a.data)
	if ref == "" {
		return ckan.FieldError("name_or_id", ckan.MsgMissing)
	}
	d := a.st.dataset(ref)
	if d == nil {
		return ckan.NotFound("")
	}
	if !a.st.canRead(a.c, d) {
		return denied(a.c, "read package %s", d.ID)
	}
	return nil
}

// authResourceShow: package_show of the resource's dataset. It also
// authorizes the gateway's downloads (resource_file).
func authResourceShow(a *authArgs) error {
	id, _ := str(a.data["id"])
	if id == "" {
		return ckan.FieldError("id", ckan.MsgMissing)
	}
	d, _ := a.st.findResource(id)
	if d == nil {
		return ckan.NotFound("Resource was not found.")
	}
	if !a.st.canRead(a.c, d) {
		return denied(a.c, "read resource %s", id)
	}
	return nil
}

// authSysadmin: sysadmins only (CKAN's {'success': False} functions).
func authSysadmin(a *authArgs) error {
	if !a.c.Sysadmin {
		return ckan.NotAuthorized("")
	}
	return nil
}

// authOrganizationListForUser: one's own organizations for everyone;
// another user's for those who see user details.
func authOrganizationListForUser(a *authArgs) error {
	ref, _ := str(a.data["id"])
	if ref != "" && ref != a.c.UserID && ref != a.c.Name && !a.st.seesUserDetails(a.c) {
		return ckan.NotAuthorized("")
	}
	return nil
}

// authPackageCollaboratorList: those who manage the dataset's
// collaborators.
func authPackageCollaboratorList(a *authArgs) error {
	v, verr := bust(a.data, "id")
	if verr != nil {
		return verr
	}
	return a.st.manageCollaborators(a.c, v[0], "list collaborators from this dataset", "Package not found")
}

// authPackageCollaboratorListForUser: one's own list, and sysadmins.
func authPackageCollaboratorListForUser(a *authArgs) error {
	v, verr := bust(a.data, "id")
	if verr != nil {
		return verr
	}
	c := a.c
	if !c.Sysadmin && (c.Anonymous() || (v[0] != c.UserID && v[0] != c.Name)) {
		return ckan.NotAuthorized("")
	}
	return nil
}

// manageCollaborators finds dataset ref and checks that c may manage its
// collaborators; verb completes CKAN's refusal. Callers hold a lock.
func (st *readModel) manageCollaborators(c Caller, ref, verb, notFound string) error {
	d := st.dataset(ref)
	if d == nil {
		return ckan.NotFound(notFound)
	}
	if !st.canManageCollaborators(c, d) {
		return ckan.NotAuthorized(fmt.Sprintf("User %s not authorized to %s", c.Name, verb))
	}
	return nil
}
