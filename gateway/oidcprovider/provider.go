// Package oidcprovider makes the gateway an OpenID Connect provider, so
// that JupyterHub, oauth2-proxy and other tools share toxgate's login:
// discovery, the authorization code flow with PKCE, refresh tokens,
// revocation, introspection, userinfo, RP-initiated logout and a JWKS whose
// keys live in the store (every gateway signs with them and publishes
// them). The protocol is zitadel/oidc's op package; this package gives it
// its storage (clients, sign-ins, tokens, keys in the store, users from the
// identity store), the login (toxgate's own login page and session), and a
// bounded bridge from fasthttp to op's net/http handler. The access tokens
// it issues are accepted by the gateway as Bearer tokens (Owns, Verify).
package oidcprovider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zitadel/oidc/v3/pkg/op"

	"toxgate/gateway/config"
	"toxgate/gateway/identity"
)

// PathPrefix is where the provider's endpoints live; the issuer is the
// site's URL with it.
const PathPrefix = "/oidc"

// Options configure a Provider.
type Options struct {
	Config config.OIDCProvider
	// SiteURL is the gateway's external base URL (server.public_url).
	SiteURL string
	// DB is the gateway's database.
	DB *mongo.Database
	// Identity is the gateway's identity service (users, sessions, roles).
	Identity *identity.Service
	// SessionCookie is the name of the web session's cookie.
	SessionCookie string
	// SecureCookies marks cleared cookies Secure (auth.secure_cookies).
	SecureCookies bool
	// Timeout bounds the store work of one request.
	Timeout time.Duration
	Logger  *slog.Logger
}

// Provider is the OpenID Connect provider.
type Provider struct {
	o       Options
	issuer  string
	st      *storage
	op      *op.Provider
	handler http.Handler
	// lastPrune is when this gateway last pruned expired records (Unix ms).
	lastPrune atomic.Int64
}

// New builds the provider on the store (the crypto key of its codes is
// read, or made on first start).
func New(ctx context.Context, o Options) (*Provider, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	c := o.Config
	issuer := strings.TrimRight(o.SiteURL, "/") + PathPrefix
	rec := newRecords(o.DB)
	key, err := cryptoKey(ctx, rec.keys)
	if err != nil {
		return nil, err
	}
	p := &Provider{o: o, issuer: issuer}
	p.st = &storage{rec: rec, clients: &clients{coll: rec.clients, max: c.MaxClients},
		keys:  newKeyring(rec.keys, c.KeyRotation, max(c.AccessTokenTTL, c.IDTokenTTL), o.Logger),
		users: o.Identity.Store(), cfg: c, log: o.Logger, forget: o.Identity.ForgetCredentials,
		loginURL: func(id string) string { return issuer + "/login?authRequestID=" + url.QueryEscape(id) }}
	ks := keySet{p.st.keys}
	opts := []op.Option{op.WithLogger(o.Logger), op.WithAccessTokenKeySet(ks), op.WithIDTokenHintKeySet(ks)}
	if strings.HasPrefix(issuer, "http://") {
		// op refuses a plain-HTTP issuer unless told; the gateway's own URL
		// is http only on loopback or behind a proxy the operator chose.
		opts = append(opts, op.WithAllowInsecure())
	}
	prov, err := op.NewProvider(&op.Config{
		CryptoKey:             key,
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		SupportedScopes:       []string{"openid", "profile", "email", "offline_access", "groups", "roles"},
		SupportedClaims: []string{"sub", "aud", "exp", "iat", "iss", "auth_time", "nonce", "azp", "at_hash", "amr",
			"preferred_username", "name", "given_name", "family_name", "email", "email_verified", "groups", "roles"},
	}, p.st, op.StaticIssuer(issuer), opts...)
	if err != nil {
		return nil, fmt.Errorf("oidc provider: %w", err)
	}
	p.op = prov
	p.handler = http.StripPrefix(PathPrefix, prov)
	return p, nil
}

// Issuer is the provider's issuer URL.
func (p *Provider) Issuer() string { return p.issuer }

