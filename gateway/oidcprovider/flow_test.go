package oidcprovider_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/oauth2"

	"toxgate/gateway/harness"
	"toxgate/gateway/oidcprovider"
)

const hubRedirect = "http://127.0.0.1:9/hub/oauth_callback"

// continueRE finds the link of the page that moves a sign-in on.
var continueRE = regexp.MustCompile(`id="continue" href="([^"]+)"`)

// authorize walks a browser through an authorization request: op's
// authorize endpoint, toxgate's login form (as user), the callback, up to
// the redirect to the client. It returns the redirect's query, or the page
// where the walk stopped.
func (b *browser) authorize(g *harness.Gateway, authURL, user, password, redirectURI string) (url.Values, reply) {
	b.t.Helper()
	u := authURL
	for range 10 {
		p := b.do(http.MethodGet, u, nil)
		if m := continueRE.FindStringSubmatch(p.body); p.status == http.StatusOK && m != nil {
			u = html.UnescapeString(m[1]) // the page that moves on after the login
			continue
		}
		if p.status/100 != 3 {
			return nil, p
		}
		loc := p.location
		if strings.HasPrefix(loc, redirectURI) {
			parsed, err := url.Parse(loc)
			if err != nil {
				b.t.Fatalf("redirect %q: %v", loc, err)
			}
			return parsed.Query(), p
		}
		if strings.HasPrefix(loc, "/login?") {
			parsed, _ := url.Parse(loc)
			lp := b.login(g, user, password, parsed.Query().Get("next"))
			if lp.status != http.StatusSeeOther {
				return nil, lp
			}
			loc = lp.location
		}
		if strings.HasPrefix(loc, "/") {
			loc = g.URL + loc
		}
		u = loc
	}
	b.t.Fatalf("authorize: too many redirects from %s", authURL)
	return nil, reply{}
}

// rp is a relying party of the tests: go-oidc's provider and verifier and
// golang.org/x/oauth2's client.
type rp struct {
	provider *gooidc.Provider
	conf     oauth2.Config
	verifier *gooidc.IDTokenVerifier
}

func newRP(t *testing.T, issuer, clientID, secret, redirect string) *rp {
	t.Helper()
	p, err := gooidc.NewProvider(context.Background(), issuer)
	if err != nil {
		t.Fatalf("discovery of %s: %v", issuer, err)
	}
	return &rp{provider: p, verifier: p.Verifier(&gooidc.Config{ClientID: clientID}),
		conf: oauth2.Config{ClientID: clientID, ClientSecret: secret, Endpoint: p.Endpoint(), RedirectURL: redirect,
			Scopes: []string{gooidc.ScopeOpenID, "profile", "email", gooidc.ScopeOfflineAccess}}}
}

// signIn runs the code flow with PKCE for user and returns the tokens.
func (r *rp) signIn(t *testing.T, g *harness.Gateway, b *browser, user, password string) (*oauth2.Token, *gooidc.IDToken) {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	state, nonce := "st-"+oauth2.GenerateVerifier()[:8], "n-"+oauth2.GenerateVerifier()[:8]
	q, p := b.authorize(g, r.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), gooidc.Nonce(nonce)),
		user, password, r.conf.RedirectURL)
	if q == nil {
		t.Fatalf("sign-in of %s stopped at %d: %.500s", user, p.status, p.body)
	}
	if q.Get("state") != state || q.Get("code") == "" {
		t.Fatalf("callback query %v", q)
	}
	tok, err := r.conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("code exchange: %v", err)
	}
	if _, err := r.conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier)); err == nil {
		t.Fatal("a code was redeemed twice")
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := r.verifier.Verify(context.Background(), raw)
	if err != nil {
		t.Fatalf("go-oidc refused the ID token: %v", err)
	}
	if idt.Nonce != nonce {
		t.Fatalf("nonce %q, want %q", idt.Nonce, nonce)
	}
	return tok, idt
}

