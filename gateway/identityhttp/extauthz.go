package identityhttp

import (
	"fmt"
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
// request path: none for public paths (httpcore.Prefixes), notebooks under
// /notebooks, and models for everything else (the model API) when
// requireModels is set. path must come from NormalizePath: the table
// compares plain decoded paths.
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

// originalPathHeaders carry the original request's path when the check is
// called on its bare path: nginx's auth_request (X-Original-Uri, set in its
// configuration), Envoy (X-Envoy-Original-Path), Traefik's forwardAuth
// (X-Forwarded-Uri).
var originalPathHeaders = []string{"X-Original-Uri", "X-Envoy-Original-Path", "X-Forwarded-Uri"}

// ExtAuthz is the endpoint Envoy's ext_authz filter (HTTP mode), nginx's
// auth_request and Traefik's forwardAuth call with the original request's
// headers; the original path follows the check path (Envoy's path_prefix)
// or comes in one of originalPathHeaders. The path passes NormalizePath
// before the role is looked up: 400 for an ambiguous path, and for
// headers that name different paths (a proxy forwards a client's own
// header beside the one it sets). 200 with X-Auth-* identity headers
// allows; 401 (bad or missing credentials where a role is needed) or 403
// (role lacking) denies.
func (h *Handlers) ExtAuthz(prefix string, requireModels bool) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.Set("Cache-Control", "no-store")
		path, err := checkedPath(ctx, prefix)
		if err != nil {
			httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_path", err.Error(), "")
			return
		}
		role := RoleForPath(path, requireModels)
		c, err := h.Authenticate(ctx)
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

// checkedPath is the normalized original path of a check request: what
// follows prefix in the request's own path as sent, else the one path all
// of originalPathHeaders name, else "/".
func checkedPath(ctx *fasthttp.RequestCtx, prefix string) (string, error) {
	own, err := NormalizePath(string(ctx.URI().PathOriginal()))
	if err != nil {
		return "", err
	}
	if !httpcore.UnderPrefix(own, prefix) {
		return "", fmt.Errorf("%w: not under %s", ErrAmbiguousPath, prefix)
	}
	if rest := strings.TrimPrefix(own, prefix); rest != "" && rest != "/" {
		return rest, nil
	}
	found := ""
	for _, name := range originalPathHeaders {
		for _, v := range ctx.Request.Header.PeekAll(name) {
			if len(v) == 0 {
				continue
			}
			p, err := NormalizePath(string(v))
			if err != nil {
				return "", fmt.Errorf("%s: %w", name, err)
			}
			if found != "" && p != found {
				return "", fmt.Errorf("%w: the original path headers name %s and %s", ErrAmbiguousPath, found, p)
			}
			found = p
		}
	}
	if found == "" {
		return "/", nil
	}
	return found, nil
}
