package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// newWebClientFrom is newWebClient with its connections made from the
// local address ip (127.0.0.0/8 is all loopback on Linux), so that the
// gateway sees another client address.
func newWebClientFrom(t testing.TB, g *harness.Gateway, ip string) *webClient {
	w := newWebClient(t, g)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	jar, _ := cookiejar.New(nil)
	w.c = &http.Client{Jar: jar, Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return w
}

// loginRetry logs name in and returns the answer with its Retry-After.
func (w *webClient) loginRetry(name, password string) (page, int) {
	w.t.Helper()
	return w.loginVia(name, password, "")
}

// loginVia is loginRetry with an X-Forwarded-For header (if not empty).
func (w *webClient) loginVia(name, password, forwardedFor string) (page, int) {
	w.t.Helper()
	form := url.Values{"username": {name}, "password": {password}, "csrf": {w.csrf("/login")}}
	req, _ := http.NewRequest(http.MethodPost, w.g.URL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	resp, err := w.c.Do(req)
	if err != nil {
		w.t.Fatalf("login: %v", err)
	}
	defer resp.Body.Close()
	ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return page{status: resp.StatusCode, location: resp.Header.Get("Location")}, ra
}

// An attacker who guesses an account's password from one address is slowed
// down at that address only: the owner logs in from another address while
// the attacker keeps hammering. Only failures from many addresses together
// reach the account's ceiling, which then holds for every address.
func TestLoginThrottlePerSourceAddress(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_AUTH_LOGIN_MAX_FAILS=3", "TOXGATE_AUTH_LOGIN_ACCOUNT_MAX_FAILS=6"))
	adm := adminToken(t, g)
	provision(t, g, adm, "olga", "olga-password", true)
	provision(t, g, adm, "petr", "petr-password", true)

	attacker := newWebClientFrom(t, g, "127.0.0.1")
	for i := 0; i < 3; i++ {
		if p, _ := attacker.loginRetry("olga", "guess-"+strconv.Itoa(i)); p.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i+1, p.status)
		}
	}
	for _, pw := range []string{"guess-3", "olga-password", "guess-4"} {
		p, ra := attacker.loginRetry("olga", pw)
		if p.status != http.StatusTooManyRequests || ra < 1 || ra > 300 {
			t.Fatalf("attempt after 3 failures from the attacker's address: %d, Retry-After %d", p.status, ra)
		}
	}
	// Without server.trusted_proxies, X-Forwarded-For is the client's own
	// words: a new one each time does not make a new address.
	for i := 0; i < 3; i++ {
		if p, _ := attacker.loginVia("olga", "guess", "198.51.100."+strconv.Itoa(i+1)); p.status != http.StatusTooManyRequests {
			t.Fatalf("attempt with a made-up X-Forwarded-For: %d", p.status)
		}
	}
	owner := newWebClientFrom(t, g, "127.0.0.2")
	if p, _ := owner.loginRetry("olga", "olga-password"); p.status != http.StatusSeeOther || p.location != "/dashboard" {
		t.Fatalf("the owner from another address while the attacker is throttled: %d %q", p.status, p.location)
	}

	// The account's ceiling: 3 failures from each of two addresses.
	for _, ip := range []string{"127.0.0.1", "127.0.0.3"} {
		a := newWebClientFrom(t, g, ip)
		for i := 0; i < 3; i++ {
			if p, _ := a.loginRetry("petr@example.org", "guess"); p.status != http.StatusUnauthorized {
				t.Fatalf("petr guess %d from %s: %d", i+1, ip, p.status)
			}
		}
	}
	p, ra := newWebClientFrom(t, g, "127.0.0.2").loginRetry("petr", "petr-password")
	if p.status != http.StatusTooManyRequests || ra < 1 || ra > 15*60 {
		t.Fatalf("the owner after the account's ceiling: %d, Retry-After %d; want 429 within the window", p.status, ra)
	}
	// Another account from the same addresses is not affected.
	if p, _ := newWebClientFrom(t, g, "127.0.0.1").loginRetry("admin", adminPassword); p.location != "/dashboard" {
		t.Fatalf("admin from the attacker's address: %d %q", p.status, p.location)
	}
}