// Register adds the provider's routes: the login step and, below
// PathPrefix, op's endpoints.
func (p *Provider) Register(r *router.Router) {
	r.GET(PathPrefix+"/login", p.bounded(p.login))
	r.ANY(PathPrefix+"/{path:*}", p.bounded(p.serveOP))
}

// bounded refuses a request whose query or body exceeds
// oidc_provider.max_request_bytes with an OAuth2 invalid_request.
func (p *Provider) bounded(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	limit := p.o.Config.MaxRequestBytes
	return func(ctx *fasthttp.RequestCtx) {
		if len(ctx.URI().QueryString()) > limit || len(ctx.PostBody()) > limit {
			writeOAuthError(ctx, fasthttp.StatusBadRequest, "invalid_request",
				fmt.Sprintf("the query string and the body may have at most %d bytes each", limit))
			return
		}
		h(ctx)
		p.pruneNowAndThen()
	}
}

// writeOAuthError answers with RFC 6749's error object.
func writeOAuthError(ctx *fasthttp.RequestCtx, status int, code, desc string) {
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetContentType("application/json")
	ctx.SetStatusCode(status)
	ctx.SetBody(fmt.Appendf(nil, `{"error":%q,"error_description":%q}`, code, desc))
}

// pruneEvery is how often one gateway deletes expired sign-ins and tokens.
const pruneEvery = 10 * time.Minute

func (p *Provider) pruneNowAndThen() {
	t := time.Now()
	last := p.lastPrune.Load()
	if last != 0 && t.Sub(time.UnixMilli(last)) < pruneEvery {
		return
	}
	if !p.lastPrune.CompareAndSwap(last, t.UnixMilli()) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.st.rec.prune(ctx, t.UTC()); err != nil {
			p.o.Logger.Warn("oidc provider: prune", "err", err)
		}
	}()
}

// serveOP runs op's net/http handler for the request.
func (p *Provider) serveOP(ctx *fasthttp.RequestCtx) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.o.Timeout)
	defer cancel()
	es := &endSession{}
	cctx = context.WithValue(cctx, endSessionKey{}, es)
	if err := serveHTTP(ctx, cctx, p.handler); err != nil {
		p.o.Logger.Error("oidc provider: bridge", "err", err)
		writeOAuthError(ctx, fasthttp.StatusBadRequest, "invalid_request", "the request could not be read")
		return
	}
	if status := ctx.Response.StatusCode(); status >= 500 {
		p.o.Logger.Error("oidc provider: server error", "path", string(ctx.Path()), "status", status, "body", truncate(string(ctx.Response.Body()), 300))
	}
	if es.userID != "" {
		p.endWebSession(ctx, cctx, es.userID)
	}
}

// endWebSession ends the request's toxgate web session when it is userID's
// (RP-initiated logout with that user's ID token).
func (p *Provider) endWebSession(ctx *fasthttp.RequestCtx, cctx context.Context, userID string) {
	cookie := string(ctx.Request.Header.Cookie(p.o.SessionCookie))
	if cookie == "" {
		return
	}
	_, u, err := p.o.Identity.SessionUser(cctx, cookie)
	if err != nil || u.ID != userID {
		return
	}
	if err := p.o.Identity.EndSession(cctx, cookie); err != nil {
		p.o.Logger.Error("oidc provider: end web session", "err", err)
		return
	}
	p.clearSessionCookie(ctx)
	p.o.Logger.Info("oidc provider: logout ended the web session", "user", u.Name)
}

// clearSessionCookie tells the browser to drop the web session's cookie.
func (p *Provider) clearSessionCookie(ctx *fasthttp.RequestCtx) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(p.o.SessionCookie)
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSecure(p.o.SecureCookies || ctx.IsTLS())
	c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	c.SetExpire(fasthttp.CookieExpireDelete)
	c.SetMaxAge(-1)
	ctx.Response.Header.SetCookie(c)
}