// checkBearer calls the external-authorization check of a model path with
// the access token and returns the status and the user it names.
func checkBearer(t *testing.T, g *harness.Gateway, token string) (int, http.Header) {
	t.Helper()
	resp, _, err := g.Do(context.Background(), http.MethodPost, "/auth/check/hERG/evaluate",
		http.Header{"Authorization": {"Bearer " + token}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header
}

type idClaims struct {
	PreferredUsername string   `json:"preferred_username"`
	Email             string   `json:"email"`
	EmailVerified     bool     `json:"email_verified"`
	Name              string   `json:"name"`
	Groups            []string `json:"groups"`
	Roles             []string `json:"roles"`
}

// The code flow with PKCE through the real login form gives ID tokens that
// go-oidc's verifier accepts, with the user's claims and roles; the access
// token is a Bearer token of the gateway with the user's roles; refresh
// tokens rotate and a revoked one stops working; a user without the
// client's role gets a page that says why; logout ends the web session and
// the tokens.
func TestCodeFlowGoOIDC(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	provision(t, g, adm, "alice", "alice-password", "notebooks", "models")
	provision(t, g, adm, "bob", "bob-password", "models")
	secret := registerClient(t, g, adm, map[string]any{"name": "hub", "redirect_uris": []string{hubRedirect},
		"post_logout_redirect_uris": []string{"http://127.0.0.1:9/bye"}, "roles": []string{"notebooks"}})
	if secret == "" {
		t.Fatal("a confidential client got no secret")
	}
	r := newRP(t, g.URL+"/oidc", "hub", secret, hubRedirect)
	b := newBrowser(t)
	tok, idt := r.signIn(t, g, b, "alice", "alice-password")
	var c idClaims
	if err := idt.Claims(&c); err != nil {
		t.Fatal(err)
	}
	if c.PreferredUsername != "alice" || c.Email != "alice@example.org" || !c.EmailVerified || c.Name != "Test Alice" ||
		!slices.Contains(c.Groups, "notebooks") || !slices.Contains(c.Roles, "notebooks") {
		t.Fatalf("ID token claims %+v", c)
	}

	// The access token works as a Bearer token with alice's roles.
	code, h := checkBearer(t, g, tok.AccessToken)
	if code != 200 || h.Get("X-Auth-User") != "alice" || h.Get("X-Auth-Via") != "provider" || !strings.Contains(h.Get("X-Auth-Roles"), "models") {
		t.Fatalf("access token at the gateway: %d %v", code, h)
	}
	ui, err := r.provider.UserInfo(context.Background(), oauth2.StaticTokenSource(tok))
	if err != nil || ui.Email != "alice@example.org" {
		t.Fatalf("userinfo: %v %+v", err, ui)
	}

	// Refresh rotates: the new token works, the used one does not.
	ts := r.conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok.RefreshToken})
	tok2, err := ts.Token()
	if err != nil || tok2.RefreshToken == "" || tok2.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: %v %+v", err, tok2)
	}
	if _, err := r.conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Fatal("a used refresh token worked again")
	}
	if code, _ := checkBearer(t, g, tok2.AccessToken); code != 200 {
		t.Fatalf("refreshed access token: %d", code)
	}

	// Revocation (RFC 7009) of the refresh token ends it and its access token.
	form := url.Values{"token": {tok2.RefreshToken}, "token_type_hint": {"refresh_token"}}
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/oidc/revoke", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("hub", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("revoke: %v %v", err, resp)
	}
	resp.Body.Close()
	if _, err := r.conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok2.RefreshToken}).Token(); err == nil {
		t.Fatal("a revoked refresh token worked")
	}
	if code, _ := checkBearer(t, g, tok2.AccessToken); code != 401 {
		t.Fatalf("access token of a revoked refresh token: %d, want 401", code)
	}

	// Bob lacks the client's role: a page says so, no code is issued.
	q, p := newBrowser(t).authorize(g, r.conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())),
		"bob", "bob-password", hubRedirect)
	if q != nil || p.status != http.StatusForbidden || !strings.Contains(p.body, "notebooks") {
		t.Fatalf("bob without the role: %v %d %.300s", q, p.status, p.body)
	}

	// prompt=login asks for the password again although the session is live.
	q, p = b.authorize(g, r.conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()),
		oauth2.SetAuthURLParam("prompt", "login")), "alice", "wrong-password", hubRedirect)
	if q != nil || p.status != http.StatusUnauthorized {
		t.Fatalf("prompt=login with a wrong password: %v %d %.300s", q, p.status, p.body)
	}
	r.signIn(t, g, b, "alice", "alice-password")

	// A user disabled between the login and the code's redemption gets a
	// 4xx OAuth2 error, not a server error.
	provision(t, g, adm, "dave", "dave-password", "notebooks")
	dv := oauth2.GenerateVerifier()
	q, p = newBrowser(t).authorize(g, r.conf.AuthCodeURL("s", oauth2.S256ChallengeOption(dv)), "dave", "dave-password", hubRedirect)
	if q == nil {
		t.Fatalf("dave's sign-in: %d %.300s", p.status, p.body)
	}
	if code, out := call(t, g, http.MethodPost, "/api/3/action/user_delete", adm, map[string]any{"id": "dave"}); code != 200 {
		t.Fatalf("user_delete dave: %d %v", code, out)
	}
	_, err = r.conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(dv))
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response.StatusCode >= 500 || re.Response.StatusCode < 400 {
		t.Fatalf("code of a disabled user: %v", err)
	}

	// A pending user (first login not finished) is sent to finish it and gets no code.
	if code, out := call(t, g, http.MethodPost, "/api/3/action/user_create", adm, map[string]any{"name": "carol",
		"email": "carol@example.org", "password": "carol-password", "roles": []string{"notebooks"}}); code != 200 {
		t.Fatalf("user_create carol: %d %v", code, out)
	}
	q, p = newBrowser(t).authorize(g, r.conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())),
		"carol", "carol-password", hubRedirect)
	if q != nil || !strings.Contains(p.body, "welcome") && !strings.Contains(p.body, "Finish setting up") {
		t.Fatalf("pending carol: %v %d %.300s", q, p.status, p.body)
	}

	// RP-initiated logout ends alice's web session and her tokens.
	tok3, _ := r.signIn(t, g, b, "alice", "alice-password") // the session signs in without the form
	rawID, _ := tok3.Extra("id_token").(string)
	p = b.do(http.MethodGet, g.URL+"/oidc/end_session?"+url.Values{"id_token_hint": {rawID}, "client_id": {"hub"},
		"post_logout_redirect_uri": {"http://127.0.0.1:9/bye"}}.Encode(), nil)
	if p.status/100 != 3 || !strings.HasPrefix(p.location, "http://127.0.0.1:9/bye") {
		t.Fatalf("end_session: %d %q %.300s", p.status, p.location, p.body)
	}
	if p := b.do(http.MethodGet, g.URL+"/dashboard", nil); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/login") {
		t.Fatalf("web session after logout: %d %q", p.status, p.location)
	}
	if code, _ := checkBearer(t, g, tok3.AccessToken); code != 401 {
		t.Fatalf("access token after logout: %d, want 401", code)
	}
}

