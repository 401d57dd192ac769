package catalog

import (
	"fmt"

	"toxgate/catalog/ckan"
)

// Auth functions of the delete and purge actions (CKAN's
// ckan/logic/auth/delete.py).

// authPackageDelete: those who may update the dataset (CKAN defers
// package_delete to package_update), with delete_dataset in its
// organization.
func authPackageDelete(a *authArgs) error {
	ref, _ := str(a.data["id"])
	if ref == "" {
		return ckan.Validation(map[string]any{"id": ckan.MsgMissing})
	}
	return a.st.editDataset(a.c, ref, PermDeleteDataset, "delete", "")
}

// authResourceDelete: those who may edit the resource's dataset.
func authResourceDelete(a *authArgs) error { return a.st.resourceWriteAuth(a, "delete") }

// authOrganizationPurge: sysadmins.
func authOrganizationPurge(a *authArgs) error {
	ref, _ := str(a.data["id"])
	if ref == "" {
		return ckan.FieldError("id", ckan.MsgMissing)
	}
	if a.st.org(ref) == nil {
		return ckan.NotFound("Organization was not found")
	}
	return sysadminOnly(a)
}

// authGroupPurge: sysadmins.
func authGroupPurge(a *authArgs) error {
	ref, _ := str(a.data["id"])
	if ref == "" {
		return ckan.FieldError("id", ckan.MsgMissing)
	}
	if a.st.lookupGroup(grpKind, ref) == nil {
		return ckan.NotFound("Group was not found")
	}
	return authSysadmin(a)
}

// authUserMemberDelete (organization_member_delete, group_member_delete):
// the admins of the organization or group.
func authUserMemberDelete(k groupKind) authFunc {
	return func(a *authArgs) error { return a.st.userMemberAuth(a, k) }
}

// authMemberDelete (member_delete): member_create's rule.
func authMemberDelete(a *authArgs) error {
	return a.st.memberAuth(a, "id", "object", "object_type")
}

// authPackageCollaboratorDelete: those who manage the dataset's
// collaborators.
func authPackageCollaboratorDelete(a *authArgs) error {
	return a.st.collaboratorAuth(a, "remove collaborators from this dataset", "Package not found")
}

// authTagDelete: sysadmins. Whether the tag exists is answered to them
// only (a free tag may be on private datasets alone).
func authTagDelete(a *authArgs) error {
	ref, _ := str(a.data["id"])
	if ref == "" {
		return ckan.Validation(map[string]any{"id": "id not in data"})
	}
	if err := sysadminOnly(a); err != nil {
		return err
	}
	vocabRef, _ := str(a.data["vocabulary_id"])
	if _, ok := a.st.findTag(ref, vocabRef, nil); !ok {
		return ckan.NotFound(fmt.Sprintf("Could not find tag %q", ref))
	}
	return nil
}
