package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"toxgate/gateway/harness"
)

// activityTypes calls an activity list and returns its activity types
// (nil and the status when it fails).
func activityTypes(t *testing.T, g *harness.Gateway, action, token string, data map[string]any) ([]string, int) {
	t.Helper()
	code, out := ckan(t, g, action, token, data)
	if code != 200 {
		return nil, code
	}
	var types []string
	for _, a := range out["result"].([]any) {
		types = append(types, a.(map[string]any)["activity_type"].(string))
	}
	return types, code
}

// Activity through the real gateway and plugin: private datasets' activity
// only for who may read them, and all of it still there after a restart.
func TestActivityVisibilityAndRestart(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+t.TempDir()))
	admin := adminToken(t, g)
	provision(t, g, admin, "mia", "mia-password-1", true)
	provision(t, g, admin, "otto", "otto-password-1", true)
	member, outsider := tokenFor(t, g, admin, "mia", nil), tokenFor(t, g, admin, "otto", nil)
	must := func(action string, data map[string]any) {
		t.Helper()
		if code, out := ckan(t, g, action, admin, data); code != 200 {
			t.Fatalf("%s: %d %v", action, code, out)
		}
	}
	must("organization_create", map[string]any{"name": "tox-lab"})
	must("organization_member_create", map[string]any{"id": "tox-lab", "username": "mia", "role": "member"})
	must("package_create", map[string]any{"name": "herg-private", "owner_org": "tox-lab", "private": true})
	must("package_patch", map[string]any{"id": "herg-private", "notes": "internal"})
	must("package_create", map[string]any{"name": "herg-public", "owner_org": "tox-lab"})
	must("resource_create", map[string]any{"package_id": "herg-public", "url": "http://example.org/ic50.csv"})

	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			who, token, action string
			data               map[string]any
			want               []string
			code               int
		}{
			{"anonymous", "", "package_activity_list", map[string]any{"id": "herg-private"}, nil, 403},
			{"outsider", outsider, "package_activity_list", map[string]any{"id": "herg-private"}, nil, 403},
			{"member", member, "package_activity_list", map[string]any{"id": "herg-private"}, []string{"changed package", "new package"}, 200},
			{"anonymous", "", "package_activity_list", map[string]any{"id": "herg-public"}, []string{"changed package", "new package"}, 200},
			{"anonymous", "", "recently_changed_packages_activity_list", nil, []string{"changed package", "new package"}, 200},
			{"member", member, "recently_changed_packages_activity_list", nil,
				[]string{"changed package", "new package", "changed package", "new package"}, 200},
			{"outsider", outsider, "user_activity_list", map[string]any{"id": "admin"},
				[]string{"changed package", "new package", "new organization"}, 200},
			{"member", member, "dashboard_activity_list", nil,
				[]string{"changed package", "new package", "changed package", "new package", "new organization"}, 200},
			{"anonymous", "", "dashboard_activity_list", nil, nil, 403},
		} {
			got, code := activityTypes(t, g, c.action, c.token, c.data)
			if code != c.code || !slices.Equal(got, c.want) {
				t.Errorf("%s: %s %s %v: %d %q, want %d %q", when, c.who, c.action, c.data, code, got, c.code, c.want)
			}
		}
	}
	check("before the restart")
	g.Restart()
	check("after a restart")

	// the dataset's page lists its activity: who, what, when
	b := newBrowser(t)
	tb := b.tab(g, "anonymous")
	tb.open("/dataset/herg-public")
	items := eval[[]string](tb, `Array.from(document.querySelectorAll("#activity .activity-item")).map(e => e.textContent.replace(/\s+/g, " ").trim())`)
	if len(items) != 2 || !strings.HasPrefix(items[0], "admin updated the dataset ") || !strings.HasPrefix(items[1], "admin created the dataset ") ||
		!strings.HasSuffix(items[1], " UTC") {
		t.Errorf("dataset page activity: %q", items)
	}
	tb.shot("dataset-activity", 1280)
	tb.do("phone width", chromedp.EmulateViewport(390, 844))
	if !tb.fitsPhone() {
		t.Errorf("the dataset page with its activity is wider than a phone: %v", tb.overflowing())
	}
	// a private dataset's page shows its activity to a member
	mt := b.tab(g, "member")
	mt.login("mia", "mia-password-1")
	mt.open("/dataset/herg-private")
	if n := eval[int](mt, `document.querySelectorAll("#activity .activity-item").length`); n != 2 {
		t.Errorf("member sees %d activities on the private dataset's page: %s", n, mt.text("main"))
	}
}

