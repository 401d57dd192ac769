package pluginhost

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// killAndWaitRestart kills the catalog plugin with SIGKILL and waits until
// a new process serves package_show of ref.
func killAndWaitRestart(t *testing.T, e *env, ref string) {
	t.Helper()
	old := e.pid()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		r := e.do("GET", "/api/3/action/package_show?id="+ref, "", nil)
		if r.status == 200 && e.pid() != old && e.pid() != 0 {
			return
		}
		if r.status != 200 && r.status != 503 {
			t.Fatalf("unexpected reply while restarting: %d %s", r.status, r.raw)
		}
	}
	t.Fatal("plugin was not restarted")
}

// TestGroupCommitKeepsAcknowledgedWrites runs 8 writers at once, creating
// datasets of their own and adding resources to one shared dataset (their
// store writes share round trips), kills the plugin with SIGKILL in the
// middle of the batches, and once every writer is done kills it again so
// that everything is read back from the store: every acknowledged create
// and every acknowledged resource is there, and every dataset served is
// whole (its resources and tags), never half written.
func TestGroupCommitKeepsAcknowledgedWrites(t *testing.T) {
	e := newEnv(t, envOpts{cfg: func(c *Config) { c.RestartBackoff = 100 * time.Millisecond }})
	mustOK(t, e.ckanapi("organization_create", "tok-sysadmin", map[string]any{"name": "lab"}))
	mustOK(t, e.ckanapi("package_create", "tok-sysadmin", map[string]any{"name": "shared", "owner_org": "lab"}))

	const writers, perWriter, killAfter = 8, 24, 40
	var (
		mu       sync.Mutex
		created  []string // acknowledged creates
		resNames []string // acknowledged resources of "shared"
		acks     atomic.Int64
		killed   = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				if i%3 == 2 {
					rn := fmt.Sprintf("r-%d-%d", w, i)
					r := e.ckanapi("resource_create", "tok-sysadmin", map[string]any{"package_id": "shared", "name": rn, "url": "http://example.org/" + rn})
					for r.status == 503 { // down: retried until it runs
						r = e.ckanapi("resource_create", "tok-sysadmin", map[string]any{"package_id": "shared", "name": rn, "url": "http://example.org/" + rn})
					}
					if r.status == 200 {
						mu.Lock()
						resNames = append(resNames, rn)
						mu.Unlock()
					} else if r.status != 500 && r.status != 409 {
						// 409: the conflict answer while a revision claimed by
						// the killed process is blocked (see catalog/README.md)
						t.Errorf("resource_create: %d %s", r.status, r.raw)
					}
				} else {
					name := fmt.Sprintf("gc-%d-%d", w, i)
					body := map[string]any{"name": name, "owner_org": "lab",
						"tags":      []map[string]any{{"name": "alpha"}, {"name": "beta"}, {"name": "gamma"}},
						"resources": []map[string]any{{"url": "http://example.org/1", "name": "one"}, {"url": "http://example.org/2", "name": "two"}}}
					r := e.ckanapi("package_create", "tok-sysadmin", body)
					for r.status == 503 { // down: retried until it runs
						r = e.ckanapi("package_create", "tok-sysadmin", body)
					}
					switch r.status {
					case 200:
						mu.Lock()
						created = append(created, name)
						mu.Unlock()
					case 500, 409:
						// the plugin died during the write (not acknowledged),
						// or a retry finds the name taken by the write the
						// kill cut off
					default:
						t.Errorf("package_create %s: %d %s", name, r.status, r.raw)
					}
				}
				if acks.Add(1) == killAfter {
					close(killed)
				}
			}
		}()
	}
	<-killed
	killAndWaitRestart(t, e, "shared")
	wg.Wait()
	killAndWaitRestart(t, e, "shared")

	mu.Lock()
	defer mu.Unlock()
	if len(created) == 0 {
		t.Fatal("no create was acknowledged")
	}
	for _, name := range created {
		r := e.ckanapi("package_show", "tok-sysadmin", map[string]any{"id": name})
		d, _ := mustOK(t, r).(map[string]any)
		if res, _ := d["resources"].([]any); len(res) != 2 {
			t.Errorf("%s: %d resources after restart, want 2", name, len(res))
		}
		if tags, _ := d["tags"].([]any); len(tags) != 3 {
			t.Errorf("%s: %d tags after restart, want 3", name, len(tags))
		}
	}
	shared, _ := mustOK(t, e.ckanapi("package_show", "tok-sysadmin", map[string]any{"id": "shared"})).(map[string]any)
	have := map[string]bool{}
	for _, r := range shared["resources"].([]any) {
		have[r.(map[string]any)["name"].(string)] = true
	}
	for _, rn := range resNames {
		if !have[rn] {
			t.Errorf("acknowledged resource %s of shared lost", rn)
		}
	}
	// whatever else landed (a write whose reply the kill cut off) is whole
	found, _ := mustOK(t, e.ckanapi("package_search", "tok-sysadmin", map[string]any{"q": "name:gc-*", "rows": 1000})).(map[string]any)
	results, _ := found["results"].([]any)
	if len(results) < len(created) {
		t.Errorf("package_search finds %d gc- datasets, %d were acknowledged", len(results), len(created))
	}
	for _, x := range results {
		d := x.(map[string]any)
		if res, _ := d["resources"].([]any); len(res) != 2 {
			t.Errorf("%s served with %d resources", d["name"], len(res))
		}
		if tags, _ := d["tags"].([]any); len(tags) != 3 {
			t.Errorf("%s served with %d tags", d["name"], len(tags))
		}
	}
	t.Logf("%d creates and %d resources acknowledged, %d datasets found", len(created), len(resNames), len(results))
}
