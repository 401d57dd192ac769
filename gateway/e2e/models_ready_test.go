package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// readyzBody is /readyz's answer.
type readyzBody struct {
	Ready       bool              `json:"ready"`
	ReadyStatus string            `json:"ready_status"`
	Parts       map[string]string `json:"parts"`
	Models      map[string]string `json:"models"`
	NotReady    []string          `json:"not_ready"`
}

func readyz(t *testing.T, g *harness.Gateway) (int, readyzBody) {
	t.Helper()
	resp, body := get(t, g, "/readyz", nil)
	var rb readyzBody
	if err := json.Unmarshal(body, &rb); err != nil {
		t.Fatalf("/readyz: %v: %s", err, body)
	}
	return resp.StatusCode, rb
}

// The gateway serves the catalog while a module still loads; the module's
// route answers 503 with Retry-After and a JSON error until the module is
// ready, then 200. /readyz tells each part and each model, and with
// server.ready_status core answers 200 as soon as the core is up. The
// module's file is a named pipe that the test fills when it chooses, so
// "still loading" lasts exactly as long as the test wants (no timing).
func TestModelRouteAnswers503UntilItsModuleIsReady(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "herg.wasm")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	wasm, err := os.ReadFile(filepath.Join(harness.Build(t).Modules, "herg.wasm"))
	if err != nil {
		t.Fatalf("herg.wasm not built (run make build): %v", err)
	}
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+dir, "TOXGATE_MODULES_REQUIRE_TOKEN=false",
		"TOXGATE_MODULES_WATCH=false", "TOXGATE_SERVER_READY_STATUS=core"))

	code, rb := readyz(t, g)
	if code != 200 || !rb.Ready || rb.ReadyStatus != "core" {
		t.Fatalf("/readyz with the core up: %d %+v", code, rb)
	}
	if rb.Parts["store"] != "ok" || rb.Parts["plugins"] != "ok" || !strings.Contains(rb.Parts["modules"], "loading") {
		t.Fatalf("/readyz parts while herg loads: %+v", rb.Parts)
	}
	if rb.Models["herg"] != "loading" || len(rb.NotReady) != 1 || rb.NotReady[0] != "modules" {
		t.Fatalf("/readyz models while herg loads: %+v, not ready %v", rb.Models, rb.NotReady)
	}
	if resp, body := get(t, g, "/api/3/action/package_list", nil); resp.StatusCode != 200 {
		t.Fatalf("the catalog while a module loads: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, g, "/IsAlive", nil); resp.StatusCode != 200 {
		t.Fatalf("/IsAlive while a module loads: %d", resp.StatusCode)
	}
	smiles := `{"smiles":"CCO"}`
	code, h, body := postJSON(t, g, "/hERG/evaluate", smiles, nil)
	var eb struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &eb); err != nil || code != 503 || eb.Error.Code != "unavailable" || !strings.Contains(eb.Error.Message, "loading") {
		t.Fatalf("a model call while its module loads: %d %s, want 503 unavailable", code, body)
	}
	if n, err := strconv.Atoi(h.Get("Retry-After")); err != nil || n < 1 {
		t.Fatalf("503 without a Retry-After of at least 1 s: %q", h.Get("Retry-After"))
	}
	if resp, body := get(t, g, "/v2/models/herg/ready", nil); resp.StatusCode != 503 {
		t.Fatalf("OIP model ready while loading: %d %s", resp.StatusCode, body)
	}
	infer := `{"inputs":[{"name":"smiles","datatype":"BYTES","shape":[1],"data":["CCO"]}]}`
	if code, h, body := postJSON(t, g, "/v2/models/herg/infer", infer, nil); code != 503 || h.Get("Retry-After") == "" {
		t.Fatalf("OIP infer while loading: %d %s, want 503 with Retry-After", code, body)
	}

	// Let the module load: the gateway reads it from the pipe now.
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(wasm); err != nil {
		t.Fatal(err)
	}
	f.Close()
	waitFor(t, 5*time.Minute, "herg ready in /readyz", func() bool {
		_, rb := readyz(t, g)
		return rb.Models["herg"] == "ready" && rb.Parts["modules"] == "ok"
	})
	if code, rb := readyz(t, g); code != 200 || !rb.Ready || len(rb.NotReady) != 0 {
		t.Fatalf("/readyz once herg is ready: %d %+v", code, rb)
	}
	if code, _, body := postJSON(t, g, "/hERG/evaluate", smiles, nil); code != 200 || !strings.Contains(string(body), `"results"`) {
		t.Fatalf("the model call once its module is ready: %d %.300s", code, body)
	}
	if resp, body := get(t, g, "/v2/models/herg/ready", nil); resp.StatusCode != 200 {
		t.Fatalf("OIP model ready once loaded: %d %s", resp.StatusCode, body)
	}
	if code, _, body := postJSON(t, g, "/v2/models/herg/infer", infer, nil); code != 200 {
		t.Fatalf("OIP infer once loaded: %d %.300s", code, body)
	}
}

// With server.ready_status all (the default), /readyz answers 503 while a
// module loads, naming the modules part.
func TestReadyzWaitsForEveryModelByDefault(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "herg.wasm")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	g := harness.Start(t, harness.WithoutReadyWait(), harness.WithEnv("TOXGATE_MODULES_DIR="+dir, "TOXGATE_MODULES_WATCH=false"))
	defer func() { // unblock the loader so that the gateway stops at once
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	}()
	waitFor(t, time.Minute, "the store and plugins up", func() bool {
		_, rb := readyz(t, g)
		return rb.Parts["store"] == "ok" && rb.Parts["plugins"] == "ok"
	})
	code, rb := readyz(t, g)
	if code != http.StatusServiceUnavailable || rb.Ready || rb.ReadyStatus != "all" || rb.Models["herg"] != "loading" {
		t.Fatalf("/readyz while a module loads, ready_status all: %d %+v", code, rb)
	}
}
