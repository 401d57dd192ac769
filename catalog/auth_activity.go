package catalog

import (
	"strings"

	"toxgate/catalog/ckan"
)

// Auth functions of the activity streams (ckanext-activity's
// logic/auth.py). What each list shows is further cut by permission
// labels (userLabels) in listActivities.

// authPackageActivityList: package_show's rule.
func authPackageActivityList(a *authArgs) error {
	if _, ok := a.data["id"]; !ok {
		return ckan.FieldError("id", ckan.MsgMissing)
	}
	ref, _ := str(a.data["id"])
	d := a.st.dataset(ref)
	if d == nil {
		return ckan.NotFound("")
	}
	if !a.st.canRead(a.c, d) {
		return denied(a.c, "read package %s", d.ID)
	}
	return nil
}

// authUserActivityList: user_show's rule (user details).
func authUserActivityList(a *authArgs) error {
	if !a.st.seesUserDetails(a.c) {
		return ckan.NotAuthorized("")
	}
	return nil
}

// authDashboardActivityList: logged-in callers, with CKAN's message.
func authDashboardActivityList(a *authArgs) error {
	if a.c.Anonymous() {
		return ckan.NotAuthorized("You must be logged in to access your dashboard.")
	}
	return nil
}

// authActivityShow: the activity of a dataset the caller may read and whose
// permission labels the caller holds; with include_data, its data needs
// activity_data_show's rule. Other activity is for sysadmins, as in CKAN.
func authActivityShow(a *authArgs) error {
	return a.activityAuth(ckan.SchemaBool(a.data["include_data"]))
}

// authActivityDataShow: the data of an activity: edit rights on the
// dataset, or read rights with PublicActivityStreamDetail.
func authActivityDataShow(a *authArgs) error { return a.activityAuth(true) }

// authActivityDiff: activity_data_show's rule.
func authActivityDiff(a *authArgs) error {
	if id, _ := str(a.data["id"]); id == "" {
		return ckan.FieldError("id", ckan.MsgMissing)
	}
	if objectType, _ := str(a.data["object_type"]); objectType == "" {
		return ckan.FieldError("object_type", ckan.MsgMissing)
	}
	return a.activityAuth(true)
}

// activityAuth finds activity "id" (the index is current: checkAccess
// synced it) and applies ckanext-activity's activity_show rule; detail
// asks for its data. Callers run in a view of the read model.
func (a *authArgs) activityAuth(detail bool) error {
	id, _ := str(a.data["id"])
	if id == "" {
		return ckan.FieldError("id", ckan.MsgMissing)
	}
	x := &a.s.acts
	x.mu.RLock()
	m := x.byID[id]
	if m != nil && !x.visible(a.st, m) {
		m = nil
	}
	x.mu.RUnlock()
	if m == nil {
		return ckan.NotFound("")
	}
	c := a.c
	if c.Sysadmin {
		return nil
	}
	if !strings.Contains(m.Type, "package") {
		return ckan.NotAuthorized("object_type not recognized")
	}
	if !anyLabel(a.st.userLabels(c), m.Labels) {
		return ckan.NotAuthorized("Unauthorized to view activity data")
	}
	d := a.st.datasets[m.ObjectID]
	if d == nil {
		return ckan.NotFound("")
	}
	if detail && !a.st.auth.PublicActivityStreamDetail {
		if !a.st.canEdit(c, d, PermUpdateDataset) {
			return denied(c, "edit package %s", d.ID)
		}
		return nil
	}
	if !a.st.canRead(c, d) {
		return denied(c, "read package %s", d.ID)
	}
	return nil
}
