package server

import (
	"net"
	"strings"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
)

// Authenticator resolves the caller of a request from its credentials
// (token headers, session cookie, OIDC JWT).
type Authenticator interface {
	// Authenticate returns the caller. It returns the anonymous caller and a
	// nil error when the request carries no credentials, and the anonymous
	// caller with ErrBadCredentials when it carries credentials that are
	// unknown, revoked, expired or belong to a user who may not use them.
	Authenticate(ctx *fasthttp.RequestCtx) (identity.Caller, error)
}

// anonymousOnly is the Authenticator used until the identity part is attached.
type anonymousOnly struct{}

func (anonymousOnly) Authenticate(*fasthttp.RequestCtx) (identity.Caller, error) {
	return identity.Caller{}, nil
}

// SetAuthenticator installs the authenticator used by every route.
func (a *App) SetAuthenticator(au Authenticator) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.auth = au
}

// Caller authenticates the request (anonymous on bad credentials, as CKAN does).
func (a *App) Caller(ctx *fasthttp.RequestCtx) identity.Caller {
	a.mu.Lock()
	au := a.auth
	a.mu.Unlock()
	c, _ := au.Authenticate(ctx)
	return c
}

// RequireRole wraps h so that it runs only for a caller with role: 401 with
// WWW-Authenticate: Bearer when credentials are missing or bad, 403 when the
// role is lacking.
func (a *App) RequireRole(role string, h func(*fasthttp.RequestCtx, identity.Caller)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		c, ok := a.authorize(ctx, role)
		if ok {
			h(ctx, c)
		}
	}
}

// authorize checks that the caller holds role, answering 401/403 if not.
func (a *App) authorize(ctx *fasthttp.RequestCtx, role string) (identity.Caller, bool) {
	a.mu.Lock()
	au := a.auth
	a.mu.Unlock()
	c, err := au.Authenticate(ctx)
	if err != nil || c.Anonymous() {
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="toxgate"`)
		msg := "a valid API token is required (Authorization: Bearer <token>)"
		if err != nil {
			ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="toxgate", error="invalid_token"`)
			msg = "invalid, expired or revoked token"
		}
		httpcore.WriteError(ctx, fasthttp.StatusUnauthorized, "unauthorized", msg, "")
		return c, false
	}
	if !c.HasRole(role) {
		httpcore.WriteError(ctx, fasthttp.StatusForbidden, "forbidden", "user "+c.Name+" lacks the role "+role, "")
		return c, false
	}
	return c, true
}

// AdminOnly wraps h so that only sysadmins reach it.
func (a *App) AdminOnly(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if _, ok := a.authorize(ctx, identity.RoleSysadmin); ok {
			h(ctx)
		}
	}
}

// clientIPs finds the address of the client behind the proxies of
// server.trusted_proxies.
type clientIPs struct {
	trusted []*net.IPNet
}

// newClientIPs parses server.trusted_proxies (checked by config.Validate:
// a bad entry is skipped).
func newClientIPs(proxies []string) clientIPs {
	var c clientIPs
	for _, p := range proxies {
		if !strings.Contains(p, "/") {
			if ip := net.ParseIP(p); ip != nil {
				bits := 8 * len(ip.To16())
				if ip.To4() != nil {
					ip, bits = ip.To4(), 32
				}
				c.trusted = append(c.trusted, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			}
			continue
		}
		if _, n, err := net.ParseCIDR(p); err == nil {
			c.trusted = append(c.trusted, n)
		}
	}
	return c
}

func (c clientIPs) isTrusted(ip net.IP) bool {
	for _, n := range c.trusted {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// of is the client address of a request: the TCP peer, unless the peer is
// a trusted proxy, then the nearest address of X-Forwarded-For (read from
// the right, the entries the trusted proxies appended) that is not itself
// a trusted proxy. X-Forwarded-For from anyone else is ignored: a client
// can write anything there.
func (c clientIPs) of(ctx *fasthttp.RequestCtx) string {
	ip := ctx.RemoteIP()
	if len(c.trusted) == 0 || !c.isTrusted(ip) {
		return ip.String()
	}
	var hops []string
	for _, v := range ctx.Request.Header.PeekAll(fasthttp.HeaderXForwardedFor) {
		hops = append(hops, strings.Split(string(v), ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop := net.ParseIP(strings.TrimSpace(hops[i]))
		if hop == nil {
			break // not an address: stop at what the proxies cannot vouch for
		}
		ip = hop
		if !c.isTrusted(hop) {
			break
		}
	}
	return ip.String()
}

// ClientIP is the address of the client of a request, as the login
// throttle counts it (see clientIPs.of and server.trusted_proxies).
func (a *App) ClientIP(ctx *fasthttp.RequestCtx) string {
	return a.clientIPs.of(ctx)
}