// Behind a proxy of server.trusted_proxies the client is the address the
// proxy appended to X-Forwarded-For: an attacker and the owner behind the
// same proxy are throttled apart, and what the attacker wrote into the
// header before the proxy appended its entry does not count.
func TestLoginThrottleBehindTrustedProxy(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_AUTH_LOGIN_MAX_FAILS=2", "TOXGATE_SERVER_TRUSTED_PROXIES=127.0.0.5/32"))
	adm := adminToken(t, g)
	provision(t, g, adm, "uma", "uma-password", true)
	proxy := newWebClientFrom(t, g, "127.0.0.5")
	for i := 0; i < 2; i++ {
		if p, _ := proxy.loginVia("uma", "guess", "10.9.9."+strconv.Itoa(i)+", 203.0.113.7"); p.status != http.StatusUnauthorized {
			t.Fatalf("guess %d through the proxy: %d", i+1, p.status)
		}
	}
	if p, ra := proxy.loginVia("uma", "uma-password", "10.9.9.9, 203.0.113.7"); p.status != http.StatusTooManyRequests || ra < 1 {
		t.Fatalf("the attacker's address through the proxy after 2 failures: %d, Retry-After %d", p.status, ra)
	}
	if p, _ := proxy.loginVia("uma", "uma-password", "203.0.113.8"); p.status != http.StatusSeeOther || p.location != "/dashboard" {
		t.Fatalf("the owner through the same proxy: %d %q", p.status, p.location)
	}
}

// The external-authorization check decides on the path a server behind the
// proxy serves: a path with dot segments, encoded slashes or other
// ambiguities is refused (400), as are headers naming different paths; the
// gateway's own router normalizes before it routes, so an encoded detour
// reaches the protected handler and its role check.
func TestExtAuthzRefusesAmbiguousPaths(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	provision(t, g, adm, "rita", "rita-password", true)
	rt := tokenFor(t, g, adm, "rita", nil)

	for _, tc := range []struct {
		path   string
		header http.Header
	}{
		{"", http.Header{"X-Original-Uri": {"/api/../hERG/evaluate"}}},
		{"", http.Header{"X-Forwarded-Uri": {"/api/%2e%2e/notebooks/lab"}}},
		{"", http.Header{"X-Forwarded-Uri": {"/api/%2E%2E/notebooks/lab"}}},
		{"", http.Header{"X-Envoy-Original-Path": {"/api%2f..%2fhERG/evaluate"}}},
		{"", http.Header{"X-Original-Uri": {"/api\\..\\hERG/evaluate"}}},
		{"", http.Header{"X-Original-Uri": {"/notebooks;x/lab"}}},
		{"", http.Header{"X-Original-Uri": {"/api/%252e%252e/hERG"}}},
		{"", http.Header{"X-Original-Uri": {"/api/x"}, "X-Forwarded-Uri": {"/notebooks/lab"}}},
		{"", http.Header{"X-Forwarded-Uri": {"/api/x", "/notebooks/lab"}}},
		{"/api/%2e%2e/notebooks/lab", nil},
		{"/api/.%2E/hERG/evaluate", nil},
	} {
		code, _, body := check(t, g, tc.path, tc.header)
		if code != http.StatusBadRequest || !strings.Contains(body, "bad_path") {
			t.Errorf("check %q %v: %d %s; want 400 bad_path", tc.path, tc.header, code, body)
		}
	}
	for _, tc := range []struct {
		header http.Header
		want   int
	}{
		{http.Header{"X-Forwarded-Uri": {"//notebooks//lab/"}}, http.StatusUnauthorized},
		{http.Header{"X-Forwarded-Uri": {"/%6Eotebooks/lab"}}, http.StatusUnauthorized},
		{http.Header{"X-Original-Uri": {"/hERG/evaluate?next=/api"}}, http.StatusUnauthorized},
		{http.Header{"X-Original-Uri": {"/api/3/action/package_list?x=/../hERG"}}, http.StatusOK},
		{http.Header{"X-Original-Uri": {"/hERG/evaluate"}, "X-Forwarded-Uri": {"/hERG//evaluate"}}, http.StatusUnauthorized},
	} {
		if code, _, body := check(t, g, "", tc.header); code != tc.want {
			t.Errorf("check %v: %d %s; want %d", tc.header, code, body, tc.want)
		}
	}
	h := bearer(rt)
	h.Set("X-Forwarded-Uri", "/%6Eotebooks/lab")
	if code, _, body := check(t, g, "", h); code != http.StatusForbidden {
		t.Errorf("notebooks by encoded path with a token without the role: %d %s", code, body)
	}

	// The gateway's own routes: fasthttp decodes and removes dot segments
	// before routing, so a detour through a public prefix lands on the
	// protected route, whose handler checks the role.
	for _, p := range []string{"/api/%2e%2e/admin/plugins", "/static/..%2f..%2fadmin/plugins", "/dataset/%2E%2E/admin/plugins", "/api/../admin/plugins"} {
		resp, body, err := g.Do(context.Background(), http.MethodGet, p, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s anonymously: %d %.200s; want 401", p, resp.StatusCode, body)
		}
		resp, body, _ = g.Do(context.Background(), http.MethodGet, p, bearer(rt), nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s as a user: %d %.200s; want 403", p, resp.StatusCode, body)
		}
	}
}

