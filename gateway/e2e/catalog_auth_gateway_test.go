package e2e

import (
	"testing"

	"toxgate/gateway/harness"
)

// catalog.auth reaches the catalog plugin and the core's user actions: by
// default a user who is no sysadmin creates no organization or group,
// anonymous callers see no users, a collaborator cannot take a dataset to
// their own organization, and a user's private datasets count only in
// their own dict; the switches open each.
func TestCatalogAuthThroughGateway(t *testing.T) {
	g := harness.Start(t)
	admin := adminToken(t, g)
	provision(t, g, admin, "una", "una-password-1", true)
	una := tokenFor(t, g, admin, "una", nil)
	expect := func(action, token string, data map[string]any, status int, message string) map[string]any {
		t.Helper()
		code, out := ckan(t, g, action, token, data)
		if code != status {
			t.Fatalf("%s: want %d, got %d %v", action, status, code, out)
		}
		if message != "" {
			if e, _ := out["error"].(map[string]any); e["message"] != message {
				t.Fatalf("%s: message %v", action, out["error"])
			}
		}
		r, _ := out["result"].(map[string]any)
		return r
	}

	expect("organization_create", una, map[string]any{"name": "una-lab"}, 403, "Access denied: User una not authorized to create organizations")
	expect("group_create", una, map[string]any{"name": "una-group"}, 403, "Access denied: User una not authorized to create groups")
	expect("user_list", "", nil, 403, "Access denied")
	expect("user_show", "", map[string]any{"id": "una"}, 403, "Access denied")
	expect("user_list", una, nil, 200, "")

	// una: editor collaborator on a private dataset of lab-a, admin of lab-b
	expect("organization_create", admin, map[string]any{"name": "lab-a"}, 200, "")
	expect("organization_create", admin, map[string]any{"name": "lab-b", "users": []any{map[string]any{"name": "una", "capacity": "admin"}}}, 200, "")
	expect("package_create", admin, map[string]any{"name": "lab-a-secret", "owner_org": "lab-a", "private": true}, 200, "")
	expect("package_collaborator_create", admin, map[string]any{"id": "lab-a-secret", "user_id": "una", "capacity": "editor"}, 200, "")
	code, out := ckan(t, g, "package_patch", una, map[string]any{"id": "lab-a-secret", "owner_org": "lab-b"})
	if e, _ := out["error"].(map[string]any); code != 409 || e["owner_org"] == nil {
		t.Fatalf("collaborator's move: %d %v", code, out)
	}
	expect("package_patch", una, map[string]any{"id": "lab-a-secret", "notes": "still editable"}, 200, "")
	if d := expect("package_show", admin, map[string]any{"id": "lab-a-secret"}, 200, ""); d["organization"].(map[string]any)["name"] != "lab-a" {
		t.Fatalf("moved: %v", d["organization"])
	}

	// number_created_packages: una's private dataset counts in una's own dict only
	expect("package_create", una, map[string]any{"name": "una-public", "owner_org": "lab-b"}, 200, "")
	expect("package_create", una, map[string]any{"name": "una-private", "owner_org": "lab-b", "private": true}, 200, "")
	provision(t, g, admin, "vic", "vic-password-1", true)
	vic := tokenFor(t, g, admin, "vic", nil)
	if u := expect("user_show", vic, map[string]any{"id": "una"}, 200, ""); u["number_created_packages"] != float64(1) {
		t.Fatalf("another user sees %v datasets", u["number_created_packages"])
	}
	if u := expect("user_show", una, map[string]any{"id": "una"}, 200, ""); u["number_created_packages"] != float64(2) {
		t.Fatalf("una sees %v datasets", u["number_created_packages"])
	}

	// the switches, all on: each opens what it names
	open := harness.Start(t, harness.WithEnv("TOXGATE_CATALOG_AUTH_USER_CREATE_ORGANIZATIONS=true",
		"TOXGATE_CATALOG_AUTH_USER_CREATE_GROUPS=true", "TOXGATE_CATALOG_AUTH_CREATE_UNOWNED_DATASET=true",
		"TOXGATE_CATALOG_AUTH_ANON_CREATE_DATASET=true", "TOXGATE_CATALOG_AUTH_PUBLIC_USER_DETAILS=true",
		"TOXGATE_CATALOG_AUTH_PUBLIC_ACTIVITY_STREAM_DETAIL=true", "TOXGATE_CATALOG_AUTH_ALLOW_COLLABORATORS_TO_CHANGE_OWNER_ORG=true"))
	admin = adminToken(t, open)
	provision(t, open, admin, "una", "una-password-1", true)
	provision(t, open, admin, "vic", "vic-password-1", true)
	una, vic = tokenFor(t, open, admin, "una", nil), tokenFor(t, open, admin, "vic", nil)
	ok := func(action, token string, data map[string]any) map[string]any {
		t.Helper()
		code, out := ckan(t, open, action, token, data)
		if code != 200 {
			t.Fatalf("%s with the switches on: %d %v", action, code, out)
		}
		r, _ := out["result"].(map[string]any)
		return r
	}
	ok("organization_create", una, map[string]any{"name": "una-lab"}) // user_create_organizations
	ok("group_create", una, map[string]any{"name": "una-group"})      // user_create_groups
	ok("package_create", vic, map[string]any{"name": "vic-loose"})    // create_unowned_dataset
	ok("package_create", "", map[string]any{"name": "anon-loose"})    // anon_create_dataset
	ok("user_show", "", map[string]any{"id": "una"})                  // public_user_details
	if o := ok("organization_show", "", map[string]any{"id": "una-lab"}); len(o["users"].([]any)) != 1 {
		t.Fatalf("anonymous organization_show: %v", o["users"])
	}
	ok("organization_create", admin, map[string]any{"name": "lab-a"})
	ok("package_create", admin, map[string]any{"name": "lab-a-set", "owner_org": "lab-a"})
	code, out = ckan(t, open, "package_activity_list", "", map[string]any{"id": "lab-a-set"})
	acts, _ := out["result"].([]any)
	if code != 200 || len(acts) == 0 {
		t.Fatalf("package_activity_list: %d %v", code, out)
	}
	ok("activity_data_show", vic, map[string]any{"id": acts[0].(map[string]any)["id"]}) // public_activity_stream_detail
	ok("package_collaborator_create", admin, map[string]any{"id": "lab-a-set", "user_id": "una", "capacity": "editor"})
	ok("package_patch", una, map[string]any{"id": "lab-a-set", "owner_org": "una-lab"}) // allow_collaborators_to_change_owner_org
}
