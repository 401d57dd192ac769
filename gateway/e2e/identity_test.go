package e2e

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// The seed's first login: a provisioned account is pending until the user
// has verified the e-mail address and replaced the initial password; until
// then it reaches nothing else and none of its tokens work.
func TestFirstLoginVerificationAndPasswordChange(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	provision(t, g, adm, "alice", "initial-pass-1", false, "models")
	pendingTok := tokenFor(t, g, adm, "alice", nil)

	w := newWebClient(t, g)
	if p := w.login("alice", "wrong-password"); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "Wrong user name or password") {
		t.Fatalf("wrong password: %d %.200s", p.status, p.body)
	}
	p := w.login("alice", "initial-pass-1")
	if p.status != http.StatusSeeOther || p.location != "/welcome" {
		t.Fatalf("first login: %d -> %q", p.status, p.location)
	}
	// Nothing else is reachable, and the token does not work.
	for _, path := range []string{"/dashboard", "/tokens"} {
		if p := w.get(path); p.status != http.StatusSeeOther || p.location != "/welcome" {
			t.Fatalf("pending user GET %s: %d -> %q", path, p.status, p.location)
		}
	}
	if code, _, _ := check(t, g, "/hERG/evaluate", bearer(pendingTok)); code != http.StatusUnauthorized {
		t.Fatalf("pending user's token: %d, want 401", code)
	}
	if p := w.get("/welcome"); !strings.Contains(p.body, "alice@example.org") {
		t.Fatalf("welcome page does not name the address: %.300s", p.body)
	}

	// The link (logged, no SMTP configured) verifies the address once.
	link := pathOf(g, verificationLink(t, g, "alice@example.org"))
	if p := w.get(link); p.status != 200 || !strings.Contains(p.body, "Confirm my e-mail address") {
		t.Fatalf("verification page: %d %.300s", p.status, p.body)
	}
	tok := strings.TrimPrefix(link[strings.Index(link, "?"):], "?token=")
	if p := w.submit(link, "/verify", url.Values{"token": {tok}}); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/welcome") {
		t.Fatalf("verify: %d -> %q", p.status, p.location)
	}
	if p := w.get(link); p.status != http.StatusGone {
		t.Fatalf("used link again: %d, want 410", p.status)
	}
	// Still pending: the password is the initial one.
	if p := w.get("/dashboard"); p.location != "/welcome" {
		t.Fatalf("dashboard before the password change: %d -> %q", p.status, p.location)
	}
	if code, _, _ := check(t, g, "/hERG/evaluate", bearer(pendingTok)); code != http.StatusUnauthorized {
		t.Fatalf("token before the password change: %d, want 401", code)
	}
	form := url.Values{"current_password": {"nope-nope"}, "new_password": {"brand-new-pass"}, "confirm": {"brand-new-pass"}}
	if p := w.submit("/password", "/password", form); p.status != http.StatusBadRequest || !strings.Contains(p.body, "incorrect password") {
		t.Fatalf("wrong current password: %d %.300s", p.status, p.body)
	}
	form.Set("current_password", "initial-pass-1")
	if p := w.submit("/password", "/password", form); p.status != http.StatusSeeOther {
		t.Fatalf("password change: %d %.300s", p.status, p.body)
	}
	if p := w.get("/dashboard"); p.status != 200 || !strings.Contains(p.body, "alice") || !strings.Contains(p.body, "models") {
		t.Fatalf("dashboard after first login: %d %.500s", p.status, p.body)
	}
	if code, h, _ := check(t, g, "/hERG/evaluate", bearer(pendingTok)); code != 200 || h.Get("X-Auth-User") != "alice" {
		t.Fatalf("token after the first login: %d %v", code, h)
	}
	// The old password is gone.
	if p := newWebClient(t, g).login("alice", "initial-pass-1"); p.status != http.StatusUnauthorized {
		t.Fatalf("initial password after the change: %d", p.status)
	}
}

