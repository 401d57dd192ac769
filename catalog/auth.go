package catalog

import (
	"context"
	"errors"
	"fmt"
)

// Authorization follows CKAN's ckan/logic/auth: one auth function per
// action, all named in one table (authTable), and one check (checkAccess,
// CKAN's check_access) that Service.Do runs for every action after the
// catalog is brought up to date and before the action runs. An action
// whose name is not in the table is refused. The functions live by kind
// of action, as CKAN's do: auth_get.go (reads), auth_create.go,
// auth_update.go, auth_delete.go, auth_activity.go (ckanext-activity's)
// and auth_datastore.go (ckanext-datastore's); what they are built from
// (roles, permission labels, the ckan.auth.* switches) is in authz.go.
//
// An auth function finds the object an action names and answers the same
// 409 (the reference is missing) or 404 (it names nothing) the action
// would, then 403 with CKAN's message, or nil. The action itself only
// validates and writes. Lists, counts, facets and autocompletes are public
// actions that filter with the same predicates (canRead, listedIn).

// authArgs is what an auth function decides on.
type authArgs struct {
	// action is the action's name (for CKAN's messages that name it).
	action string
	s      *Service
	// st is the in-memory catalog, read-locked for the call.
	st   *readModel
	c    Caller
	data map[string]any
	// version is the dataset version the call names, found before the
	// read lock was taken (nil: none).
	version *Version
}

// authFunc decides one action: nil allows it.
type authFunc func(a *authArgs) error

// authEntry is one action's authorization.
type authEntry struct {
	// anon is CKAN's auth_allow_anonymous_access: without it an anonymous
	// caller is refused with "Action <name> requires an authenticated
	// user" before fn runs.
	anon bool
	// activity brings the activity index up to date before fn runs
	// (the activity checks look activities up).
	activity bool
	fn       authFunc
}

// public marks an action anyone may call.
func public(fn authFunc) authEntry { return authEntry{anon: true, fn: fn} }

// loggedIn marks an action that needs a logged-in caller.
func loggedIn(fn authFunc) authEntry { return authEntry{fn: fn} }

