package catalog

import (
	"fmt"

	"toxgate/catalog/ckan"
)

// This file is CKAN's ckan/authz.py: the roles and what they grant, the
// deployment's switches (AuthOptions), and the predicates the per-action
// auth functions (auth.go and auth_*.go) are built from. Actions, lists
// and validation ask these predicates; nothing else decides who may do
// what.

// Org roles.
const (
	RoleAdmin  = "admin"
	RoleEditor = "editor"
	RoleMember = "member"
)

// Permissions granted by org roles (CKAN's authz.ROLE_PERMISSIONS).
const (
	PermRead          = "read"
	PermCreateDataset = "create_dataset"
	PermUpdateDataset = "update_dataset"
	PermDeleteDataset = "delete_dataset"
	PermManageGroup   = "manage_group"
	PermAdmin         = "admin"
)

var rolePerms = map[string]map[string]bool{
	RoleAdmin:  {PermRead: true, PermCreateDataset: true, PermUpdateDataset: true, PermDeleteDataset: true, PermManageGroup: true, PermAdmin: true},
	RoleEditor: {PermRead: true, PermCreateDataset: true, PermUpdateDataset: true, PermDeleteDataset: true, PermManageGroup: true},
	RoleMember: {PermRead: true, PermManageGroup: true},
}

// AuthOptions are CKAN's ckan.auth.* switches that a shared deployment
// sets (catalog.auth in the gateway's configuration; see
// configs/toxgate.yaml). The zero value is the default of each: closed.
type AuthOptions struct {
	// UserCreateOrganizations lets every logged-in user create
	// organizations (ckan.auth.user_create_organizations); otherwise
	// only sysadmins do.
	UserCreateOrganizations bool
	// UserCreateGroups lets every logged-in user create groups
	// (ckan.auth.user_create_groups); otherwise only sysadmins do.
	UserCreateGroups bool
	// CreateUnownedDataset lets datasets have no organization
	// (ckan.auth.create_unowned_dataset): any logged-in user may then
	// create one, which its creator edits.
	CreateUnownedDataset bool
	// AnonCreateDataset lets anonymous callers create datasets
	// (ckan.auth.anon_create_dataset); it needs CreateUnownedDataset too.
	AnonCreateDataset bool
	// PublicUserDetails shows user details (user_list, user_show, the
	// members of organizations and groups, another user's organizations
	// and activity) to anonymous callers (ckan.auth.public_user_details).
	PublicUserDetails bool
	// PublicActivityStreamDetail shows an activity's data (the dataset
	// as it was) and its diffs to whoever may read the dataset; otherwise
	// only to those who may edit it (ckan.auth.public_activity_stream_detail).
	PublicActivityStreamDetail bool
	// AllowCollaboratorsToChangeOwnerOrg lets editor and admin
	// collaborators move a dataset to another organization where they may
	// create datasets (ckan.auth.allow_collaborators_to_change_owner_org);
	// otherwise that needs edit rights in the dataset's organization.
	AllowCollaboratorsToChangeOwnerOrg bool
}

// roleGrants reports whether role carries perm.
func roleGrants(role, perm string) bool { return rolePerms[role][perm] }

// hasPerm reports whether c holds perm in the organization or group orgID
// (CKAN's has_user_permission_for_group_or_org). Callers hold a lock.
func (st *readModel) hasPerm(c Caller, orgID, perm string) bool {
	if c.Sysadmin {
		return true
	}
	o := st.anyGroup(orgID)
	if o == nil || o.State == StateDeleted {
		return false
	}
	return roleGrants(o.role(c.UserID), perm)
}

// hasPermSomeOrg reports whether c holds perm in any organization.
func (st *readModel) hasPermSomeOrg(c Caller, perm string) bool {
	if c.Sysadmin {
		return true
	}
	if c.UserID == "" {
		return false
	}
	for _, o := range st.orgs {
		if o.State != StateDeleted && roleGrants(o.role(c.UserID), perm) {
			return true
		}
	}
	return false
}

