// Package identityhttp is the identity store's HTTP adapters: request
// authentication (API tokens and OIDC bearer JWTs from the request's
// headers), CKAN's user and API-token actions, the external-authorization
// check a service mesh calls, and the JSON admin API of `toxgate user`.
// The store and its rules live in gateway/identity; this package turns
// requests into calls of it and its answers into replies.
package identityhttp

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
)

// Options configure the adapters.
type Options struct {
	// Timeout is how long a request's store work may take (the gateway
	// passes server.write_timeout).
	Timeout time.Duration
	// SiteURL is the public base URL for a request (CKAN's help links).
	SiteURL func(*fasthttp.RequestCtx) string
	// CreatedPackages counts each user's active datasets for CKAN's
	// number_created_packages: the public ones, and the private ones too
	// when includePrivate (nil: none; the catalog answers it).
	CreatedPackages func(ctx context.Context, includePrivate bool) map[string]int
	// PublicUserDetails shows users to anonymous callers of user_list and
	// user_show (catalog.auth.public_user_details, CKAN's
	// ckan.auth.public_user_details).
	PublicUserDetails bool
	// Logger receives the admin API's records (default slog.Default()).
	Logger *slog.Logger
}

// Handlers serve the identity store over HTTP.
type Handlers struct {
	svc  *identity.Service
	opts Options
}

// New returns the adapters of svc.
func New(svc *identity.Service, opts Options) *Handlers {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.SiteURL == nil {
		opts.SiteURL = func(*fasthttp.RequestCtx) string { return "" }
	}
	if opts.CreatedPackages == nil {
		opts.CreatedPackages = func(context.Context, bool) map[string]int { return map[string]int{} }
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Handlers{svc: svc, opts: opts}
}

// context is the request's context for store work, with the configured
// deadline (see httpcore.RequestContext).
func (h *Handlers) context(ctx *fasthttp.RequestCtx) (context.Context, context.CancelFunc) {
	return httpcore.RequestContext(ctx, h.opts.Timeout)
}

// Credential returns the token a request carries: the Authorization header
// (an optional "Bearer " is stripped, as CKAN clients send it either way),
// else X-CKAN-API-Key. Empty when there is none.
func Credential(h *fasthttp.RequestHeader) string {
	v := bytes.TrimSpace(h.Peek(fasthttp.HeaderAuthorization))
	if len(v) == 0 {
		v = bytes.TrimSpace(h.Peek("X-CKAN-API-Key"))
	}
	if len(v) > 7 && strings.EqualFold(string(v[:7]), "bearer ") {
		v = bytes.TrimSpace(v[7:])
	}
	return string(v)
}

// Authenticate resolves the caller of an API request from its token or
// OIDC JWT. No credential: the anonymous caller and nil. A bad credential:
// the anonymous caller and identity.ErrBadCredentials (the same for
// unknown, revoked, expired, malformed tokens and tokens of pending or
// disabled users). Browser sessions are not accepted here: they serve the
// web pages only.
func (h *Handlers) Authenticate(ctx *fasthttp.RequestCtx) (identity.Caller, error) {
	cred := Credential(&ctx.Request.Header)
	if cred == "" {
		return identity.Caller{}, nil
	}
	cctx, cancel := h.context(ctx)
	defer cancel()
	return h.svc.Check(cctx, cred)
}