// A second gateway on the same store accepts the first one's tokens and
// publishes its keys; after a key rotation the old tokens stay valid and
// new ones are signed with the new key, which both gateways accept.
func TestSharedStoreAndKeyRotation(t *testing.T) {
	a := harness.Start(t)
	bgw := harness.Start(t, harness.WithEnv("TOXGATE_MONGODB_URI="+storeURI(t, a), "TOXGATE_SERVER_PUBLIC_URL="+a.URL))
	adm := adminToken(t, a)
	provision(t, a, adm, "alice", "alice-password", "notebooks", "models")
	secret := registerClient(t, a, adm, map[string]any{"name": "hub", "redirect_uris": []string{hubRedirect}})
	r := newRP(t, a.URL+"/oidc", "hub", secret, hubRedirect)
	tok, idt := r.signIn(t, a, newBrowser(t), "alice", "alice-password")
	if code, h := checkBearer(t, bgw, tok.AccessToken); code != 200 || h.Get("X-Auth-User") != "alice" {
		t.Fatalf("first gateway's token at the second: %d %v", code, h)
	}

	code, out := call(t, a, http.MethodPost, "/admin/api/oidc/rotate-key", adm, nil)
	newKid, _ := out["kid"].(string)
	if code != 200 || newKid == "" {
		t.Fatalf("rotate: %d %v", code, out)
	}
	for _, g := range []*harness.Gateway{a, bgw} {
		if code, _ := checkBearer(t, g, tok.AccessToken); code != 200 {
			t.Fatalf("old access token after rotation at %s: %d", g.URL, code)
		}
	}
	// A fresh relying party (JWKS fetched after the rotation) still verifies the old ID token.
	raw, _ := tok.Extra("id_token").(string)
	if _, err := newRP(t, a.URL+"/oidc", "hub", secret, hubRedirect).verifier.Verify(context.Background(), raw); err != nil {
		t.Fatalf("old ID token after rotation: %v", err)
	}
	tok2, idt2 := r.signIn(t, bgw, newBrowser(t), "alice", "alice-password")
	if kidOf(t, tok2.AccessToken) != newKid {
		t.Fatalf("new token signed by %q, want the new key %q", kidOf(t, tok2.AccessToken), newKid)
	}
	for _, g := range []*harness.Gateway{a, bgw} {
		if code, _ := checkBearer(t, g, tok2.AccessToken); code != 200 {
			t.Fatalf("new access token at %s: %d", g.URL, code)
		}
	}
	if idt.Subject != idt2.Subject {
		t.Fatalf("subjects differ: %q %q", idt.Subject, idt2.Subject)
	}

	// A disabled user's tokens stop working and her refresh token is refused.
	if code, out := call(t, a, http.MethodPost, "/api/3/action/user_delete", adm, map[string]any{"id": "alice"}); code != 200 {
		t.Fatalf("user_delete: %d %v", code, out)
	}
	if code, _ := checkBearer(t, a, tok2.AccessToken); code != 401 {
		t.Fatalf("disabled user's access token: %d, want 401", code)
	}
	if _, err := r.conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok2.RefreshToken}).Token(); err == nil {
		t.Fatal("a disabled user's refresh token worked")
	}
}

