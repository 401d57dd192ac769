package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A catalog plugin killed with SIGKILL while 8 clients create datasets is
// restarted from its records file: every create that was acknowledged is
// served, and the catalog holds what a start that reads every dataset from
// the store holds.
func TestCatalogRecordsFileSurvivesPluginKill(t *testing.T) {
	g, admin := catalogGateway(t, "kill-lab")
	if !g.WaitLog(regexp.MustCompile(`catalog records file written`), 60*time.Second) {
		t.Fatalf("no records file written:\n%s", g.Logs())
	}
	pid, _ := pluginPID(t, g, admin)

	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	killAt, enough := make(chan struct{}), make(chan struct{})
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("kill-%d-%03d", w, i)
				code, _ := ckan(t, g, "package_create", admin, map[string]any{"name": name, "owner_org": "kill-lab",
					"title": "kinetics " + name, "tags": []any{map[string]any{"name": "kill"}}})
				if code == 200 {
					mu.Lock()
					acked = append(acked, name)
					switch len(acked) {
					case 40:
						close(killAt)
					case 60:
						close(enough)
					}
					mu.Unlock()
				}
			}
		}()
	}
	<-killAt
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !g.WaitLog(regexp.MustCompile(`catalog loaded from its records file`), 120*time.Second) {
		t.Fatalf("the restarted plugin did not start from its records file:\n%s", g.Logs())
	}
	// writes go on after the restart until 20 more are acknowledged
	select {
	case <-enough:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no 60 creates acknowledged within 2 minutes of the restart:\n%s", g.Logs())
	}
	close(stop)
	wg.Wait()
	for _, name := range acked {
		if code, out := ckan(t, g, "package_show", admin, map[string]any{"id": name}); code != 200 {
			t.Fatalf("acknowledged %s not served after the kill: %d %v", name, code, out)
		}
	}
	names := func() []any {
		code, out := ckan(t, g, "package_search", admin, map[string]any{"q": "*:*", "rows": 1000, "sort": "name asc", "include_private": true})
		if code != 200 {
			t.Fatalf("package_search: %d %v", code, out)
		}
		var got []any
		for _, r := range out["result"].(map[string]any)["results"].([]any) {
			got = append(got, r.(map[string]any)["name"])
		}
		return got
	}
	fromFile := names()
	if len(fromFile) < len(acked) {
		t.Fatalf("%d datasets served, %d acknowledged", len(fromFile), len(acked))
	}
	// the same catalog, read from the store alone
	if code := g.Stop(); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}
	if err := os.Remove(filepath.Join(g.DataDir, "catalog-index.snap.records")); err != nil {
		t.Fatal(err)
	}
	g.Relaunch()
	if !reflect.DeepEqual(names(), fromFile) {
		t.Fatalf("the catalog read from the store differs from the one read from the records file:\n store %v\n  file %v", names(), fromFile)
	}
}
