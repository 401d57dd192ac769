package catalog

import (
	"fmt"

	"toxgate/catalog/ckan"
)

// Auth functions of the create actions (CKAN's ckan/logic/auth/create.py).

// authPackageCreate: members with create_dataset in some organization
// (and in owner_org when given); with CreateUnownedDataset every
// logged-in user, and anonymous callers too with AnonCreateDataset. Which
// groups the dataset may join and whether it may enter owner_org are
// decided while its dict is validated (mayJoinGroup, ownerOrgRefusal).
func authPackageCreate(a *authArgs) error {
	c, st := a.c, a.st
	if !c.Sysadmin {
		may := st.auth.CreateUnownedDataset || st.hasPermSomeOrg(c, PermCreateDataset)
		if c.Anonymous() {
			may = st.auth.CreateUnownedDataset && st.auth.AnonCreateDataset
		}
		if !may {
			return denied(c, "create packages")
		}
	}
	if ref, _ := str(a.data["owner_org"]); ref != "" && !c.Sysadmin {
		if o := st.org(ref); o == nil || !st.hasPerm(c, o.ID, PermCreateDataset) {
			return denied(c, "add dataset to this organization")
		}
	}
	return nil
}

// authResourceCreate: those who may edit the dataset.
func authResourceCreate(a *authArgs) error {
	pkg, _ := str(a.data["package_id"])
	if pkg == "" {
		return ckan.FieldError("package_id", ckan.MsgMissing)
	}
	d := a.st.dataset(pkg)
	if d == nil {
		return ckan.NotFound("")
	}
	if !a.st.canEdit(a.c, d, PermUpdateDataset) {
		return denied(a.c, "create resources on dataset %s", pkg)
	}
	return nil
}

// authOrganizationCreate: sysadmins, and every logged-in user with
// UserCreateOrganizations.
func authOrganizationCreate(a *authArgs) error {
	if !a.c.Sysadmin && !a.st.auth.UserCreateOrganizations {
		return denied(a.c, "create organizations")
	}
	return nil
}

// authGroupCreate: sysadmins, and every logged-in user with
// UserCreateGroups.
func authGroupCreate(a *authArgs) error {
	if !a.c.Sysadmin && !a.st.auth.UserCreateGroups {
		return denied(a.c, "create groups")
	}
	return nil
}

// authUserMemberCreate (organization_member_create, group_member_create):
// the admins of the organization or group. Whether an admin demotes
// themselves is checked once the user is known (revokesOwnAdmin).
func authUserMemberCreate(k groupKind) authFunc {
	return func(a *authArgs) error { return a.st.userMemberAuth(a, k) }
}

// memberArgs reads the id and username a user member action needs, both
// required.
func memberArgs(data map[string]any) (ref, username string, err error) {
	ref, _ = str(data["id"])
	username, _ = str(data["username"])
	errs := map[string]any{}
	if ref == "" {
		errs["id"] = ckan.MsgMissing
	}
	if username == "" {
		errs["username"] = ckan.MsgMissing
	}
	if len(errs) > 0 {
		return "", "", ckan.Validation(errs)
	}
	return ref, username, nil
}

// userMemberAuth finds the organization or group of a user member action
// and checks that c administers it. Callers hold a lock.
func (st *readModel) userMemberAuth(a *authArgs, k groupKind) error {
	ref, _, err := memberArgs(a.data)
	if err != nil {
		return err
	}
	o := st.lookupGroup(k, ref)
	if o == nil {
		return ckan.NotFound(k.notFound())
	}
	if !st.hasPerm(a.c, o.ID, PermAdmin) {
		return denied(a.c, "edit %s %s", k.word(), o.ID)
	}
	return nil
}

// authMemberCreate (member_create): a dataset the caller may read joins a
// group by any member of the group (manage_group); a user joins an
// organization or group by its admins.
func authMemberCreate(a *authArgs) error {
	return a.st.memberAuth(a, "id", "object", "object_type", "capacity")
}

// memberAuth checks member_create and member_delete: keys must be given,
// the group must exist, a dataset object must be readable by the caller
// (else it is not found), and the caller must hold the permission. The
// user object is looked up by the action. Callers hold a lock.
func (st *readModel) memberAuth(a *authArgs, keys ...string) error {
	errs := map[string]any{}
	vals := map[string]string{}
	for _, k := range keys {
		vals[k], _ = str(a.data[k])
		if vals[k] == "" {
			errs[k] = []string{ckan.MsgMissing}
		}
	}
	if len(errs) > 0 {
		return ckan.Validation(errs)
	}
	g := st.groupByAnyName(vals["id"])
	if g == nil {
		return ckan.NotFound("Group was not found.")
	}
	objType := vals["object_type"]
	if objType != "package" && objType != "user" {
		return ckan.ValidationMessage(fmt.Sprintf("%s isn't a valid model", titleWord(objType)))
	}
	perm := PermAdmin
	if objType == "package" {
		if d := st.dataset(vals["object"]); d == nil || !st.canRead(a.c, d) {
			return ckan.NotFound("Package was not found.")
		}
		if g.isGroup() {
			perm = PermManageGroup
		}
	}
	if !st.hasPerm(a.c, g.ID, perm) {
		return denied(a.c, "edit group %s", g.ID)
	}
	return nil
}

// authPackageCollaboratorCreate: those who manage the dataset's
// collaborators (canManageCollaborators).
func authPackageCollaboratorCreate(a *authArgs) error {
	return a.st.collaboratorAuth(a, "add collaborators to this dataset", "Dataset not found")
}

// collaboratorAuth checks a collaborator write on dataset "id". Callers
// hold a lock.
func (st *readModel) collaboratorAuth(a *authArgs, verb, notFound string) error {
	v, verr := bust(a.data, "id")
	if verr != nil {
		return verr
	}
	return st.manageCollaborators(a.c, v[0], verb, notFound)
}
