package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"toxgate/gateway/harness"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
	"toxgate/gateway/identityhttp"
)

// TestEveryRouteIsReserved checks that every route the gateway serves lies
// under a prefix of the one table (httpcore.Prefixes), so a module can
// never claim it and be shadowed silently, and that the mesh check and the
// module host read that table.
func TestEveryRouteIsReserved(t *testing.T) {
	g := harness.Start(t)
	resp, body := get(t, g, "/debug/routes", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /debug/routes: %d %s", resp.StatusCode, body)
	}
	var routes map[string][]string
	if err := json.Unmarshal(body, &routes); err != nil {
		t.Fatalf("routes: %v: %s", err, body)
	}
	n := 0
	for method, paths := range routes {
		for _, path := range paths {
			n++
			if path == "/" {
				continue // the root page alone: no module route can be "/"
			}
			reserved := false
			for _, p := range httpcore.Prefixes {
				reserved = reserved || httpcore.UnderPrefix(path, p.Path)
			}
			if !reserved {
				t.Errorf("%s %s is served by the gateway but under no prefix of httpcore.Prefixes", method, path)
			}
		}
	}
	if n < 40 || !slices.Contains(routes["GET"], "/models") || !slices.Contains(routes["GET"], "/dashboard") {
		t.Errorf("the list misses routes (%d listed): %v", n, routes)
	}
	for _, path := range []string{"/dashboard", "/tokens/x/renew", "/readyz", "/api/3/action/package_show", "/static/toxgate.css",
		"/dataset/x", "/group/x", "/organization", "/catalog.ttl", "/openapi.json", "/favicon.svg"} {
		if role := identityhttp.RoleForPath(path, true); role != "" {
			t.Errorf("RoleForPath(%s) = %q, want public", path, role)
		}
	}
	for _, path := range []string{"/jobs", "/v2/models/x/infer", "/hERG/evaluate"} {
		if role := identityhttp.RoleForPath(path, true); role != identity.RoleModels {
			t.Errorf("RoleForPath(%s) = %q, want %q", path, role, identity.RoleModels)
		}
	}
}

// TestModelErrorsCarryTheRequestID: the model API's errors are written by
// the one error writer, so they name the request like every other error.
func TestModelErrorsCarryTheRequestID(t *testing.T) {
	g := harness.Start(t)
	resp, body := get(t, g, "/models/no-such-model", http.Header{"X-Request-ID": {"model-trace-7"}})
	var e struct {
		Error struct {
			Code      string `json:"code"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != http.StatusNotFound ||
		e.Error.Code != "not_found" || e.Error.RequestID != "model-trace-7" {
		t.Fatalf("GET /models/no-such-model: %d %s", resp.StatusCode, body)
	}
}
