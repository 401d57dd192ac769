package oidcprovider_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// runCLI runs `toxgate client ...` of the built binary.
func runCLI(t *testing.T, g *harness.Gateway, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(harness.Build(t).Gateway, append([]string{"client"}, args...)...)
	cmd.Env = g.Env
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run toxgate client: %v", err)
	}
	return string(out), code
}

// `toxgate client` registers, lists and deletes clients through the admin
// API; bad registrations are refused with the reason.
func TestClientCLI(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	base := []string{"--url", g.URL, "--token", adm}
	out, code := runCLI(t, g, append([]string{"create"}, append(base, "--name", "hub", "--redirect-uri", hubRedirect, "--role", "notebooks")...)...)
	if code != 0 || !strings.Contains(out, "client_secret: ") || !strings.Contains(out, g.URL+"/oidc") {
		t.Fatalf("client create: %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "hub", "--redirect-uri", hubRedirect}, "registered already"},
		{[]string{"--name", "Bad Name", "--redirect-uri", hubRedirect}, "name:"},
		{[]string{"--name", "x2"}, "redirect URI is required"},
		{[]string{"--name", "x3", "--redirect-uri", "https://a.example/cb#frag"}, "fragment"},
		{[]string{"--name", "x4", "--redirect-uri", "https://a.example/*"}, "wildcards"},
		{[]string{"--name", "x5", "--redirect-uri", "https://a.example/cb", "--role", "nosuchrole"}, "unknown role"},
		{[]string{"--name", "x6", "--redirect-uri", "javascript:alert(1)"}, "http or https"},
	} {
		out, code := runCLI(t, g, append([]string{"create"}, append(base, c.args...)...)...)
		if code != 1 || !strings.Contains(out, c.want) {
			t.Errorf("client create %v: %d, want 1 and %q:\n%s", c.args, code, c.want, out)
		}
	}
	out, code = runCLI(t, g, append([]string{"create"}, append(base, "--name", "cli", "--public", "--redirect-uri", "http://127.0.0.1/cb")...)...)
	if code != 0 || strings.Contains(out, "client_secret") || !strings.Contains(out, "PKCE") {
		t.Fatalf("public client create: %d\n%s", code, out)
	}
	out, code = runCLI(t, g, append([]string{"list"}, base...)...)
	if code != 0 || !strings.Contains(out, "hub") || !strings.Contains(out, "notebooks") || !strings.Contains(out, "public") {
		t.Fatalf("client list: %d\n%s", code, out)
	}
	if out, code := runCLI(t, g, append([]string{"delete"}, append(base, "cli")...)...); code != 0 {
		t.Fatalf("client delete: %d\n%s", code, out)
	}
	if out, code := runCLI(t, g, append([]string{"delete"}, append(base, "cli")...)...); code != 1 || !strings.Contains(out, "no such client") {
		t.Fatalf("client delete twice: %d\n%s", code, out)
	}
	if out, code := runCLI(t, g, "list", "--url", g.URL, "--token", "tg_wrong"); code != 1 || !strings.Contains(out, "401") {
		t.Fatalf("client list with a bad token: %d\n%s", code, out)
	}
}

// Bad input at every endpoint gets a clear OAuth2 error with a 4xx status,
// never a 5xx; oversized requests are refused before they are parsed.
func TestBadInputNever5xx(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_OIDC_PROVIDER_MAX_REQUEST_BYTES=4096"))
	adm := adminToken(t, g)
	secret := registerClient(t, g, adm, map[string]any{"name": "hub", "redirect_uris": []string{hubRedirect}})
	registerClient(t, g, adm, map[string]any{"name": "cli", "public": true, "redirect_uris": []string{"http://127.0.0.1/cb"}})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("hub:"+secret))
	wrong := "Basic " + base64.StdEncoding.EncodeToString([]byte("hub:wrong"))
	authz := func(extra url.Values) string {
		q := url.Values{"client_id": {"hub"}, "redirect_uri": {hubRedirect}, "response_type": {"code"}, "scope": {"openid"}}
		for k, v := range extra {
			q[k] = v
		}
		return "/oidc/authorize?" + q.Encode()
	}
	fakeJWT := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"nope"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+g.URL+`/oidc","sub":"x","exp":9999999999}`)) + ".c2ln"
	cases := []struct {
		name, method, path, auth string
		form                     url.Values
		want                     int    // 0: any 4xx, or a redirect to the client with an error
		body                     string // substring of the answer or of its Location
	}{
		{"authorize without parameters", "GET", "/oidc/authorize", "", nil, 0, ""},
		{"authorize of an unknown client", "GET", authz(url.Values{"client_id": {"nope"}}), "", nil, 0, ""},
		{"authorize to an unregistered redirect", "GET", authz(url.Values{"redirect_uri": {"https://evil.example/cb"}}), "", nil, 0, ""},
		{"authorize with a long state", "GET", authz(url.Values{"state": {strings.Repeat("s", 3000)}}), "", nil, 0, "invalid_request"},
		{"authorize with many scopes", "GET", authz(url.Values{"scope": {"openid" + strings.Repeat(" x", 30)}}), "", nil, 0, ""},
		{"authorize of a public client without PKCE", "GET", "/oidc/authorize?" + url.Values{"client_id": {"cli"}, "redirect_uri": {"http://127.0.0.1/cb"},
			"response_type": {"code"}, "scope": {"openid"}}.Encode(), "", nil, 0, ""},
		{"authorize with an implicit response type", "GET", authz(url.Values{"response_type": {"token"}}), "", nil, 0, ""},
		{"oversized query", "GET", "/oidc/authorize?x=" + strings.Repeat("a", 5000), "", nil, 400, "invalid_request"},
		{"oversized form", "POST", "/oidc/oauth/token", basic, url.Values{"x": {strings.Repeat("a", 5000)}}, 400, "invalid_request"},
		{"token without grant", "POST", "/oidc/oauth/token", basic, url.Values{}, 0, "error"},
		{"token with a made-up code", "POST", "/oidc/oauth/token", basic, url.Values{"grant_type": {"authorization_code"}, "code": {"garbage"}, "redirect_uri": {hubRedirect}}, 0, "invalid_grant"},
		{"token with a wrong secret", "POST", "/oidc/oauth/token", wrong, url.Values{"grant_type": {"authorization_code"}, "code": {"garbage"}, "redirect_uri": {hubRedirect}}, 0, "invalid"},
		{"token with a made-up refresh token", "POST", "/oidc/oauth/token", basic, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"tgr_garbage"}}, 0, "invalid_grant"},
		{"token with an unsupported grant", "POST", "/oidc/oauth/token", basic, url.Values{"grant_type": {"password"}, "username": {"admin"}, "password": {"x"}}, 0, "unsupported_grant_type"},
		{"token with a JWT assertion", "POST", "/oidc/oauth/token", "", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {fakeJWT}}, 0, ""},
		{"userinfo with a made-up token", "GET", "/oidc/userinfo", "Bearer " + fakeJWT, nil, 0, ""},
		{"userinfo without a token", "GET", "/oidc/userinfo", "", nil, 0, ""},
		{"introspect without client", "POST", "/oidc/oauth/introspect", "", url.Values{"token": {fakeJWT}}, 0, ""},
		{"introspect a made-up token", "POST", "/oidc/oauth/introspect", basic, url.Values{"token": {fakeJWT}}, 200, `"active":false`},
		{"revoke a made-up token", "POST", "/oidc/revoke", basic, url.Values{"token": {"whatever"}}, 200, ""},
		{"revoke with a wrong secret", "POST", "/oidc/revoke", wrong, url.Values{"token": {"whatever"}}, 0, ""},
		{"end_session with a made-up hint", "GET", "/oidc/end_session?id_token_hint=" + fakeJWT, "", nil, 0, ""},
		{"device authorization (not offered)", "POST", "/oidc/device_authorization", basic, url.Values{"scope": {"openid"}}, 0, ""},
		{"login step of an unknown sign-in", "GET", "/oidc/login?authRequestID=0123", "", nil, 400, "unknown or has expired"},
		{"login step without a sign-in", "GET", "/oidc/login", "", nil, 400, "unknown or has expired"},
		{"callback of an unknown sign-in", "GET", "/oidc/authorize/callback?id=nope", "", nil, 0, ""},
		{"unknown endpoint", "GET", "/oidc/nope", "", nil, 404, ""},
		{"a made-up JWT of this issuer at the gateway", "POST", "/auth/check/hERG/evaluate", "Bearer " + fakeJWT, nil, 401, ""},
		{"discovery", "GET", "/oidc/.well-known/openid-configuration", "", nil, 200, `"code_challenge_methods_supported":["S256"]`},
		{"keys", "GET", "/oidc/keys", "", nil, 200, `"kty":"RSA"`},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.auth != "" {
			h.Set("Authorization", c.auth)
		}
		var body []byte
		if c.form != nil {
			h.Set("Content-Type", "application/x-www-form-urlencoded")
			body = []byte(c.form.Encode())
		}
		req, err := http.NewRequestWithContext(context.Background(), c.method, g.URL+c.path, bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		req.Header = h
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := string(raw) + " " + resp.Header.Get("Location")
		switch {
		case resp.StatusCode >= 500:
			t.Errorf("%s: %d (5xx): %.300s", c.name, resp.StatusCode, got)
		case c.want != 0 && resp.StatusCode != c.want:
			t.Errorf("%s: %d, want %d: %.300s", c.name, resp.StatusCode, c.want, got)
		case c.want == 0 && resp.StatusCode < 300:
			t.Errorf("%s: %d, want an error: %.300s", c.name, resp.StatusCode, got)
		case c.body != "" && !strings.Contains(got, c.body):
			t.Errorf("%s: %d, answer lacks %q: %.300s", c.name, resp.StatusCode, c.body, got)
		}
		if resp.StatusCode/100 == 3 {
			if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, "https://evil.example") {
				t.Errorf("%s: redirected to an unregistered URI %q", c.name, loc)
			}
		}
	}
}