// canRead applies CKAN's permission labels: an active public dataset is
// "public"; otherwise it is readable by members of its org (any role), or
// by its creator when it has no org, and by its collaborators; sysadmins
// read everything. Every read of a dataset, and every list, count, facet
// and autocomplete built from datasets, asks this. Callers hold a lock.
func (st *readModel) canRead(c Caller, d *Dataset) bool {
	if c.Sysadmin {
		return true
	}
	if d.State == StateActive && !d.Private {
		return true
	}
	if st.ownsAsMember(c, d, PermRead) {
		return true
	}
	return st.collaboratorCapacity(c, d) != ""
}

// canEdit reports whether c may update (perm update_dataset) or delete
// (delete_dataset) d. Callers hold a lock.
func (st *readModel) canEdit(c Caller, d *Dataset, perm string) bool {
	if c.Sysadmin || st.ownsAsMember(c, d, perm) {
		return true
	}
	// CKAN defers package_delete to package_update, which admits admin
	// and editor collaborators
	return st.collaboratorMayEdit(c, d)
}

// ownsAsMember reports whether c holds perm on d through d's organization,
// or, for a dataset without one, as its creator; collaborators do not
// count. Callers hold a lock.
func (st *readModel) ownsAsMember(c Caller, d *Dataset, perm string) bool {
	if d.OwnerOrg != "" {
		return st.hasPerm(c, d.OwnerOrg, perm)
	}
	return c.UserID != "" && d.CreatorUserID == c.UserID
}

// collaboratorCapacity is c's capacity on d ("" when none, or when
// collaborators are off). Callers hold a lock.
func (st *readModel) collaboratorCapacity(c Caller, d *Dataset) string {
	if !st.allowCollaborators || c.UserID == "" {
		return ""
	}
	for _, m := range d.Collaborators {
		if m.UserID == c.UserID {
			return m.Capacity
		}
	}
	return ""
}

// collaboratorMayEdit reports whether c edits d as an admin or editor
// collaborator (CKAN's package_update auth). Callers hold a lock.
func (st *readModel) collaboratorMayEdit(c Caller, d *Dataset) bool {
	capacity := st.collaboratorCapacity(c, d)
	return capacity == RoleAdmin || capacity == RoleEditor
}

// canManageCollaborators is CKAN's authz.can_manage_collaborators: the
// sysadmin, an admin of the dataset's organization, an admin collaborator,
// or the creator of a dataset without organization. Callers hold a lock.
func (st *readModel) canManageCollaborators(c Caller, d *Dataset) bool {
	switch {
	case c.Sysadmin:
		return true
	case c.UserID == "":
		return false
	case d.OwnerOrg == "":
		if d.CreatorUserID == c.UserID {
			return true
		}
	case st.hasPerm(c, d.OwnerOrg, PermAdmin):
		return true
	}
	return st.collaboratorCapacity(c, d) == RoleAdmin
}

// ownerOrgRefusal is the authorization of CKAN's owner_org_validator: why
// c may not put dataset base (nil: a new one) in organization to (nil: in
// no organization), or "" when c may. Entering an organization needs the
// create_dataset permission there; leaving one needs edit rights in it (an
// organization editor or admin, or the creator of a dataset without
// organization), or, with AllowCollaboratorsToChangeOwnerOrg, an editor or
// admin collaborator's. Callers hold a lock.
func (st *readModel) ownerOrgRefusal(c Caller, base *Dataset, to *Organization) string {
	toID := ""
	if to != nil {
		toID = to.ID
	}
	if base != nil && base.OwnerOrg == toID {
		return ""
	}
	if to != nil && !st.hasPerm(c, to.ID, PermCreateDataset) {
		return "You cannot add a dataset to this organization"
	}
	if base == nil || c.Sysadmin || st.ownsAsMember(c, base, PermUpdateDataset) {
		return ""
	}
	if st.auth.AllowCollaboratorsToChangeOwnerOrg && st.collaboratorMayEdit(c, base) {
		return ""
	}
	return "You cannot move this dataset to another organization"
}