// login is the step between op's authorize endpoint and its callback: the
// user signs in with toxgate's own login page (and finishes the first
// login there), the client's roles are checked, and the sign-in is marked
// done. Consent is implicit: clients are registered by a sysadmin.
func (p *Provider) login(ctx *fasthttp.RequestCtx) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.o.Timeout)
	defer cancel()
	id := string(ctx.QueryArgs().Peek("authRequestID"))
	a, err := p.st.authRequest(cctx, id)
	var nf notFoundError
	switch {
	case errors.As(err, &nf):
		p.page(ctx, fasthttp.StatusBadRequest, "Sign-in expired",
			"This sign-in request is unknown or has expired. Go back to the application and sign in again.")
		return
	case err != nil:
		p.fail(ctx, err)
		return
	}
	cl, err := p.st.clients.get(cctx, a.ClientID)
	if errors.Is(err, ErrNoClient) {
		p.page(ctx, fasthttp.StatusBadRequest, "Unknown application", "The application that sent you here is no longer registered.")
		return
	} else if err != nil {
		p.fail(ctx, err)
		return
	}
	cookie := string(ctx.Request.Header.Cookie(p.o.SessionCookie))
	sess, u, err := p.o.Identity.SessionUser(cctx, cookie)
	if err != nil && !errors.Is(err, identity.ErrNotFound) {
		p.fail(ctx, err)
		return
	}
	if sess == nil {
		if slices.Contains(a.Prompt, "none") {
			p.redirectError(ctx, a, "login_required", "the user is not signed in to toxgate")
			return
		}
		redirect(ctx, "/login?next="+url.QueryEscape(PathPrefix+"/login?authRequestID="+id))
		return
	}
	if a.MaxAge != nil && sess.Created.Before(a.Created) && time.Since(sess.Created) > time.Duration(*a.MaxAge)*time.Second {
		// prompt=login or max_age: the login must be newer, so the session
		// that is too old ends and the user logs in again.
		if err := p.o.Identity.EndSession(cctx, cookie); err != nil {
			p.fail(ctx, err)
			return
		}
		p.clearSessionCookie(ctx)
		redirect(ctx, "/login?next="+url.QueryEscape(PathPrefix+"/login?authRequestID="+id))
		return
	}
	if !u.FirstLoginDone() || u.State != identity.StateActive {
		redirect(ctx, "/welcome")
		return
	}
	if !cl.allows(u.Roles, u.Sysadmin) {
		p.o.Logger.Warn("oidc provider: sign-in refused for lack of role", "user", u.Name, "client", cl.ID, "roles", cl.Roles)
		p.page(ctx, fasthttp.StatusForbidden, "Not allowed",
			fmt.Sprintf("The application %q admits only users with the role %s. Your account %q does not have it; a sysadmin can grant it.",
				cl.ID, strings.Join(cl.Roles, " or "), u.Name))
		return
	}
	if err := p.st.completeAuthRequest(cctx, a.ID, u.ID, sess.Created); err != nil {
		if errors.Is(err, errNotFound) {
			p.page(ctx, fasthttp.StatusBadRequest, "Sign-in expired",
				"This sign-in request has expired. Go back to the application and sign in again.")
			return
		}
		p.fail(ctx, err)
		return
	}
	p.o.Logger.Info("oidc provider: signed in", "user", u.Name, "client", cl.ID)
	// A page that moves on, not a redirect: this step is often reached by
	// the redirect that follows the login form, and browsers apply the web
	// pages' CSP form-action 'self' to the whole redirect chain of a form,
	// which ends at the client's (other) origin.
	p.continuePage(ctx, cl.ID, p.issuer+"/authorize/callback?id="+url.QueryEscape(a.ID))
}

// redirectError sends the user back to the client with an OAuth2 error.
func (p *Provider) redirectError(ctx *fasthttp.RequestCtx, a *authRequest, code, desc string) {
	q := url.Values{"error": {code}, "error_description": {desc}}
	if a.State != "" {
		q.Set("state", a.State)
	}
	sep := "?"
	if strings.Contains(a.RedirectURI, "?") {
		sep = "&"
	}
	redirect(ctx, a.RedirectURI+sep+q.Encode())
}

func (p *Provider) fail(ctx *fasthttp.RequestCtx, err error) {
	p.o.Logger.Error("oidc provider: login step failed", "err", err)
	p.page(ctx, fasthttp.StatusServiceUnavailable, "Try again", "Something went wrong on our side; please try again.")
}