// noRedirects is an HTTP client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// The sysadmins' clients page registers a client and shows its secret once;
// it needs a sysadmin's session and the form's CSRF token.
func TestClientsPage(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	provision(t, g, adm, "alice", "alice-password", "notebooks")
	b := newBrowser(t)
	if p := b.login(g, "admin", adminPassword, ""); p.status != http.StatusSeeOther {
		t.Fatalf("admin login: %d", p.status)
	}
	p := b.do(http.MethodGet, g.URL+"/admin/clients", nil)
	m := csrfRE.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil || !strings.Contains(p.body, g.URL+"/oidc") {
		t.Fatalf("clients page: %d %.300s", p.status, p.body)
	}
	form := url.Values{"csrf": {m[1]}, "name": {"grafana"}, "redirect_uris": {"https://grafana.example/login/generic_oauth\n"}, "roles": {"notebooks"}}
	p = b.do(http.MethodPost, g.URL+"/admin/clients", form)
	if p.status != 200 || !strings.Contains(p.body, `id="client-secret"`) || !strings.Contains(p.body, `data-client="grafana"`) {
		t.Fatalf("register on the page: %d %.500s", p.status, p.body)
	}
	p = b.do(http.MethodPost, g.URL+"/admin/clients", form)
	if p.status != http.StatusConflict || strings.Contains(p.body, `id="client-secret"`) {
		t.Fatalf("register twice: %d", p.status)
	}
	form.Set("csrf", "0000")
	form.Set("name", "other")
	if p := b.do(http.MethodPost, g.URL+"/admin/clients", form); p.status != http.StatusForbidden {
		t.Fatalf("without the CSRF token: %d", p.status)
	}
	a := newBrowser(t)
	a.login(g, "alice", "alice-password", "")
	if p := a.do(http.MethodGet, g.URL+"/admin/clients", nil); p.status != http.StatusForbidden {
		t.Fatalf("a user who is not a sysadmin: %d", p.status)
	}
	if p := newBrowser(t).do(http.MethodGet, g.URL+"/admin/clients", nil); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/login") {
		t.Fatalf("without a session: %d %q", p.status, p.location)
	}
	p = b.do(http.MethodPost, g.URL+"/admin/clients/grafana/delete", url.Values{"csrf": {m[1]}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("delete on the page: %d", p.status)
	}
	if p := b.do(http.MethodGet, g.URL+"/admin/clients", nil); strings.Contains(p.body, `data-client="grafana"`) {
		t.Fatal("deleted client still listed")
	}
}
