package pluginhost

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestActionsWhilePluginNotRunning: while a plugin has never started (its
// binary is missing), a call of any action the core does not serve is told
// to retry (CKAN-shaped 503 with Retry-After), never refused as unknown:
// it may be that plugin's action. With every plugin running, an unknown
// action is CKAN's 400.
func TestActionsWhilePluginNotRunning(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "toxgate-catalog")
	h, err := New(Config{Plugins: []PluginConfig{{Name: "catalog", Path: missing}}, MongoURI: mongoURI, MongoDatabase: "notrunning",
		RestartBackoff: time.Hour, Settings: testSettings()}, quiet, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err == nil {
		t.Fatal("a missing plugin binary started")
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })

	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/api/3/action/package_show?id=x")
	h.HandleAction(&ctx, "package_show", Identity{})
	var body struct {
		Success bool `json:"success"`
		Error   struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(ctx.Response.Body(), &body); err != nil {
		t.Fatalf("%d %s: %v", ctx.Response.StatusCode(), ctx.Response.Body(), err)
	}
	if ctx.Response.StatusCode() != 503 || string(ctx.Response.Header.Peek("Retry-After")) == "" || body.Success ||
		body.Error.Type != TypeUnavailable || body.Error.Message != "The catalog service is not running; please retry" {
		t.Fatalf("while the plugin is not running: %d %q %s", ctx.Response.StatusCode(), ctx.Response.Header.Peek("Retry-After"), ctx.Response.Body())
	}

	e := newEnv(t, envOpts{})
	if r := e.do("GET", "/api/3/action/no_such_action", "", nil); r.status != 400 {
		t.Fatalf("unknown action with the plugin running: %d %s", r.status, r.raw)
	}
}
