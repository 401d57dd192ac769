package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// adminPassword is the first sysadmin's password the harness configures.
const adminPassword = "admin-password-for-tests"

// webClient is a cookie-keeping HTTP client that does not follow redirects,
// so tests see each status and Location as a browser would get them.
type webClient struct {
	t testing.TB
	g *harness.Gateway
	c *http.Client
}

func newWebClient(t testing.TB, g *harness.Gateway) *webClient {
	jar, _ := cookiejar.New(nil)
	return &webClient{t: t, g: g, c: &http.Client{Jar: jar, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status   int
	body     string
	location string
}

func (w *webClient) do(req *http.Request) page {
	w.t.Helper()
	resp, err := w.c.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, body: string(b), location: resp.Header.Get("Location")}
}

func (w *webClient) get(path string) page {
	w.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, w.g.URL+path, nil)
	return w.do(req)
}

func (w *webClient) post(path string, form url.Values) page {
	w.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.g.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return w.do(req)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf loads path and returns the CSRF token of its forms.
func (w *webClient) csrf(path string) string {
	w.t.Helper()
	p := w.get(path)
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		w.t.Fatalf("no CSRF token on %s (%d): %.300s", path, p.status, p.body)
	}
	return m[1]
}

// submit posts a form of page from (with its CSRF token) to path.
func (w *webClient) submit(from, path string, form url.Values) page {
	w.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", w.csrf(from))
	return w.post(path, form)
}

func (w *webClient) login(name, password string) page {
	w.t.Helper()
	return w.submit("/login", "/login", url.Values{"username": {name}, "password": {password}})
}

var newTokenRE = regexp.MustCompile(`id="new-token">(tg_[0-9A-Za-z]+)<`)

// createToken generates a token on the token page and returns it.
func (w *webClient) createToken(name string) string {
	w.t.Helper()
	p := w.submit("/tokens", "/tokens", url.Values{"name": {name}, "expires_days": {"30"}})
	m := newTokenRE.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil {
		w.t.Fatalf("create token: %d %.500s", p.status, p.body)
	}
	return m[1]
}

// adminToken logs the harness's sysadmin in and makes an API token.
func adminToken(t testing.TB, g *harness.Gateway) string {
	t.Helper()
	w := newWebClient(t, g)
	if p := w.login("admin", adminPassword); p.status != http.StatusSeeOther || p.location != "/dashboard" {
		t.Fatalf("admin login: %d -> %q: %.300s", p.status, p.location, p.body)
	}
	return w.createToken("tests")
}

// ckan calls a CKAN action with a JSON body (POST) and an optional token.
func ckan(t testing.TB, g *harness.Gateway, action, token string, data map[string]any) (int, map[string]any) {
	t.Helper()
	if data == nil {
		data = map[string]any{}
	}
	b, _ := json.Marshal(data)
	h := http.Header{"Content-Type": {"application/json"}}
	if token != "" {
		h.Set("Authorization", token)
	}
	resp, body, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/"+action, h, b)
	if err != nil {
		t.Fatalf("%s: %v", action, err)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("%s: %d, not a JSON object: %s", action, resp.StatusCode, body)
	}
	return resp.StatusCode, out
}

// provision creates a user through CKAN's user_create as the sysadmin.
func provision(t testing.TB, g *harness.Gateway, adminTok, name, password string, active bool, roles ...string) string {
	t.Helper()
	data := map[string]any{"name": name, "email": name + "@example.org", "password": password,
		"first_name": "Test", "last_name": strings.ToUpper(name[:1]) + name[1:], "roles": roles}
	if active {
		data["state"] = "active"
	}
	code, out := ckan(t, g, "user_create", adminTok, data)
	if code != 200 {
		t.Fatalf("user_create %s: %d %v", name, code, out)
	}
	return out["result"].(map[string]any)["id"].(string)
}

// tokenFor makes an API token for a user through api_token_create as the sysadmin.
func tokenFor(t testing.TB, g *harness.Gateway, adminTok, user string, extra map[string]any) string {
	t.Helper()
	data := map[string]any{"user": user, "name": "t-" + user}
	for k, v := range extra {
		data[k] = v
	}
	code, out := ckan(t, g, "api_token_create", adminTok, data)
	if code != 200 {
		t.Fatalf("api_token_create for %s: %d %v", user, code, out)
	}
	return out["result"].(map[string]any)["token"].(string)
}

// check calls the external-authorization endpoint for a model path with
// the given headers and returns status, headers and body.
func check(t *testing.T, g *harness.Gateway, path string, h http.Header) (int, http.Header, string) {
	t.Helper()
	resp, body, err := g.Do(context.Background(), http.MethodPost, "/auth/check"+path, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

// verificationLink waits for the verification link mailed (logged) to email.
func verificationLink(t *testing.T, g *harness.Gateway, email string) string {
	t.Helper()
	re := regexp.MustCompile(`"to":"` + regexp.QuoteMeta(email) + `"[^\n]*?"link":"([^"]+)"`)
	if !g.WaitLog(re, 10*time.Second) {
		t.Fatalf("no verification link for %s in the log", email)
	}
	all := re.FindAllStringSubmatch(g.Logs(), -1)
	return all[len(all)-1][1]
}

// pathOf strips the gateway's base URL from a link.
func pathOf(g *harness.Gateway, link string) string { return strings.TrimPrefix(link, g.URL) }

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
