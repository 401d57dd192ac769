package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// getAction calls a read action with GET and k=v query strings, as
// `ckanapi action name k=v` and curl do.
func getAction(t *testing.T, g *harness.Gateway, path string, q url.Values, h http.Header) (int, []byte) {
	t.Helper()
	u := path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	resp, body, err := g.Do(context.Background(), http.MethodGet, u, h, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return resp.StatusCode, body
}

func result(t *testing.T, out map[string]any) map[string]any {
	t.Helper()
	r, ok := out["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result object in %v", out)
	}
	return r
}

// The catalog through the whole gateway: CKAN paths, envelope, both token
// headers, organization roles, private datasets, search, unknown actions.
func TestCatalogThroughGateway(t *testing.T) {
	g := harness.Start(t)
	admin := adminToken(t, g)

	// Anonymous reads work and see an empty catalog; anonymous writes do not.
	code, body := getAction(t, g, "/api/3/action/package_list", nil, nil)
	if code != 200 || !strings.Contains(string(body), `"success": true`) || !strings.Contains(string(body), `"result": []`) {
		t.Fatalf("anonymous package_list: %d %s", code, body)
	}
	if code, out := ckan(t, g, "package_create", "", map[string]any{"name": "anon-ds"}); code != 403 {
		t.Fatalf("anonymous package_create: %d %v", code, out)
	}

	// An organization with an editor and a member.
	provision(t, g, admin, "eddie", "eddie-password-1", true)
	provision(t, g, admin, "molly", "molly-password-1", true)
	provision(t, g, admin, "olga", "olga-password-1", true)
	editor := tokenFor(t, g, admin, "eddie", nil)
	member := tokenFor(t, g, admin, "molly", nil)
	outsider := tokenFor(t, g, admin, "olga", nil)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": "tox-lab", "title": "Tox Lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	for user, role := range map[string]string{"eddie": "editor", "molly": "member"} {
		if code, out := ckan(t, g, "organization_member_create", admin, map[string]any{"id": "tox-lab", "username": user, "role": role}); code != 200 {
			t.Fatalf("organization_member_create %s: %d %v", user, code, out)
		}
	}

	// The editor creates a public and a private dataset (X-CKAN-API-Key header).
	create := func(name string, private bool) map[string]any {
		b, _ := json.Marshal(map[string]any{"name": name, "title": "Cardiotoxicity " + name, "owner_org": "tox-lab",
			"private": private, "notes": "hERG patch clamp data", "tags": []map[string]any{{"name": "herg"}},
			"resources": []map[string]any{{"url": "http://example.org/" + name + ".csv", "name": "data"}}})
		resp, body, err := g.Do(context.Background(), http.MethodPost, "/api/action/package_create",
			http.Header{"Content-Type": {"application/json"}, "X-CKAN-API-Key": {editor}}, b)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("package_create %s: %v %s", name, err, body)
		}
		var out map[string]any
		_ = json.Unmarshal(body, &out)
		return result(t, out)
	}
	pub := create("herg-public", false)
	create("herg-private", true)
	if pub["creator_user_id"] == "" || pub["organization"].(map[string]any)["name"] != "tox-lab" {
		t.Errorf("created dataset lacks creator or organization: %v", pub)
	}

	// Private: 403 for anonymous and outsiders, visible to members.
	q := url.Values{"id": {"herg-private"}}
	if code, body := getAction(t, g, "/api/3/action/package_show", q, nil); code != 403 || !strings.Contains(string(body), `"__type": "Authorization Error"`) {
		t.Errorf("anonymous package_show of a private dataset: %d %s", code, body)
	}
	if code, _ := getAction(t, g, "/api/3/action/package_show", q, http.Header{"Authorization": {outsider}}); code != 403 {
		t.Errorf("outsider package_show of a private dataset: %d", code)
	}
	if code, body := getAction(t, g, "/api/3/action/package_show", q, http.Header{"Authorization": {member}}); code != 200 {
		t.Errorf("member package_show of a private dataset: %d %s", code, body)
	}
	// Bearer form is accepted too.
	if code, _ := getAction(t, g, "/api/3/action/package_show", q, http.Header{"Authorization": {"Bearer " + member}}); code != 200 {
		t.Errorf("member package_show with a Bearer token: %d", code)
	}
	// A member may not write; the outsider neither.
	if code, _ := ckan(t, g, "package_patch", member, map[string]any{"id": "herg-public", "title": "x"}); code != 403 {
		t.Errorf("member package_patch: %d, want 403", code)
	}

	// Search: the public dataset for everybody, the private one for members only.
	search := func(token string) []string {
		h := http.Header{}
		if token != "" {
			h.Set("Authorization", token)
		}
		code, body := getAction(t, g, "/api/3/action/package_search", url.Values{"q": {"herg"}, "include_private": {"true"}, "facet.field": {`["tags","organization"]`}}, h)
		if code != 200 {
			t.Fatalf("package_search: %d %s", code, body)
		}
		var out struct {
			Result struct {
				Count   int `json:"count"`
				Results []struct {
					Name string `json:"name"`
				} `json:"results"`
				SearchFacets map[string]any `json:"search_facets"`
			} `json:"result"`
		}
		_ = json.Unmarshal(body, &out)
		if out.Result.SearchFacets["tags"] == nil {
			t.Errorf("search_facets lack tags: %s", body)
		}
		var names []string
		for _, r := range out.Result.Results {
			names = append(names, r.Name)
		}
		return names
	}
	if got := search(""); len(got) != 1 || got[0] != "herg-public" {
		t.Errorf("anonymous search found %v, want [herg-public]", got)
	}
	if got := search(member); len(got) != 2 {
		t.Errorf("member search found %v, want both datasets", got)
	}

	// A change is found as it is now by the very next request.
	if code, out := ckan(t, g, "package_patch", editor, map[string]any{"id": "herg-public", "title": "Renamed dataset"}); code != 200 {
		t.Fatalf("package_patch: %d %v", code, out)
	}
	code, body = getAction(t, g, "/api/3/action/package_search", url.Values{"q": {"renamed"}}, nil)
	if code != 200 || !strings.Contains(string(body), `"count": 1`) {
		t.Errorf("search right after a patch: %d %s", code, body)
	}

	// Unknown action: CKAN's bare string; a write action by GET: 400.
	code, body = getAction(t, g, "/api/3/action/no_such_action", nil, nil)
	if code != 400 || string(body) != `"Bad request - Action name not known: no_such_action"` {
		t.Errorf("unknown action: %d %s", code, body)
	}
	code, body = getAction(t, g, "/api/3/action/package_create", url.Values{"name": {"x"}}, http.Header{"Authorization": {admin}})
	if code != 400 || !strings.Contains(string(body), "Please use POST method") {
		t.Errorf("GET of a write action: %d %s", code, body)
	}

	// Soft delete hides the dataset from anonymous callers.
	if code, out := ckan(t, g, "package_delete", editor, map[string]any{"id": "herg-public"}); code != 200 {
		t.Fatalf("package_delete: %d %v", code, out)
	}
	if code, _ := getAction(t, g, "/api/3/action/package_show", url.Values{"id": {"herg-public"}}, nil); code != 404 && code != 403 {
		t.Errorf("anonymous package_show of a deleted dataset: %d", code)
	}
}

