package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// TestPluginSettingsReachThePlugin sets plugins.transport and
// catalog.concurrent_writes from the environment of the shipped gateway:
// the host negotiates gRPC with the catalog plugin (go-plugin's view of the
// connection, in /admin/plugins), the plugin reports the concurrent writes
// it decoded from its settings message, catalog actions answer over gRPC,
// and neither variable is reported as matching no configuration key.
func TestPluginSettingsReachThePlugin(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_PLUGINS_TRANSPORT=grpc", "TOXGATE_CATALOG_CONCURRENT_WRITES=true"))
	admin := adminToken(t, g)
	resp, body, err := g.Do(context.Background(), http.MethodGet, "/admin/plugins", http.Header{"Authorization": {"Bearer " + admin}}, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/admin/plugins: %v %s", err, body)
	}
	var out struct {
		Plugins []struct {
			Name     string `json:"name"`
			Up       bool   `json:"up"`
			Protocol string `json:"protocol"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Plugins) != 1 || !out.Plugins[0].Up || out.Plugins[0].Protocol != "grpc" {
		t.Fatalf("/admin/plugins = %s, want the catalog up over grpc", body)
	}
	if !g.WaitLog(regexp.MustCompile(`"msg":"catalog plugin settings".*"concurrent_writes":true.*"transport":"grpc"`), time.Minute) {
		t.Fatalf("the plugin did not report concurrent_writes=true over grpc; logs:\n%s", g.Logs())
	}
	if code, _ := getAction(t, g, "/api/3/action/package_list", nil, nil); code != 200 {
		t.Fatalf("package_list over grpc: %d", code)
	}
	if regexp.MustCompile(`matches no configuration key.*(PLUGINS_TRANSPORT|CONCURRENT_WRITES)`).MatchString(g.Logs()) {
		t.Fatalf("a setting was reported as unknown; logs:\n%s", g.Logs())
	}
}

// TestPluginSettingsDefaults is the same gateway without the variables:
// net/rpc and one writer at a time, from config.Default().
func TestPluginSettingsDefaults(t *testing.T) {
	g := harness.Start(t)
	admin := adminToken(t, g)
	resp, body, err := g.Do(context.Background(), http.MethodGet, "/admin/plugins", http.Header{"Authorization": {"Bearer " + admin}}, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/admin/plugins: %v %s", err, body)
	}
	if !regexp.MustCompile(`"protocol":"netrpc"`).Match(body) {
		t.Fatalf("/admin/plugins = %s, want netrpc", body)
	}
	if !g.WaitLog(regexp.MustCompile(`"msg":"catalog plugin settings".*"concurrent_writes":false.*"transport":"netrpc"`), time.Minute) {
		t.Fatalf("the plugin did not report its default settings; logs:\n%s", g.Logs())
	}
}