// The first sysadmin: created once with a generated password printed in the
// banner, pending like every provisioned account.
func TestFirstSysadminPrintedOnce(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_AUTH_ADMIN_PASSWORD="))
	re := regexp.MustCompile(`as "admin" with the initial password (\S+)`)
	waitFor(t, 10*time.Second, "banner with the initial password", func() bool { return re.MatchString(g.Stdout()) })
	m := re.FindStringSubmatch(g.Stdout())
	w := newWebClient(t, g)
	if p := w.login("admin", m[1]); p.status != http.StatusSeeOther || p.location != "/welcome" {
		t.Fatalf("admin first login: %d -> %q", p.status, p.location)
	}
	if p := w.get("/admin/users"); p.location != "/welcome" {
		t.Fatalf("pending admin reached the admin page: %d %q", p.status, p.location)
	}
	verificationLink(t, g, "admin@localhost")
	g.Restart()
	if strings.Contains(g.Stdout(), "initial password") || strings.Contains(g.Logs(), `"msg":"user created"`) {
		t.Fatalf("a sysadmin was created again after restart:\n%s\n%s", g.Stdout(), g.Logs())
	}
}

// Roles decide model access; the external-authorization check applies the
// same rule as the model endpoints.
func TestRolesTokensAndExtAuthz(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	provision(t, g, adm, "modeler", "modeler-pass", true, "models")
	provision(t, g, adm, "reader", "reader-pass", true)
	tm := tokenFor(t, g, adm, "modeler", nil)
	tr := tokenFor(t, g, adm, "reader", nil)

	code, h, _ := check(t, g, "/hERG/evaluate", nil)
	if code != 401 || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("no token: %d %q", code, h.Get("WWW-Authenticate"))
	}
	if code, _, body := check(t, g, "/hERG/evaluate", bearer(tr)); code != 403 || !strings.Contains(body, "models") {
		t.Fatalf("user without models: %d %s", code, body)
	}
	code, h, _ = check(t, g, "/hERG/evaluate", bearer(tm))
	if code != 200 || h.Get("X-Auth-User") != "modeler" || h.Get("X-Auth-Roles") != "models" || h.Get("X-Auth-User-Id") == "" {
		t.Fatalf("modeler: %d %v", code, h)
	}
	// Catalog reads need nothing at the mesh.
	if code, _, _ := check(t, g, "/api/3/action/package_list", nil); code != 200 {
		t.Fatalf("catalog read: %d", code)
	}
	// The three header forms.
	for name, hd := range map[string]http.Header{
		"Bearer":         bearer(tm),
		"bare":           {"Authorization": {tm}},
		"X-CKAN-API-Key": {"X-CKAN-API-Key": {tm}},
	} {
		if code, h, _ := check(t, g, "/hERG/evaluate", hd); code != 200 || h.Get("X-Auth-User") != "modeler" {
			t.Errorf("%s header: %d", name, code)
		}
	}
	// Unknown, foreign (well formed, never issued here), malformed, revoked and
	// expired tokens all get the same answer.
	expiring := tokenFor(t, g, adm, "modeler", map[string]any{"expires_in": 1})
	revoked := tokenFor(t, g, adm, "modeler", nil)
	if code, out := ckan(t, g, "api_token_revoke", revoked, map[string]any{"token": revoked}); code != 200 || out["result"] != nil {
		t.Fatalf("revoke own token: %d %v", code, out)
	}
	waitFor(t, 10*time.Second, "token with expires_in=1 expires", func() bool {
		c, _, _ := check(t, g, "/hERG/evaluate", bearer(expiring))
		return c == 401
	})
	foreign := foreignToken(t)
	bodies := map[string]string{}
	for name, tok := range map[string]string{"unknown": "tg_nothing", "foreign": foreign, "revoked": revoked, "expired": expiring} {
		code, h, body := check(t, g, "/hERG/evaluate", bearer(tok))
		if code != 401 || !strings.Contains(h.Get("WWW-Authenticate"), "invalid_token") {
			t.Errorf("%s token: %d %q", name, code, h.Get("WWW-Authenticate"))
		}
		bodies[name] = regexp.MustCompile(`"request_id":"[^"]*"`).ReplaceAllString(body, "")
	}
	for name, b := range bodies {
		if b != bodies["unknown"] {
			t.Errorf("%s token answer differs from unknown token's:\n%s\n%s", name, b, bodies["unknown"])
		}
	}
	// CKAN: a bad token leaves the request anonymous (no 401): with
	// catalog.auth.public_user_details off, anonymous user_show is denied
	// as anonymous, and a public read answers as to anyone.
	if code, out := ckan(t, g, "user_show", "tg_nothing", map[string]any{"id": "modeler"}); code != 403 || out["error"].(map[string]any)["__type"] != "Authorization Error" {
		t.Fatalf("user_show with a bad token: %d %v", code, out)
	}
	if code, out := ckan(t, g, "package_list", "tg_nothing", nil); code != 200 {
		t.Fatalf("package_list with a bad token: %d %v", code, out)
	}
}

