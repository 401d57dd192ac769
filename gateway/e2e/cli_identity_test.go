package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"toxgate/gateway/harness"
)

// runCLI runs `toxgate user ...` with the gateway's environment.
func runCLI(t *testing.T, g *harness.Gateway, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(harness.Build(t).Gateway, append([]string{"user"}, args...)...)
	cmd.Env = g.Env
	cmd.Dir = harness.RepoRoot()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// The CLI provisions against a running gateway on the embedded store (with
// the key it wrote next to the store) and against the store itself when no
// gateway runs.
func TestUserCLI(t *testing.T) {
	g := harness.Start(t)
	out, err := runCLI(t, g, "create", "--url", g.URL, "--username", "frank", "--email", "frank@example.org",
		"--first-name", "Frank", "--last-name", "Drebin", "--role", "models")
	if err != nil || !strings.Contains(out, "created user frank") || !strings.Contains(out, "initial password: ") {
		t.Fatalf("user create: %v\n%s", err, out)
	}
	pw := strings.TrimSpace(out[strings.Index(out, "initial password: ")+len("initial password: "):])
	pw = strings.Fields(pw)[0]
	if p := newWebClient(t, g).login("frank", pw); p.status != http.StatusSeeOther || p.location != "/welcome" {
		t.Fatalf("frank's first login with the printed password: %d %q", p.status, p.location)
	}
	if out, err := runCLI(t, g, "set-roles", "--url", g.URL, "frank", "models", "notebooks"); err != nil || !strings.Contains(out, "roles: models,notebooks") {
		t.Fatalf("set-roles: %v\n%s", err, out)
	}
	if out, err := runCLI(t, g, "set-roles", "--url", g.URL, "frank", "wizard"); err == nil || !strings.Contains(out, `Unknown role "wizard"`) {
		t.Fatalf("set-roles with an unknown role: %v\n%s", err, out)
	}
	if out, err := runCLI(t, g, "disable", "--url", g.URL, "frank"); err != nil || !strings.Contains(out, "state deleted") {
		t.Fatalf("disable: %v\n%s", err, out)
	}
	if out, err := runCLI(t, g, "list", "--url", g.URL); err != nil || !strings.Contains(out, "frank") || !strings.Contains(out, "admin") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	// Without a key or token the admin API refuses.
	if code, _, _ := check(t, g, "/x", nil); code != 401 {
		t.Fatalf("check without token: %d", code)
	}
	resp, _, err := g.Do(t.Context(), http.MethodGet, "/admin/api/users", nil, nil)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("admin API without credentials: %v %v", resp, err)
	}

	// Gateway stopped: the CLI opens the store itself.
	if code := g.Stop(); code != 0 {
		t.Fatalf("stop: %d", code)
	}
	out, err = runCLI(t, g, "create", "--username", "grace", "--email", "grace@example.org", "--password", "grace-pass-1", "--active")
	if err != nil || !strings.Contains(out, "via the store") {
		t.Fatalf("create with the gateway stopped: %v\n%s", err, out)
	}
	if out, err := runCLI(t, g, "list", "--json"); err != nil || !strings.Contains(out, `"name": "grace"`) || !strings.Contains(out, `"state": "active"`) {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
}

// Bearer JWTs from a configured issuer, verified against its JWKS served
// on loopback; roles from realm_access.roles.
func TestOIDCBearerTokens(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwks, _ := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes())}}})
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	defer idp.Close()
	const iss = "https://kc.example/realms/tox"
	// anonymous user_show below: catalog.auth.public_user_details
	g := harness.Start(t, harness.WithEnv("TOXGATE_OIDC_ISSUER="+iss, "TOXGATE_OIDC_AUDIENCE=toxgate", "TOXGATE_OIDC_JWKS_URL="+idp.URL,
		"TOXGATE_CATALOG_AUTH_PUBLIC_USER_DETAILS=true"))
	sign := func(aud string, roles ...string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": iss, "aud": aud, "sub": "kc-123",
			"exp": time.Now().Add(time.Minute).Unix(), "preferred_username": "kc-user", "email": "kc@example.org",
			"realm_access": map[string]any{"roles": roles}})
		tok.Header["kid"] = "k1"
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	code, h, _ := check(t, g, "/hERG/evaluate", bearer(sign("toxgate", "models")))
	if code != 200 || h.Get("X-Auth-User") != "kc-user" || h.Get("X-Auth-Via") != "oidc" || h.Get("X-Auth-Roles") != "models" {
		t.Fatalf("JWT with models: %d %v", code, h)
	}
	if code, _, _ := check(t, g, "/hERG/evaluate", bearer(sign("toxgate"))); code != 403 {
		t.Fatalf("JWT without models: %d", code)
	}
	if code, _, _ := check(t, g, "/hERG/evaluate", bearer(sign("account", "models"))); code != 401 {
		t.Fatalf("JWT for another audience: %d", code)
	}
	code, out := ckan(t, g, "user_show", "", map[string]any{"id": "kc-user"})
	if code != 200 {
		t.Fatalf("provisioned OIDC user not shown: %d %v", code, out)
	}
}

// models.require_token false opens model paths to anonymous callers.
func TestModelsOpenWithoutToken(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_REQUIRE_TOKEN=false"))
	if code, _, _ := check(t, g, "/hERG/evaluate", nil); code != 200 {
		t.Fatalf("anonymous model path with require_token false: %d", code)
	}
	if code, _, _ := check(t, g, "/hERG/evaluate", bearer("tg_bad")); code != 401 {
		t.Fatalf("a bad token still gets 401: %d", code)
	}
}