// Descriptions cannot put a script link on a dataset page, and a login
// never redirects to another site, whatever its next parameter.
func TestWebPagesKeepLinksSafe(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", adm, map[string]any{"name": "sec-lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	notes := "<javascript:alert(6)> [h](&#106;avascript:alert(9)) [k](<javascript&colon;alert(12)>) " +
		"![i](javascript:alert(1)) [ok](https://example.org/ok)"
	if code, out := ckan(t, g, "package_create", adm, map[string]any{"name": "hostile-notes", "owner_org": "sec-lab", "notes": notes}); code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}
	resp, body, err := g.Do(context.Background(), http.MethodGet, "/dataset/hostile-notes", http.Header{"Accept": {"text/html"}}, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("dataset page: %v %v", resp, err)
	}
	page := string(body)
	if regexp.MustCompile(`(?i)(href|src)="\s*(javascript|&#)`).MatchString(page) || !strings.Contains(page, `href="https://example.org/ok"`) {
		t.Fatalf("dataset page links:\n%s", page)
	}

	var w *webClient
	for next, want := range map[string]string{
		"/\t/evil.example": "/dashboard", "//evil.example": "/dashboard", "/\\evil.example": "/dashboard",
		"https://evil.example/": "/dashboard", "/%2F/evil.example": "/dashboard", "/dataset?q=x": "/dataset?q=x",
	} {
		w = newWebClient(t, g)
		p := w.submit("/login", "/login", url.Values{"username": {"admin"}, "password": {adminPassword}, "next": {next}})
		if p.status != http.StatusSeeOther || p.location != want {
			t.Errorf("login with next=%q: %d %q, want %q", next, p.status, p.location, want)
		}
	}
	for raw, want := range map[string]string{"/%09/evil.example": "/dashboard", "%2F%2Fevil.example": "/dashboard", "/models": "/models"} {
		if p := w.get("/login?next=" + raw); p.status != http.StatusSeeOther || p.location != want {
			t.Errorf("GET /login?next=%s logged in: %d %q, want %q", raw, p.status, p.location, want)
		}
	}
}