// mayJoinGroup reports whether c may put a dataset in group g (CKAN's
// _check_group_auth: any member role of the group). Callers hold a lock.
func (st *readModel) mayJoinGroup(c Caller, groupID string) bool {
	return st.hasPerm(c, groupID, PermManageGroup)
}

// mayLeaveGroup reports whether a dataset dict that leaves out group
// groupID takes the dataset out of it: only when c may read the group's
// memberships (is a member); otherwise the group is kept. Callers hold a
// lock.
func (st *readModel) mayLeaveGroup(c Caller, groupID string) bool {
	return st.hasPerm(c, groupID, PermRead)
}

// revokesOwnAdmin reports whether giving user u the role in o would take
// away the caller's own admin role there, which only a sysadmin may do
// (CKAN's "Administrators cannot revoke their own admin status").
func revokesOwnAdmin(c Caller, o *Organization, u *User, role string) bool {
	return u.ID == c.UserID && role != RoleAdmin && !c.Sysadmin && o.role(u.ID) == RoleAdmin
}

// choosesIDs reports whether c may give a new record its id (CKAN's
// empty_if_not_sysadmin on id).
func choosesIDs(c Caller) bool { return c.Sysadmin }

// takesReservedNames reports whether c may give a dataset a name starting
// with ReservedDatasetPrefix (the models' datasets; reserved.go).
func takesReservedNames(c Caller) bool { return c.Sysadmin }

// setsStateOnCreate reports whether c may set the state of a dataset it
// creates (CKAN's ignore_not_package_admin on package_create).
func setsStateOnCreate(c Caller) bool { return c.Sysadmin }

// seesUserDetails reports whether c may see users' details (names,
// memberships, activity): everyone logged in, and anonymous callers with
// PublicUserDetails (CKAN's restrict_anon on user_show).
func (st *readModel) seesUserDetails(c Caller) bool {
	return st.auth.PublicUserDetails || !c.Anonymous()
}

// datasetLabels are CKAN's permission labels of a dataset
// (DefaultPermissionLabels.get_dataset_labels).
func datasetLabels(d *Dataset) []string {
	if d.State == StateActive && !d.Private {
		return []string{"public"}
	}
	labels := []string{"creator-" + d.CreatorUserID}
	if d.OwnerOrg != "" {
		labels = []string{"member-" + d.OwnerOrg}
	}
	if len(d.Collaborators) > 0 {
		// CKAN's permission labels with dataset collaborators
		labels = append(labels, "collaborator-"+d.ID)
	}
	return labels
}

// userLabels are the labels c may read (get_user_dataset_labels); nil for
// sysadmins, who read everything. Callers hold a lock.
func (st *readModel) userLabels(c Caller) map[string]bool {
	if c.Sysadmin {
		return nil
	}
	labels := map[string]bool{"public": true}
	if c.UserID == "" {
		return labels
	}
	labels["creator-"+c.UserID] = true
	if st.allowCollaborators {
		for _, d := range st.datasets {
			if st.collaboratorCapacity(c, d) != "" {
				labels["collaborator-"+d.ID] = true
			}
		}
	}
	for _, o := range st.orgs {
		if o.State != StateDeleted && roleGrants(o.role(c.UserID), PermRead) {
			labels["member-"+o.ID] = true
		}
	}
	return labels
}

// anyLabel reports whether have holds one of labels.
func anyLabel(have map[string]bool, labels []string) bool {
	for _, l := range labels {
		if have[l] {
			return true
		}
	}
	return false
}

// denied is a 403 with CKAN's "User <name> not authorized to ..." message.
func denied(c Caller, format string, args ...any) *ckan.Error {
	return ckan.NotAuthorized(fmt.Sprintf("User %s not authorized to ", c.Name) + fmt.Sprintf(format, args...))
}

// needsUser is the 403 for anonymous callers of actions that need a login.
func needsUser(action string) *ckan.Error {
	return ckan.NotAuthorized(fmt.Sprintf("Action %s requires an authenticated user", action))
}
