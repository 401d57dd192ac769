package pluginhost

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestCrashAnswers503ThenRestarts kills the plugin process: requests get a
// CKAN-shaped 503 at once (never hang) until the host has restarted it, and
// the data written before the crash is served again afterwards.
func TestCrashAnswers503ThenRestarts(t *testing.T) {
	e := newEnv(t, envOpts{cfg: func(c *Config) { c.RestartBackoff = 300 * time.Millisecond }})
	mustOK(t, e.ckanapi("organization_create", "tok-sysadmin", map[string]any{"name": "lab"}))
	mustOK(t, e.ckanapi("package_create", "tok-sysadmin", map[string]any{"name": "survivor", "owner_org": "lab"}))
	old := e.pid()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	saw503 := false
	for ctx.Err() == nil {
		r := e.do("GET", "/api/3/action/package_show?id=survivor", "", nil)
		if r.status == 503 {
			saw503 = true
			if r.errType() != TypeUnavailable || r.body["success"] != false {
				t.Fatalf("503 not CKAN-shaped: %s", r.raw)
			}
			if e.host.Ready() == nil && e.pid() == old {
				t.Fatal("host reports ready on the dead process")
			}
			continue
		}
		if r.status == 200 && e.pid() != old && e.pid() != 0 {
			break
		}
		if r.status != 200 {
			t.Fatalf("unexpected reply while down: %d %s", r.status, r.raw)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("plugin was not restarted")
	}
	if !saw503 {
		t.Log("the restart completed before any request saw the plugin down")
	}
	// an action answered, so the process has loaded: the host learns it
	// from contract.ActionReady
	if err := e.host.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.host.Ready(); err != nil {
		t.Fatalf("not ready after restart: %v", err)
	}
}

// TestReloadUnderLoadLosesNothing reloads the plugin repeatedly while
// clients keep reading and writing: every request succeeds, and each old
// process is gone after its reload.
func TestReloadUnderLoadLosesNothing(t *testing.T) {
	e := newEnv(t, envOpts{})
	mustOK(t, e.ckanapi("organization_create", "tok-sysadmin", map[string]any{"name": "lab"}))
	mustOK(t, e.ckanapi("package_create", "tok-sysadmin", map[string]any{"name": "steady", "owner_org": "lab"}))

	var stop atomic.Bool
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				var r reply
				if w == 0 {
					r = e.ckanapi("package_patch", "tok-sysadmin", map[string]any{"id": "steady", "notes": time.Now().String()})
				} else {
					r = e.ckanapi("package_show", "", map[string]any{"id": "steady"})
				}
				if r.status == 200 {
					ok.Add(1)
				} else {
					failed.Add(1)
					t.Errorf("request failed during reload: %d %s", r.status, r.raw)
				}
			}
		}()
	}
	for range 3 {
		before := e.pid()
		for start := ok.Load(); ok.Load() < start+20; {
			runtime_Gosched()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		if err := e.host.Reload(ctx, "catalog"); err != nil {
			t.Fatal(err)
		}
		cancel()
		if after := e.pid(); after == before || after == 0 {
			t.Fatalf("pid %d → %d", before, after)
		}
		if processAlive(before) {
			t.Fatalf("old process %d still running after reload", before)
		}
	}
	for start := ok.Load(); ok.Load() < start+20; {
		runtime_Gosched()
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("requests: %d ok, %d failed", ok.Load(), failed.Load())
	if failed.Load() != 0 {
		t.Fatalf("%d requests lost during reloads", failed.Load())
	}
}

// TestBinaryChangeTriggersReload replaces the plugin binary on disk and
// expects the host to start the new one by itself.
func TestBinaryChangeTriggersReload(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "toxgate-catalog")
	copyFile(t, pluginBin, bin)
	e := newEnv(t, envOpts{cfg: func(c *Config) {
		c.Plugins[0].Path = bin
		c.WatchBinaries = true
		c.WatchInterval = 50 * time.Millisecond
	}})
	before := e.pid()
	// a new build: same program, new file
	tmp := bin + ".new"
	copyFile(t, pluginBin, tmp)
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(tmp, later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for e.pid() == before || e.pid() == 0 {
		if ctx.Err() != nil {
			t.Fatal("binary change did not reload the plugin")
		}
		r := e.do("GET", "/api/3/action/status_show", "", nil)
		if r.status != 200 {
			t.Fatalf("request failed during watched reload: %d %s", r.status, r.raw)
		}
	}
}

// TestChecksumMismatchRefusesToStart configures a wrong sha256.
func TestChecksumMismatchRefusesToStart(t *testing.T) {
	h, err := New(Config{Plugins: []PluginConfig{{Name: "catalog", Path: pluginBin, SHA256: "00000000000000000000000000000000000000000000000000000000000000ff"}},
		MongoURI: mongoURI, MongoDatabase: "checksum", RestartBackoff: time.Hour}, quiet, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err == nil {
		t.Fatal("started a binary with the wrong checksum")
	}
	defer h.Close(context.Background())
	if err := h.Ready(); err == nil {
		t.Fatal("ready without a plugin")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// processAlive reports whether pid is a running (not zombie) process.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	for i := 0; i+2 < len(b); i++ {
		if b[i] == ')' {
			return b[i+2] != 'Z' && b[i+2] != 'X'
		}
	}
	return true
}