// authTable names the auth function of every action the catalog serves
// (TestAuthTableCoversEveryAction). Read actions that anyone may call
// answer through authPublic and filter what they list with canRead.
var authTable = map[string]authEntry{
	// datasets
	"package_list":                        public(authPublic),
	"package_search":                      public(authPublic),
	"package_autocomplete":                public(authPublic),
	"current_package_list_with_resources": public(authPublic),
	"package_show":                        public(authPackageShow),
	"package_create":                      public(authPackageCreate),
	"package_update":                      public(authPackageUpdate),
	"package_patch":                       public(authPackagePatch),
	"package_revise":                      public(authPackageRevise),
	"package_resource_reorder":            public(authPackageResourceReorder),
	"package_owner_org_update":            loggedIn(authSysadmin),
	"package_delete":                      public(authPackageDelete),
	"dataset_purge":                       loggedIn(authSysadmin),
	"package_writable":                    public(authPackageUpdate),
	"user_package_counts":                 public(authSysadmin), // the gateway asks as a nameless sysadmin
	"bulk_update_private":                 loggedIn(authBulkUpdate),
	"bulk_update_public":                  loggedIn(authBulkUpdate),
	"bulk_update_delete":                  loggedIn(authBulkUpdate),

	// resources
	"resource_show":   public(authResourceShow),
	"resource_file":   public(authResourceShow),
	"resource_search": public(authPublic),
	"resource_create": public(authResourceCreate),
	"resource_update": public(authResourceUpdate),
	"resource_patch":  public(authResourceUpdate),
	"resource_delete": public(authResourceDelete),

	// collaborators
	"package_collaborator_create":        loggedIn(authPackageCollaboratorCreate),
	"package_collaborator_delete":        loggedIn(authPackageCollaboratorDelete),
	"package_collaborator_list":          public(authPackageCollaboratorList),
	"package_collaborator_list_for_user": public(authPackageCollaboratorListForUser),

	// organizations
	"organization_list":          public(authPublic),
	"organization_show":          public(authPublic),
	"organization_autocomplete":  public(authPublic),
	"organization_list_for_user": public(authOrganizationListForUser),
	"member_roles_list":          public(authPublic),
	"member_list":                public(authPublic),
	"organization_create":        loggedIn(authOrganizationCreate),
	"organization_update":        loggedIn(authOrgAdmin(orgKind, "update")),
	"organization_patch":         loggedIn(authOrgAdmin(orgKind, "patch")),
	"organization_delete":        loggedIn(authOrgAdmin(orgKind, "delete")),
	"organization_purge":         public(authOrganizationPurge),
	"organization_member_create": loggedIn(authUserMemberCreate(orgKind)),
	"organization_member_delete": loggedIn(authUserMemberDelete(orgKind)),

	// groups
	"group_list":          public(authPublic),
	"group_show":          public(authPublic),
	"group_autocomplete":  public(authPublic),
	"group_package_show":  public(authPublic),
	"group_list_authz":    public(authPublic),
	"group_create":        loggedIn(authGroupCreate),
	"group_update":        loggedIn(authOrgAdmin(grpKind, "update")),
	"group_patch":         loggedIn(authOrgAdmin(grpKind, "patch")),
	"group_delete":        loggedIn(authOrgAdmin(grpKind, "delete")),
	"group_purge":         loggedIn(authGroupPurge),
	"group_member_create": loggedIn(authUserMemberCreate(grpKind)),
	"group_member_delete": loggedIn(authUserMemberDelete(grpKind)),
	"member_create":       loggedIn(authMemberCreate),
	"member_delete":       loggedIn(authMemberDelete),

	// tags and vocabularies
	"tag_list":            public(authPublic),
	"tag_show":            public(authPublic),
	"tag_search":          public(authPublic),
	"tag_autocomplete":    public(authPublic),
	"format_autocomplete": public(authPublic),
	"vocabulary_list":     public(authPublic),
	"vocabulary_show":     public(authPublic),
	"vocabulary_create":   loggedIn(authSysadmin),
	"vocabulary_update":   public(authVocabularyWrite),
	"vocabulary_delete":   public(authVocabularyWrite),
	"tag_create":          loggedIn(authSysadmin),
	"tag_delete":          public(authTagDelete),

	// site
	"license_list": public(authPublic),
	"status_show":  public(authPublic),
	"help_show":    public(authPublic),

	// activity streams (ckanext-activity)
	"package_activity_list":                   public(authPackageActivityList),
	"organization_activity_list":              public(authPublic),
	"group_activity_list":                     public(authPublic),
	"user_activity_list":                      public(authUserActivityList),
	"recently_changed_packages_activity_list": public(authPublic),
	"dashboard_activity_list":                 public(authDashboardActivityList),
	"activity_show":                           {anon: true, activity: true, fn: authActivityShow},
	"activity_data_show":                      {anon: true, activity: true, fn: authActivityDataShow},
	"activity_diff":                           {anon: true, activity: true, fn: authActivityDiff},

	// the DataStore (ckanext-datastore, ckanext-xloader)
	"datastore_create":         public(authDatastoreCreate),
	"datastore_upsert":         public(authDatastoreWrite),
	"datastore_delete":         public(authDatastoreWrite),
	"datastore_records_delete": public(authDatastoreWrite),
	"xloader_submit":           public(authDatastoreWrite),
	"datastore_info":           public(authDatastoreRead),
	"datastore_search":         public(authDatastoreRead),
	"xloader_status":           public(authDatastoreRead),
	"datastore_search_sql":     public(authPublic),

	// dataset versions (ckanext-versions)
	"dataset_version_create":  loggedIn(authVersionCreate),
	"dataset_version_list":    public(authVersionList),
	"dataset_version_show":    public(authVersionRead),
	"dataset_version_update":  loggedIn(authVersionUpdate),
	"dataset_version_doi_set": loggedIn(authVersionUpdate),
	"dataset_version_delete":  loggedIn(authSysadmin),
	"dataset_version_diff":    public(authVersionList),
	// the scoring jobs' input version: readers of the resource
	"dataset_version_for_input": public(authResourceShow),
	// chemistry (chem.go): the resolver and structure_search are public;
	// structure_search answers only rows of tables the caller may read
	"compound_resolve":             public(authPublic),
	"structure_search":             public(authPublic),
	"compound_dictionary_register": loggedIn(authSysadmin),
}

// errNoAuthFunction refuses an action that has no auth function.
var errNoAuthFunction = errors.New("no auth function")

// checkAccess is CKAN's check_access: it runs action's auth function for
// caller c and data. Callers hold no lock.
func (s *Service) checkAccess(ctx context.Context, action string, c Caller, data map[string]any) error {
	_, err := s.checkAccessVersion(ctx, action, c, data)
	return err
}

// checkAccessVersion is checkAccess that first finds the dataset version
// the call names (versionFor), which the auth function then decides on,
// and returns it for the action.
func (s *Service) checkAccessVersion(ctx context.Context, action string, c Caller, data map[string]any) (*Version, error) {
	e, ok := authTable[action]
	if !ok || e.fn == nil {
		return nil, fmt.Errorf("action %s: %w", action, errNoAuthFunction)
	}
	if !e.anon && c.Anonymous() {
		return nil, needsUser(action)
	}
	v, err := s.versionFor(ctx, action, data)
	if err != nil {
		return nil, err
	}
	return v, s.checkEntry(ctx, e, action, c, data, v)
}

// checkEntry runs entry e's auth function (the version reader's or
// editor's rule when the call names version v).
func (s *Service) checkEntry(ctx context.Context, e authEntry, action string, c Caller, data map[string]any, v *Version) error {
	if e.activity {
		if err := s.activitySync(ctx); err != nil {
			return err
		}
	}
	fn := e.fn
	if v != nil && versionedReads[action] {
		fn = authVersionRead
	}
	return viewed(s.st, func() error { return fn(&authArgs{action: action, s: s, st: s.st, c: c, data: data, version: v}) })
}

// authPublic allows every caller: the action is public, and what it lists
// or counts is filtered with the caller's permissions.
func authPublic(*authArgs) error { return nil }
