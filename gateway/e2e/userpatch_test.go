package e2e

import (
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// TestCKANUserPatch: user_patch changes only the fields it is given, for
// the user and sysadmins, and refuses others as user_update does.
func TestCKANUserPatch(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	provision(t, g, adm, "dora", "dora-password", true, "models")
	provision(t, g, adm, "finn", "finn-password", true)
	dt := tokenFor(t, g, adm, "dora", nil)
	ft := tokenFor(t, g, adm, "finn", nil)

	code, out := ckan(t, g, "user_patch", dt, map[string]any{"id": "dora", "about": "Works on hERG."})
	u, _ := out["result"].(map[string]any)
	if code != 200 || u["about"] != "Works on hERG." || u["email"] != "dora@example.org" ||
		u["first_name"] != "Test" || u["last_name"] != "Dora" || u["display_name"] != "Test Dora" {
		t.Fatalf("user_patch of about by the user: %d %v", code, out)
	}
	code, out = ckan(t, g, "user_patch", adm, map[string]any{"id": "dora", "fullname": "Dora Explorer"})
	u, _ = out["result"].(map[string]any)
	if code != 200 || u["fullname"] != "Dora Explorer" || u["about"] != "Works on hERG." || u["email"] != "dora@example.org" {
		t.Fatalf("user_patch of fullname by a sysadmin: %d %v", code, out)
	}
	code, out = ckan(t, g, "user_show", dt, map[string]any{"id": "dora"})
	if u, _ = out["result"].(map[string]any); code != 200 || u["fullname"] != "Dora Explorer" || u["about"] != "Works on hERG." {
		t.Fatalf("user_show after user_patch: %d %v", code, out)
	}
	code, out = ckan(t, g, "user_patch", ft, map[string]any{"id": "dora", "about": "hijacked"})
	if code != 403 || out["error"].(map[string]any)["message"] != "Access denied: User finn not authorized to edit user "+u["id"].(string) {
		t.Fatalf("user_patch of another user: %d %v", code, out)
	}
	code, out = ckan(t, g, "user_patch", dt, map[string]any{"about": "no id"})
	if e, _ := out["error"].(map[string]any); code != 409 || e["__type"] != "Validation Error" || e["id"].([]any)[0] != "Missing value" {
		t.Fatalf("user_patch without id: %d %v", code, out)
	}
	code, out = ckan(t, g, "user_patch", dt, map[string]any{"id": "dora", "email": "not-an-address"})
	if e, _ := out["error"].(map[string]any); code != 409 || e["email"] == nil {
		t.Fatalf("user_patch with a bad e-mail: %d %v", code, out)
	}
	code, out = ckan(t, g, "user_patch", adm, map[string]any{"id": "nobody"})
	if code != 404 || !strings.Contains(out["error"].(map[string]any)["message"].(string), "User not found") {
		t.Fatalf("user_patch of an unknown user: %d %v", code, out)
	}
}

// TestUserDictsAcrossIdentityAndCatalog: user_show counts the datasets a
// user created (the catalog answers the count), and the catalog's member
// list shows the same user dict as user_show (the gateway owns the users).
func TestUserDictsAcrossIdentityAndCatalog(t *testing.T) {
	// anonymous callers see the users here (catalog.auth.public_user_details)
	g := harness.Start(t, harness.WithEnv("TOXGATE_CATALOG_AUTH_PUBLIC_USER_DETAILS=true"))
	adm := adminToken(t, g)
	provision(t, g, adm, "gil", "gil-password", true)
	gt := tokenFor(t, g, adm, "gil", nil)
	if code, out := ckan(t, g, "organization_create", adm, map[string]any{"name": "gil-lab", "users": []any{
		map[string]any{"name": "gil", "capacity": "editor"}}}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	for _, name := range []string{"gil-one", "gil-two"} {
		if code, out := ckan(t, g, "package_create", gt, map[string]any{"name": name, "owner_org": "gil-lab"}); code != 200 {
			t.Fatalf("package_create %s: %d %v", name, code, out)
		}
	}
	if code, out := ckan(t, g, "package_delete", gt, map[string]any{"id": "gil-two"}); code != 200 {
		t.Fatalf("package_delete: %d %v", code, out)
	}
	code, out := ckan(t, g, "user_show", "", map[string]any{"id": "gil"})
	shown, _ := out["result"].(map[string]any)
	if code != 200 || shown["number_created_packages"] != float64(1) {
		t.Fatalf("user_show: number_created_packages of a user with one active dataset: %d %v", code, out)
	}
	code, out = ckan(t, g, "user_list", "", map[string]any{"q": "gil"})
	if list, _ := out["result"].([]any); code != 200 || len(list) != 1 || list[0].(map[string]any)["number_created_packages"] != float64(1) {
		t.Fatalf("user_list: %d %v", code, out)
	}
	code, out = ckan(t, g, "organization_show", "", map[string]any{"id": "gil-lab", "include_users": true})
	org, _ := out["result"].(map[string]any)
	var member map[string]any
	users, _ := org["users"].([]any)
	for _, u := range users {
		if m := u.(map[string]any); m["name"] == "gil" {
			member = m
		}
	}
	if code != 200 || member == nil {
		t.Fatalf("organization_show include_users: %d %v", code, out)
	}
	if member["capacity"] != "editor" {
		t.Errorf("member capacity: %v", member)
	}
	for _, k := range []string{"id", "name", "fullname", "display_name", "about", "created", "state", "sysadmin", "email_hash", "image_url"} {
		if member[k] != shown[k] {
			t.Errorf("member %s = %v, user_show says %v", k, member[k], shown[k])
		}
	}
	if _, ok := member["email"]; ok {
		t.Errorf("member list shows an e-mail: %v", member)
	}
}
