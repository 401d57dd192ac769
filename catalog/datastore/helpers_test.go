package datastore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"toxgate/catalog/datastore/pgtest"
	"toxgate/gateway/harness"
)

const adminPassword = "admin-password-for-tests"

// site is a running gateway with an organization "lab" (editor "eddie",
// member "molly"), an outsider "olga", and their tokens.
type site struct {
	t     testing.TB
	g     *harness.Gateway
	admin string
	tok   map[string]string
}

var (
	pgOnce sync.Once
	pgSrv  *pgtest.Server
	pgErr  error
	dbSeq  int
	dbMu   sync.Mutex
)

// engines runs f once on the embedded engine and once on PostgreSQL.
func engines(t *testing.T, f func(t *testing.T, env []string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, nil) })
	t.Run("postgres", func(t *testing.T) {
		pgOnce.Do(func() { pgSrv, pgErr = pgtest.Launch() })
		if pgErr != nil {
			pgtest.Require(t, pgErr)
			if testing.Short() {
				t.Skip(pgErr)
			}
			t.Fatal(pgErr)
		}
		dbMu.Lock()
		dbSeq++
		name := fmt.Sprintf("ds_%d", dbSeq)
		dbMu.Unlock()
		u, err := pgSrv.NewDatabase(name)
		if err != nil {
			t.Fatal(err)
		}
		f(t, []string{"TOXGATE_DATASTORE_URL=" + u})
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pgSrv != nil {
		pgSrv.Stop()
	}
	os.Exit(code)
}

func newSite(t testing.TB, env []string, opts ...harness.Option) *site {
	t.Helper()
	opts = append(opts, harness.WithEnv(env...))
	g := harness.Start(t, opts...)
	s := &site{t: t, g: g, tok: map[string]string{}}
	s.admin = adminToken(t, g)
	for _, u := range []string{"eddie", "molly", "olga"} {
		s.ok(s.admin, "user_create", map[string]any{"name": u, "email": u + "@example.org", "password": u + "-password-1", "state": "active"})
		s.tok[u] = s.ok(s.admin, "api_token_create", map[string]any{"user": u, "name": "t"})["token"].(string)
	}
	s.ok(s.admin, "organization_create", map[string]any{"name": "lab"})
	s.ok(s.admin, "organization_member_create", map[string]any{"id": "lab", "username": "eddie", "role": "editor"})
	s.ok(s.admin, "organization_member_create", map[string]any{"id": "lab", "username": "molly", "role": "member"})
	return s
}

// call posts an action as JSON with a token ("" anonymous).
func (s *site) call(token, action string, data map[string]any) (int, map[string]any) {
	s.t.Helper()
	b, _ := json.Marshal(data)
	h := http.Header{"Content-Type": {"application/json"}}
	if token != "" {
		h.Set("Authorization", token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, body, err := s.g.Do(ctx, http.MethodPost, "/api/3/action/"+action, h, b)
	if err != nil {
		s.t.Fatalf("%s: %v", action, err)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		s.t.Fatalf("%s: %d, not a JSON object: %s", action, resp.StatusCode, body)
	}
	return resp.StatusCode, out
}

// ok calls and expects success; it returns the result object.
func (s *site) ok(token, action string, data map[string]any) map[string]any {
	s.t.Helper()
	code, out := s.call(token, action, data)
	if code != 200 || out["success"] != true {
		s.t.Fatalf("%s: %d %v", action, code, out)
	}
	r, _ := out["result"].(map[string]any)
	return r
}

// fail calls and expects an error with status and __type; it returns the
// error object.
func (s *site) fail(token, action string, data map[string]any, status int, typ string) map[string]any {
	s.t.Helper()
	code, out := s.call(token, action, data)
	e, _ := out["error"].(map[string]any)
	if code != status || out["success"] != false || e["__type"] != typ {
		s.t.Fatalf("%s: want %d %q, got %d %v", action, status, typ, code, out)
	}
	return e
}

// dataset makes a dataset in "lab" with one resource and returns the
// resource id.
func (s *site) dataset(name string, private bool, res map[string]any) string {
	s.t.Helper()
	if res == nil {
		res = map[string]any{"url": "", "name": "table"}
	}
	d := s.ok(s.tok["eddie"], "package_create", map[string]any{"name": name, "owner_org": "lab", "private": private, "resources": []any{res}})
	return d["resources"].([]any)[0].(map[string]any)["id"].(string)
}

// search runs datastore_search as token.
func (s *site) search(token string, data map[string]any) map[string]any {
	s.t.Helper()
	return s.ok(token, "datastore_search", data)
}

// waitLoad polls xloader_status until the load is complete or failed.
func (s *site) waitLoad(id string, timeout time.Duration) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		code, out := s.call(s.tok["eddie"], "xloader_status", map[string]any{"resource_id": id})
		if code == 200 {
			r := out["result"].(map[string]any)
			if st := r["status"]; st == "complete" || st == "error" {
				return r
			}
		}
		if time.Now().After(deadline) {
			var keep []string
			for _, l := range strings.Split(s.g.Logs(), "\n") {
				if !strings.Contains(l, `"msg":"request"`) {
					keep = append(keep, l)
				}
			}
			logs := strings.Join(keep, "\n")
			if len(logs) > 6000 {
				logs = logs[len(logs)-6000:]
			}
			s.t.Fatalf("load of %s not finished within %s: %d %v\nlog tail:\n%s", id, timeout, code, out, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var newTokenRE = regexp.MustCompile(`id="new-token">(tg_[0-9A-Za-z]+)<`)
var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// adminToken logs the harness's sysadmin in on the web pages and makes an
// API token there.
func adminToken(t testing.TB, g *harness.Gateway) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) string {
		resp, err := c.Get(g.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	post := func(from, path string, form url.Values) (int, string) {
		m := csrfRE.FindStringSubmatch(get(from))
		if m == nil {
			t.Fatalf("no CSRF token on %s", from)
		}
		form.Set("csrf", m[1])
		resp, err := c.PostForm(g.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("/login", "/login", url.Values{"username": {"admin"}, "password": {adminPassword}}); code != http.StatusSeeOther {
		t.Fatalf("admin login: %d %.300s", code, body)
	}
	_, body := post("/tokens", "/tokens", url.Values{"name": {"tests"}, "expires_days": {"30"}})
	m := newTokenRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("create token: %.500s", body)
	}
	return m[1]
}

// records returns a search result's records as objects.
func records(r map[string]any) []map[string]any {
	list, _ := r["records"].([]any)
	out := make([]map[string]any, len(list))
	for i, e := range list {
		out[i], _ = e.(map[string]any)
	}
	return out
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return strings.TrimSpace(string(b))
}