// pluginPID returns the catalog plugin's process id from /admin/plugins.
func pluginPID(t *testing.T, g *harness.Gateway, admin string) (int, bool) {
	t.Helper()
	resp, body, err := g.Do(context.Background(), http.MethodGet, "/admin/plugins", http.Header{"Authorization": {"Bearer " + admin}}, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/admin/plugins: %v %s", err, body)
	}
	var out struct {
		Plugins []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	for _, m := range out.Plugins {
		var p struct {
			Name string `json:"name"`
			Up   bool   `json:"up"`
			PID  int    `json:"pid"`
		}
		b, _ := json.Marshal(m)
		_ = json.Unmarshal(b, &p)
		for _, k := range []string{"name", "up", "pid"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("/admin/plugins: no %q member (the API's keys are snake_case): %s", k, body)
			}
		}
		if p.Name == "catalog" {
			return p.PID, p.Up
		}
	}
	t.Fatalf("no catalog plugin in %s", body)
	return 0, false
}

// A reload under steady load loses no request; a crashed plugin answers a
// CKAN-shaped 503 at once and is restarted.
func TestCatalogPluginReloadAndCrash(t *testing.T) {
	g := harness.Start(t)
	admin := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": "steady-org"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	if code, out := ckan(t, g, "package_create", admin, map[string]any{"name": "steady", "owner_org": "steady-org"}); code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}
	before, _ := pluginPID(t, g, admin)

	var ok, failed atomic.Int64
	var firstFail atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, body, err := g.Do(context.Background(), http.MethodGet, "/api/3/action/package_show?id=steady", nil, nil)
				if err == nil && resp.StatusCode == 200 {
					ok.Add(1)
				} else {
					failed.Add(1)
					firstFail.CompareAndSwap(nil, string(body))
				}
			}
		}()
	}
	for i := 0; i < 3; i++ {
		resp, body, err := g.Do(context.Background(), http.MethodPost, "/admin/plugins/catalog/reload", http.Header{"Authorization": {"Bearer " + admin}}, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("reload %d: %v %s", i, err, body)
		}
	}
	close(stop)
	wg.Wait()
	if failed.Load() != 0 || ok.Load() == 0 {
		t.Fatalf("during 3 reloads: %d ok, %d failed (first: %v)", ok.Load(), failed.Load(), firstFail.Load())
	}
	after, _ := pluginPID(t, g, admin)
	if after == before || after == 0 {
		t.Errorf("plugin pid %d -> %d: not replaced", before, after)
	}
	// Non-admins may not reload.
	if resp, _, _ := g.Do(context.Background(), http.MethodPost, "/admin/plugins/catalog/reload", nil, nil); resp.StatusCode != 401 {
		t.Errorf("anonymous reload: %d, want 401", resp.StatusCode)
	}

	// Crash: kill the plugin process. Requests get a 503 in CKAN's shape (or
	// succeed on the restarted plugin); readiness names the plugin while down.
	if err := syscall.Kill(after, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	saw503 := false
	for {
		start := time.Now()
		resp, body, err := g.Do(context.Background(), http.MethodGet, "/api/3/action/package_show?id=steady", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == 503 {
			saw503 = true
			if time.Since(start) > 5*time.Second {
				t.Errorf("503 took %s: should answer at once", time.Since(start))
			}
			if !strings.Contains(string(body), `"success": false`) {
				t.Errorf("503 body not CKAN-shaped: %s", body)
			}
		}
		if resp.StatusCode == 200 {
			if pid, up := pluginPID(t, g, admin); up && pid != after {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin not restarted within 60s; last answer %d %s", resp.StatusCode, body)
		}
	}
	t.Logf("saw a 503 while the plugin was down: %v", saw503)
	// the restarted plugin answered, so it has loaded; the host learns it
	// from the plugin's ready call, which returns as the load ends
	waitUntil(t, 30*time.Second, "readyz 200 after restart", func() bool {
		resp, _ := get(t, g, "/readyz", nil)
		return resp.StatusCode == 200
	})
}