// A new password set through user_patch or user_update ends the user's web
// sessions (as the password page ends the others); API tokens keep working.
func TestPasswordChangeByAPIEndsSessions(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	provision(t, g, adm, "sara", "sara-password", true, "models")
	st := tokenFor(t, g, adm, "sara", nil)

	browser := newWebClient(t, g)
	if p := browser.login("sara", "sara-password"); p.location != "/dashboard" {
		t.Fatalf("sara login: %d %q", p.status, p.location)
	}
	if p := browser.get("/dashboard"); p.status != 200 {
		t.Fatalf("dashboard: %d", p.status)
	}
	if code, out := ckan(t, g, "user_patch", st, map[string]any{"id": "sara", "password": "sara-password-2", "old_password": "sara-password"}); code != 200 {
		t.Fatalf("user_patch password: %d %v", code, out)
	}
	if p := browser.get("/dashboard"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/login") {
		t.Fatalf("the session after a password change by API: %d %q, want a redirect to /login", p.status, p.location)
	}
	if code, _, body := check(t, g, "/hERG/evaluate", bearer(st)); code != 200 {
		t.Fatalf("sara's token after the password change: %d %s", code, body)
	}
	if p := browser.login("sara", "sara-password-2"); p.location != "/dashboard" {
		t.Fatalf("login with the new password: %d %q", p.status, p.location)
	}

	// A sysadmin's user_update with a new password ends them too; an
	// update without one leaves them.
	if code, out := ckan(t, g, "user_patch", adm, map[string]any{"id": "sara", "about": "Toxicologist."}); code != 200 {
		t.Fatalf("user_patch about: %d %v", code, out)
	}
	if p := browser.get("/dashboard"); p.status != 200 {
		t.Fatalf("the session after a profile change: %d %q", p.status, p.location)
	}
	if code, out := ckan(t, g, "user_update", adm, map[string]any{"id": "sara", "email": "sara@example.org", "password": "sara-password-3"}); code != 200 {
		t.Fatalf("user_update password by a sysadmin: %d %v", code, out)
	}
	if p := browser.get("/dashboard"); p.status != http.StatusSeeOther {
		t.Fatalf("the session after a sysadmin set the password: %d", p.status)
	}
}

// Links in e-mails, CKAN's answers and stored upload URLs use the address
// the gateway listens on (server.public_url being empty), never the Host
// header a client sends; a gateway listening on every interface does not
// start without server.public_url.
func TestSiteURLNeverFromHostHeader(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	provision(t, g, adm, "tess", "tess-password", false)
	if code, out := ckan(t, g, "organization_create", adm, map[string]any{"name": "host-lab"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	if code, out := ckan(t, g, "package_create", adm, map[string]any{"name": "host-ds", "owner_org": "host-lab"}); code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}

	evil := func(req *http.Request) *http.Response {
		t.Helper()
		req.Host = "evil.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// CKAN's help link, from the catalog plugin and from the core.
	for _, action := range []string{"package_list", "user_list"} {
		req, _ := http.NewRequest(http.MethodGet, g.URL+"/api/3/action/"+action, nil)
		req.Header.Set("Authorization", adm)
		resp := evil(req)
		var env struct{ Help string }
		decodeJSON(t, resp, &env)
		if !strings.HasPrefix(env.Help, g.URL+"/") {
			t.Errorf("%s help with Host: evil.example: %q", action, env.Help)
		}
	}
	// A stored upload URL.
	ct, body := multipartBody(t, map[string]string{"package_id": "host-ds", "name": "t"}, "upload", "t.csv", []byte("a,b\n1,2\n"))
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/3/action/resource_create", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", adm)
	var res struct {
		Result struct{ URL string } `json:"result"`
	}
	decodeJSON(t, evil(req), &res)
	if !strings.HasPrefix(res.Result.URL, g.URL+"/dataset/") {
		t.Errorf("upload URL with Host: evil.example: %q", res.Result.URL)
	}
	// The verification link mailed at a first login.
	w := newWebClient(t, g)
	form := url.Values{"username": {"tess"}, "password": {"tess-password"}, "csrf": {w.csrf("/login")}}
	req, _ = http.NewRequest(http.MethodPost, g.URL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	base, _ := url.Parse(g.URL)
	for _, c := range w.c.Jar.Cookies(base) { // the jar would look them up by the Host header
		req.AddCookie(c)
	}
	req.Host = "evil.example"
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/welcome" {
		t.Fatalf("first login with Host: evil.example: %d %q %s", resp.StatusCode, resp.Header.Get("Location"), b)
	}
	if link := verificationLink(t, g, "tess@example.org"); !strings.HasPrefix(link, g.URL+"/verify?token=") {
		t.Errorf("verification link with Host: evil.example: %q", link)
	}

	_, err = harness.Launch(harness.Build(t), harness.WithEnv("TOXGATE_SERVER_ADDR=0.0.0.0:0"), harness.WithoutReadyWait())
	if err == nil || !strings.Contains(err.Error(), "server.public_url") {
		t.Fatalf("start on every interface without server.public_url: %v", err)
	}
}

// decodeJSON reads resp's body as JSON into v.
func decodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: not JSON: %v", resp.Request.URL, err)
	}
}