// foreignToken is a well-formed token that this gateway never issued.
func foreignToken(t *testing.T) string {
	g2 := harness.Start(t)
	return adminToken(t, g2)
}

// A revoked token fails on every gateway sharing the store within the cache
// lifetime; a disabled user's token, session and login fail.
func TestRevocationAcrossGatewaysAndDeletedUser(t *testing.T) {
	a := harness.Start(t, harness.WithEnv("TOXGATE_AUTH_TOKEN_CACHE_TTL=1s"))
	m := regexp.MustCompile(`"msg":"embedded store started","uri":"([^"]+)"`).FindStringSubmatch(a.Logs())
	if m == nil {
		t.Fatalf("no store URI in the log:\n%s", a.Logs())
	}
	b := harness.Start(t, harness.WithEnv("TOXGATE_MONGODB_URI="+m[1], "TOXGATE_AUTH_TOKEN_CACHE_TTL=1s"))
	adm := adminToken(t, a)
	provision(t, a, adm, "bob", "bob-password", true, "models")
	tok := tokenFor(t, a, adm, "bob", nil)
	for _, g := range []*harness.Gateway{a, b} {
		if code, _, _ := check(t, g, "/hERG/evaluate", bearer(tok)); code != 200 {
			t.Fatalf("token before revocation on %s: %d", g.URL, code)
		}
	}
	code, out := ckan(t, a, "api_token_list", adm, map[string]any{"user_id": "bob"})
	items, _ := out["result"].([]any)
	if code != 200 || len(items) != 1 {
		t.Fatalf("api_token_list: %d %v", code, out)
	}
	item := items[0].(map[string]any)
	for _, k := range []string{"id", "name", "user_id", "created_at", "last_access"} {
		if _, ok := item[k]; !ok {
			t.Errorf("api_token_list item lacks %q: %v", k, item)
		}
	}
	if code, _ := ckan(t, a, "api_token_revoke", adm, map[string]any{"jti": item["id"]}); code != 200 {
		t.Fatalf("revoke by jti: %d", code)
	}
	if code, _, _ := check(t, a, "/hERG/evaluate", bearer(tok)); code != 401 {
		t.Fatalf("revoked token on the revoking gateway: %d, want 401 at once", code)
	}
	waitFor(t, 5*time.Second, "revoked token refused by the other gateway", func() bool {
		c, _, _ := check(t, b, "/hERG/evaluate", bearer(tok))
		return c == 401
	})

	// Deleted (disabled) user.
	tok2 := tokenFor(t, a, adm, "bob", nil)
	w := newWebClient(t, b)
	if p := w.login("bob", "bob-password"); p.location != "/dashboard" {
		t.Fatalf("bob login: %d %q", p.status, p.location)
	}
	if code, _ := ckan(t, a, "user_delete", adm, map[string]any{"id": "bob"}); code != 200 {
		t.Fatalf("user_delete: %d", code)
	}
	if code, _, _ := check(t, a, "/hERG/evaluate", bearer(tok2)); code != 401 {
		t.Fatalf("deleted user's token: %d", code)
	}
	waitFor(t, 5*time.Second, "deleted user's token refused by the other gateway", func() bool {
		c, _, _ := check(t, b, "/hERG/evaluate", bearer(tok2))
		return c == 401
	})
	if p := w.get("/dashboard"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/login") {
		t.Fatalf("deleted user's session: %d %q", p.status, p.location)
	}
	if p := newWebClient(t, a).login("bob", "bob-password"); p.status != http.StatusUnauthorized {
		t.Fatalf("deleted user's login: %d", p.status)
	}
}