// Under kill -9 of the plugin and then of the gateway (with its embedded
// store) in the middle of writes, every acknowledged write has its
// activity, and each dataset's newest activity holds what package_show
// gives: no revision that reached the store lacks its activity, and no
// activity is shown for a write that did not happen.
func TestActivitySurvivesKill(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+t.TempDir()))
	admin := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": "tox-lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	names := []string{"kill-a", "kill-b", "kill-c"}
	for _, n := range names {
		if code, out := ckan(t, g, "package_create", admin, map[string]any{"name": n, "owner_org": "tox-lab"}); code != 200 {
			t.Fatalf("package_create: %d %v", code, out)
		}
	}
	var mu sync.Mutex
	acked := map[string][]string{} // dataset → notes of acknowledged patches
	var seq atomic.Int64
	// churn patches the datasets from three clients until stop is closed.
	churn := func(stop <-chan struct{}) *sync.WaitGroup {
		var wg sync.WaitGroup
		for _, n := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					notes := fmt.Sprintf("patch %d", seq.Add(1))
					body, _ := json.Marshal(map[string]any{"id": n, "notes": notes})
					h := http.Header{"Content-Type": {"application/json"}, "Authorization": {admin}}
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					resp, _, err := g.Do(ctx, http.MethodPost, "/api/3/action/package_patch", h, body)
					cancel()
					if err == nil && resp.StatusCode == 200 {
						mu.Lock()
						acked[n] = append(acked[n], notes)
						mu.Unlock()
					} else {
						time.Sleep(20 * time.Millisecond) // the plugin or gateway is down: try again soon
					}
				}
			}()
		}
		return &wg
	}
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked[names[0]]) + len(acked[names[1]]) + len(acked[names[2]])
	}

	stop := make(chan struct{})
	wg := churn(stop)
	waitFor(t, 60*time.Second, "some acknowledged patches", func() bool { return ackedCount() >= 15 })
	pid, ok := pluginPID(t, g, admin)
	if !ok {
		t.Fatal("no plugin pid")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	before := ackedCount()
	waitFor(t, 60*time.Second, "patches after the plugin came back", func() bool { return ackedCount() >= before+15 })
	g.Kill9()
	close(stop)
	wg.Wait()
	g.Relaunch()

	check := func(when string) {
		t.Helper()
		for _, n := range names {
			code, out := ckan(t, g, "package_activity_list", admin, map[string]any{"id": n, "limit": 100})
			if code != 200 {
				t.Fatalf("%s: package_activity_list %s: %d %v", when, n, code, out)
			}
			seen := map[string]bool{}
			var newest map[string]any
			for i, a := range out["result"].([]any) {
				p := a.(map[string]any)["data"].(map[string]any)["package"].(map[string]any)
				if i == 0 {
					newest = p
				}
				notes, _ := p["notes"].(string)
				if seen[notes] {
					t.Errorf("%s: %s: two activities hold notes %q", when, n, notes)
				}
				seen[notes] = true
			}
			mu.Lock()
			for _, notes := range acked[n] {
				if !seen[notes] {
					t.Errorf("%s: %s: the acknowledged patch %q has no activity", when, n, notes)
				}
			}
			mu.Unlock()
			_, show := ckan(t, g, "package_show", admin, map[string]any{"id": n})
			cur := show["result"].(map[string]any)
			if newest["notes"] != cur["notes"] || newest["metadata_modified"] != cur["metadata_modified"] {
				t.Errorf("%s: %s: newest activity holds %v / %v, package_show %v / %v", when, n,
					newest["notes"], newest["metadata_modified"], cur["notes"], cur["metadata_modified"])
			}
		}
	}
	check("after kill -9")
	// writes go on, each with its activity; a revision claimed by a writer
	// killed before its record write is free again after 30 s (see
	// catalog/README.md), and its writer's activity is then replaced
	for _, n := range names {
		waitFor(t, 60*time.Second, "a patch of "+n+" after the kill", func() bool {
			code, out := ckan(t, g, "package_patch", admin, map[string]any{"id": n, "notes": "after " + n})
			if code != 200 && code != 409 {
				t.Fatalf("package_patch after the kill: %d %v\n%s", code, out, g.Logs())
			}
			return code == 200
		})
		mu.Lock()
		acked[n] = append(acked[n], "after "+n)
		mu.Unlock()
	}
	check("after more writes")
	t.Logf("%d acknowledged patches", ackedCount())
}
