package oidcprovider_test

import (
	"context"
	"encoding/base64"
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

// browser is a cookie-keeping HTTP client that does not follow redirects.
type browser struct {
	t testing.TB
	c *http.Client
}

func newBrowser(t testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type reply struct {
	status   int
	body     string
	location string
}

func (b *browser) do(method, u string, form url.Values) reply {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, u, err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, body: string(raw), location: resp.Header.Get("Location")}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// login signs in through the real login form of g, with next.
func (b *browser) login(g *harness.Gateway, name, password, next string) reply {
	b.t.Helper()
	p := b.do(http.MethodGet, g.URL+"/login?next="+url.QueryEscape(next), nil)
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		b.t.Fatalf("no CSRF token on /login (%d): %.300s", p.status, p.body)
	}
	return b.do(http.MethodPost, g.URL+"/login", url.Values{"csrf": {m[1]}, "username": {name}, "password": {password}, "next": {next}})
}

var newTokenRE = regexp.MustCompile(`id="new-token">(tg_[0-9A-Za-z]+)<`)

// adminToken logs the sysadmin in and makes an API token on /tokens.
func adminToken(t testing.TB, g *harness.Gateway) string {
	t.Helper()
	b := newBrowser(t)
	if p := b.login(g, "admin", adminPassword, ""); p.status != http.StatusSeeOther {
		t.Fatalf("admin login: %d %.300s", p.status, p.body)
	}
	p := b.do(http.MethodGet, g.URL+"/tokens", nil)
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token on /tokens: %d", p.status)
	}
	p = b.do(http.MethodPost, g.URL+"/tokens", url.Values{"csrf": {m[1]}, "name": {"tests"}, "expires_days": {"30"}})
	tm := newTokenRE.FindStringSubmatch(p.body)
	if tm == nil {
		t.Fatalf("create token: %d %.300s", p.status, p.body)
	}
	return tm[1]
}

// call sends a JSON request with a bearer token and decodes the JSON answer.
func call(t testing.TB, g *harness.Gateway, method, path, token string, in any) (int, map[string]any) {
	t.Helper()
	var body []byte
	if in != nil {
		body, _ = json.Marshal(in)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	resp, raw, err := g.Do(context.Background(), method, path, h, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	if out == nil {
		out = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, out
}

// provision creates an active user with roles through CKAN's user_create.
func provision(t testing.TB, g *harness.Gateway, adminTok, name, password string, roles ...string) {
	t.Helper()
	code, out := call(t, g, http.MethodPost, "/api/3/action/user_create", adminTok, map[string]any{
		"name": name, "email": name + "@example.org", "password": password, "first_name": "Test",
		"last_name": strings.ToUpper(name[:1]) + name[1:], "roles": roles, "state": "active"})
	if code != 200 {
		t.Fatalf("user_create %s: %d %v", name, code, out)
	}
}

// registerClient registers a client through the admin API and returns its secret.
func registerClient(t testing.TB, g *harness.Gateway, adminTok string, in map[string]any) string {
	t.Helper()
	code, out := call(t, g, http.MethodPost, "/admin/api/clients", adminTok, in)
	if code != http.StatusCreated {
		t.Fatalf("register client: %d %v", code, out)
	}
	s, _ := out["client_secret"].(string)
	return s
}

// storeURI is the embedded store's URI from a gateway's log (to start a
// second gateway on the same store).
func storeURI(t testing.TB, g *harness.Gateway) string {
	t.Helper()
	m := regexp.MustCompile(`"msg":"embedded store started","uri":"([^"]+)"`).FindStringSubmatch(g.Logs())
	if m == nil {
		t.Fatalf("no store URI in the log:\n%s", g.Logs())
	}
	return m[1]
}

// kidOf is the key id in a JWT's header.
func kidOf(t testing.TB, jwt string) string {
	t.Helper()
	h, _, _ := strings.Cut(jwt, ".")
	raw, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		t.Fatalf("JWT header: %v", err)
	}
	var hdr struct {
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(raw, &hdr); err != nil {
		t.Fatalf("JWT header: %v", err)
	}
	return hdr.Kid
}
