package catalog

import (
	"fmt"

	"toxgate/catalog/ckan"
)

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

// roleGrants reports whether role carries perm.
func roleGrants(role, perm string) bool { return rolePerms[role][perm] }

// hasPerm reports whether c holds perm in the organization or group orgID.
// Callers hold a lock.
func (st *state) hasPerm(c Caller, orgID, perm string) bool {
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
func (st *state) hasPermSomeOrg(c Caller, perm string) bool {
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
// read everything.
func (st *state) canRead(c Caller, d *Dataset) bool {
	if c.Sysadmin {
		return true
	}
	if d.State == StateActive && !d.Private {
		return true
	}
	if d.OwnerOrg != "" {
		if st.hasPerm(c, d.OwnerOrg, PermRead) {
			return true
		}
	} else if c.UserID != "" && d.CreatorUserID == c.UserID {
		return true
	}
	return st.collaboratorCapacity(c, d) != ""
}

// canEdit reports whether c may update (perm update_dataset) or delete
// (delete_dataset) d.
func (st *state) canEdit(c Caller, d *Dataset, perm string) bool {
	if c.Sysadmin {
		return true
	}
	if d.OwnerOrg != "" {
		if st.hasPerm(c, d.OwnerOrg, perm) {
			return true
		}
	} else if c.UserID != "" && d.CreatorUserID == c.UserID {
		return true
	}
	// CKAN defers package_delete to package_update, which admits admin
	// and editor collaborators
	return st.collaboratorMayEdit(c, d)
}

// denied is a 403 with CKAN's "User <name> not authorized to ..." message.
func denied(c Caller, format string, args ...any) *ckan.Error {
	return ckan.NotAuthorized(fmt.Sprintf("User %s not authorized to ", c.Name) + fmt.Sprintf(format, args...))
}

// needsUser is the 403 for anonymous callers of actions that need a login.
func needsUser(action string) *ckan.Error {
	return ckan.NotAuthorized(fmt.Sprintf("Action %s requires an authenticated user", action))
}