// A code and a refresh token work once even when a client (or whoever
// stole them) redeems them many times at the same moment: exactly one of
// the concurrent exchanges gets tokens.
func TestCodeAndRefreshTokenWorkOnceAtOnce(t *testing.T) {
	g := harness.Start(t)
	adm := adminToken(t, g)
	provision(t, g, adm, "alice", "alice-password", "notebooks")
	secret := registerClient(t, g, adm, map[string]any{"name": "hub", "redirect_uris": []string{hubRedirect}})
	r := newRP(t, g.URL+"/oidc", "hub", secret, hubRedirect)
	const n = 8
	race := func(what string, try func() error) {
		t.Helper()
		var wg sync.WaitGroup
		var ok atomic.Int32
		start := make(chan struct{})
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if try() == nil {
					ok.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		if ok.Load() != 1 {
			t.Fatalf("%s redeemed %d times by %d exchanges at once, want once", what, ok.Load(), n)
		}
	}
	for round := 0; round < 3; round++ {
		verifier := oauth2.GenerateVerifier()
		q, p := newBrowser(t).authorize(g, r.conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), "alice", "alice-password", hubRedirect)
		if q == nil || q.Get("code") == "" {
			t.Fatalf("sign-in: %d %.300s", p.status, p.body)
		}
		var tok *oauth2.Token
		var mu sync.Mutex
		race("a code", func() error {
			got, err := r.conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
			if err == nil {
				mu.Lock()
				tok = got
				mu.Unlock()
			}
			return err
		})
		race("a refresh token", func() error {
			_, err := r.conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			return err
		})
	}
	// made-up refresh tokens are refused and leave nothing in the store
	// (three codes and three refresh tokens used: six records)
	for i := range 5 {
		if _, err := r.conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: "tgr_guess" + strconv.Itoa(i)}).Token(); err == nil {
			t.Fatal("a made-up refresh token worked")
		}
	}
	c, err := mongo.Connect(options.Client().ApplyURI(g.StoreURI()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Disconnect(context.Background()) }()
	if n, err := c.Database("toxgate").Collection(oidcprovider.CollUsed).CountDocuments(context.Background(), bson.M{}); err != nil || n != 6 {
		t.Fatalf("records of used secrets: %d %v, want 6", n, err)
	}
}
