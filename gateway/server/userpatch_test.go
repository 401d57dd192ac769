package server_test

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
