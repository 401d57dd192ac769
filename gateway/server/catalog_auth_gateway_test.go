package server_test

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

	// the switches
	open := harness.Start(t, harness.WithEnv("TOXGATE_CATALOG_AUTH_USER_CREATE_ORGANIZATIONS=true", "TOXGATE_CATALOG_AUTH_PUBLIC_USER_DETAILS=true"))
	admin = adminToken(t, open)
	provision(t, open, admin, "una", "una-password-1", true)
	una = tokenFor(t, open, admin, "una", nil)
	if code, out := ckan(t, open, "organization_create", una, map[string]any{"name": "una-lab"}); code != 200 {
		t.Fatalf("organization_create with the switch: %d %v", code, out)
	}
	if code, out := ckan(t, open, "user_list", "", nil); code != 200 {
		t.Fatalf("anonymous user_list with the switch: %d %v", code, out)
	}
	if code, out := ckan(t, open, "organization_show", "", map[string]any{"id": "una-lab"}); code != 200 || len(out["result"].(map[string]any)["users"].([]any)) != 1 {
		t.Fatalf("anonymous organization_show with the switch: %d %v", code, out)
	}
}