// Forms need their CSRF token; repeated failures throttle logins; sessions expire.
func TestCSRFThrottlingAndSessionExpiry(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_AUTH_LOGIN_MAX_FAILS=3", "TOXGATE_AUTH_SESSION_TTL=2s"))
	w := newWebClient(t, g)
	if p := w.post("/login", url.Values{"username": {"admin"}, "password": {adminPassword}}); p.status != http.StatusForbidden {
		t.Fatalf("login without CSRF token: %d", p.status)
	}
	if p := w.post("/login", url.Values{"username": {"admin"}, "password": {adminPassword}, "csrf": {strings.Repeat("0", 64)}}); p.status != http.StatusForbidden {
		t.Fatalf("login with a wrong CSRF token: %d", p.status)
	}
	if p := w.login("admin", adminPassword); p.location != "/dashboard" {
		t.Fatalf("login: %d %q", p.status, p.location)
	}
	if p := w.post("/tokens", url.Values{"name": {"x"}}); p.status != http.StatusForbidden {
		t.Fatalf("token form without CSRF token: %d", p.status)
	}
	if p := w.post("/admin/users", url.Values{"username": {"mallory"}, "email": {"m@example.org"}, "password": {"12345678"}, "csrf": {"bad"}}); p.status != http.StatusForbidden {
		t.Fatalf("admin form with a bad CSRF token: %d", p.status)
	}
	waitFor(t, 10*time.Second, "session expires", func() bool {
		p := w.get("/dashboard")
		return p.status == http.StatusSeeOther && strings.HasPrefix(p.location, "/login")
	})

	v := newWebClient(t, g)
	for i := 0; i < 3; i++ {
		if p := v.login("admin", "wrong"); p.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, p.status)
		}
	}
	p := v.login("admin", adminPassword)
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Too many failed logins") {
		t.Fatalf("right password after 3 failures: %d %.200s", p.status, p.body)
	}
}

