package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

func postJSON(t *testing.T, g *harness.Gateway, path, body string, h http.Header) (int, http.Header, []byte) {
	t.Helper()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json")
	resp, b, err := g.Do(context.Background(), http.MethodPost, path, h, []byte(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return resp.StatusCode, resp.Header, b
}

// Model endpoints need a token of a user with the models role: 401 with
// WWW-Authenticate when missing or bad, 403 without the role, 200 with it.
func TestModelAccessByRole(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+exampleModulesDir(t)))
	admin := adminToken(t, g)
	provision(t, g, admin, "modeler", "modeler-password-1", true, "models")
	provision(t, g, admin, "reader", "reader-password-1", true)
	withRole := tokenFor(t, g, admin, "modeler", nil)
	without := tokenFor(t, g, admin, "reader", nil)
	const path, in = "/example/units/convert", `{"value":10,"from":"mg/L","to":"uM","molar_mass":543.52}`

	code, h, body := postJSON(t, g, path, in, nil)
	if code != 401 || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: %d %q %s", code, h.Get("WWW-Authenticate"), body)
	}
	code, h, _ = postJSON(t, g, path, in, http.Header{"Authorization": {"Bearer tg_not_a_real_token"}})
	if code != 401 || !strings.Contains(h.Get("WWW-Authenticate"), "invalid_token") {
		t.Errorf("bad token: %d %q", code, h.Get("WWW-Authenticate"))
	}
	if code, _, body := postJSON(t, g, path, in, http.Header{"Authorization": {"Bearer " + without}}); code != 403 {
		t.Errorf("user without the models role: %d %s", code, body)
	}
	code, _, body = postJSON(t, g, path, in, http.Header{"Authorization": {"Bearer " + withRole}})
	if code != 200 {
		t.Fatalf("user with the models role: %d %s", code, body)
	}
	var out struct {
		Value float64 `json:"value"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Value < 18.3 || out.Value > 18.5 {
		t.Errorf("10 mg/L doxorubicin = %v uM, want about 18.4 (%s)", out.Value, body)
	}
	// The index and the docs are public and list the module.
	resp, body := get(t, g, "/models", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"example-units"`) {
		t.Errorf("/models: %d %.200s", resp.StatusCode, body)
	}
	resp, body = get(t, g, "/openapi.json", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "/example/units/convert") || !strings.Contains(string(body), "/api/3/action/package_search") {
		t.Errorf("/openapi.json lacks the model or catalog paths: %d", resp.StatusCode)
	}
}
