package identityhttp

import (
	"strings"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
)

// Headers the external-authorization check adds on success (an Istio
// provider forwards them upstream with headersToUpstreamOnAllow).
const (
	HeaderAuthUser   = "X-Auth-User"
	HeaderAuthUserID = "X-Auth-User-Id"
	HeaderAuthRoles  = "X-Auth-Roles"
	HeaderAuthVia    = "X-Auth-Via"
)

// RoleForPath is the role the external-authorization check requires for a
// request path: none for public paths (httpcore.Prefixes), notebooks under /notebooks, and
// models for everything else (the model API) when requireModels is set.
func RoleForPath(path string, requireModels bool) string {
	if httpcore.PublicPath(path) {
		return ""
	}
	if path == "/notebooks" || strings.HasPrefix(path, "/notebooks/") {
		return identity.RoleNotebooks
	}
	if requireModels {
		return identity.RoleModels
	}
	return ""
}

// ExtAuthz is the endpoint Envoy's ext_authz filter (HTTP mode) calls with
// the original request's headers; the original path follows the check
// path (Envoy's path_prefix) or comes in X-Original-Uri / X-Envoy-Original-Path.
// 200 with X-Auth-* identity headers allows; 401 (bad or missing
// credentials where a role is needed) or 403 (role lacking) denies.
func (h *Handlers) ExtAuthz(prefix string, requireModels bool) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		path := strings.TrimPrefix(string(ctx.Path()), prefix)
		for _, h := range []string{"X-Original-Uri", "X-Envoy-Original-Path", "X-Forwarded-Uri"} {
			if v := ctx.Request.Header.Peek(h); len(v) > 0 && (path == "" || path == "/") {
				path = string(v)
			}
		}
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		role := RoleForPath(path, requireModels)
		c, err := h.Authenticate(ctx)
		ctx.Response.Header.Set("Cache-Control", "no-store")
		if err != nil {
			ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="toxgate", error="invalid_token"`)
			httpcore.WriteError(ctx, fasthttp.StatusUnauthorized, "unauthorized", "invalid, expired or revoked token", "")
			return
		}
		if role != "" && c.Anonymous() {
			ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="toxgate"`)
			httpcore.WriteError(ctx, fasthttp.StatusUnauthorized, "unauthorized", "a valid API token is required (Authorization: Bearer <token>)", "")
			return
		}
		if role != "" && !c.HasRole(role) {
			httpcore.WriteError(ctx, fasthttp.StatusForbidden, "forbidden", "user "+c.Name+" lacks the role "+role, "")
			return
		}
		if !c.Anonymous() {
			ctx.Response.Header.Set(HeaderAuthUser, c.Name)
			ctx.Response.Header.Set(HeaderAuthUserID, c.UserID)
			ctx.Response.Header.Set(HeaderAuthRoles, strings.Join(c.Roles, ","))
			ctx.Response.Header.Set(HeaderAuthVia, c.Via)
		}
		httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"allowed": true, "user": c.Name, "roles": c.Roles, "required_role": role})
	}
}