// CKAN's user actions on the identity store: shapes, privacy and rules.
func TestCKANUserActions(t *testing.T) {
	// anonymous user_list below (catalog.auth.public_user_details)
	g := harness.Start(t, harness.WithEnv("TOXGATE_CATALOG_AUTH_PUBLIC_USER_DETAILS=true"))
	adm := adminToken(t, g)
	provision(t, g, adm, "carol", "carol-password", true, "models")
	ct := tokenFor(t, g, adm, "carol", nil)

	code, out := ckan(t, g, "user_list", "", nil)
	users, _ := out["result"].([]any)
	if code != 200 || len(users) < 2 {
		t.Fatalf("anonymous user_list: %d %v", code, out)
	}
	for _, u := range users {
		m := u.(map[string]any)
		if _, ok := m["email"]; ok {
			t.Errorf("anonymous user_list shows an e-mail: %v", m)
		}
		if _, ok := m["password_hash"]; ok {
			t.Errorf("user_list shows a password hash: %v", m)
		}
	}
	code, out = ckan(t, g, "user_show", ct, map[string]any{"id": "carol"})
	me := out["result"].(map[string]any)
	if code != 200 || me["email"] != "carol@example.org" || me["display_name"] != "Test Carol" || me["state"] != "active" {
		t.Fatalf("user_show of self: %d %v", code, me)
	}
	if _, ok := me["password"]; ok {
		t.Fatal("user_show returned the password")
	}
	code, out = ckan(t, g, "user_show", ct, map[string]any{"id": "admin"})
	if code != 200 || out["result"].(map[string]any)["email"] != nil {
		t.Fatalf("user_show of another user by a non-sysadmin shows the e-mail: %v", out)
	}
	code, out = ckan(t, g, "user_create", ct, map[string]any{"name": "eve", "email": "eve@example.org", "password": "12345678"})
	if code != 403 || out["error"].(map[string]any)["message"] != "Access denied: User carol not authorized to create users via the API" {
		t.Fatalf("user_create by a non-sysadmin: %d %v", code, out)
	}
	code, out = ckan(t, g, "user_create", adm, map[string]any{"name": "carol", "email": "other@example.org", "password": "1234"})
	e := out["error"].(map[string]any)
	if code != 409 || e["__type"] != "Validation Error" || e["name"].([]any)[0] != "That login name is not available." ||
		e["password"].([]any)[0] != "Your password must be 8 characters or longer" {
		t.Fatalf("user_create duplicate/short: %d %v", code, out)
	}
	code, out = ckan(t, g, "api_token_create", "", map[string]any{"user": "carol", "name": "x"})
	if code != 403 || !strings.Contains(out["error"].(map[string]any)["message"].(string), "requires an authenticated user") {
		t.Fatalf("anonymous api_token_create: %d %v", code, out)
	}
	code, out = ckan(t, g, "api_token_create", ct, map[string]any{"user": "admin", "name": "steal"})
	if code != 403 {
		t.Fatalf("api_token_create for another user: %d %v", code, out)
	}
	resp, body, err := g.Do(context.Background(), http.MethodGet, "/api/3/action/api_token_create?user=carol&name=x", http.Header{"Authorization": {ct}}, nil)
	if err != nil || resp.StatusCode != 400 || !strings.Contains(string(body), "Please use POST method") {
		t.Fatalf("GET api_token_create: %v %d %s", err, resp.StatusCode, body)
	}
}

// Failed logins count per account: the user name and the e-mail address
// share one counter, so locking one spelling locks the other.
func TestLoginLockoutPerAccount(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_AUTH_LOGIN_MAX_FAILS=3"))
	adm := adminToken(t, g)
	provision(t, g, adm, "dora", "dora-password", true)
	provision(t, g, adm, "emil", "emil-password", true)

	// Three failures by name lock the e-mail address too.
	w := newWebClient(t, g)
	for i := 0; i < 3; i++ {
		if p := w.login("dora", "wrong"); p.status != http.StatusUnauthorized {
			t.Fatalf("dora failure %d: %d", i+1, p.status)
		}
	}
	for _, spelling := range []string{"dora", "dora@example.org", "DORA@example.org"} {
		if p := newWebClient(t, g).login(spelling, "dora-password"); p.status != http.StatusTooManyRequests {
			t.Errorf("right password as %q after 3 failures by name: %d %q, want 429", spelling, p.status, p.location)
		}
	}

	// Failures under both spellings add up.
	if p := newWebClient(t, g).login("emil", "wrong"); p.status != http.StatusUnauthorized {
		t.Fatalf("emil failure 1: %d", p.status)
	}
	for i := 0; i < 2; i++ {
		if p := newWebClient(t, g).login("emil@example.org", "wrong"); p.status != http.StatusUnauthorized {
			t.Fatalf("emil failure %d by e-mail: %d", i+2, p.status)
		}
	}
	if p := newWebClient(t, g).login("emil", "emil-password"); p.status != http.StatusTooManyRequests {
		t.Fatalf("right password by name after 1+2 failures: %d %q, want 429", p.status, p.location)
	}
	// Another account is not affected.
	if p := newWebClient(t, g).login("admin", adminPassword); p.location != "/dashboard" {
		t.Fatalf("admin login: %d %q", p.status, p.location)
	}
}
