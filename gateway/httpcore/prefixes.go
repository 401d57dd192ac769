package httpcore

import "strings"

// Prefix is one part of the gateway's own URL space.
type Prefix struct {
	// Path is "/name" (the path itself and everything below it) or "/name/"
	// (the same: the bare path and everything below it), see UnderPrefix.
	Path string
	// Public paths need no role at the mesh's external-authorization check:
	// the handler decides (the CKAN API per action, the web pages by
	// session, operations and documentation). The rest need the models role
	// when the models are closed to anonymous callers.
	Public bool
}

// Prefixes is the one table of the gateway's own routes: every path the
// core, its adapters and the module host's own endpoints serve lies under
// one of them. No module may claim a route under any of them (they would be
// shadowed), and the external-authorization check lets the public ones pass.
// A test in gateway/server checks that every registered route is listed.
var Prefixes = []Prefix{
	{Path: "/api", Public: true},
	{Path: "/IsAlive", Public: true},
	{Path: "/isalive"},
	{Path: "/readyz", Public: true},
	{Path: "/health"},
	{Path: "/metrics", Public: true},
	{Path: "/static/", Public: true},
	{Path: "/favicon.svg", Public: true},
	{Path: "/favicon.ico", Public: true},
	{Path: "/login", Public: true},
	{Path: "/logout", Public: true},
	{Path: "/verify", Public: true},
	{Path: "/password", Public: true},
	{Path: "/welcome", Public: true},
	{Path: "/dashboard", Public: true},
	{Path: "/tokens", Public: true},
	{Path: "/admin", Public: true},
	{Path: "/models", Public: true},
	{Path: "/docs", Public: true},
	{Path: "/openapi", Public: true},
	{Path: "/openapi.json", Public: true},
	{Path: "/v2/health", Public: true},
	{Path: "/v2/"},
	{Path: "/auth/", Public: true},
	// the OpenID Connect provider (gateway/oidcprovider)
	{Path: "/oidc", Public: true},
	{Path: "/jobs"},
	{Path: "/dataset", Public: true},
	// resumable uploads (gateway/tusup): authorized per request like the API
	{Path: "/uploads/", Public: true},
	{Path: "/organization", Public: true},
	{Path: "/group", Public: true},
	// the DCAT catalog (gateway/dcat): /catalog and one path per syntax
	{Path: "/catalog", Public: true},
	{Path: "/catalog.ttl", Public: true},
	{Path: "/catalog.n3", Public: true},
	{Path: "/catalog.jsonld", Public: true},
	{Path: "/catalog.xml", Public: true},
	{Path: "/catalog.rdf", Public: true},
	// compound resolution (gateway/server/attach_chem.go)
	{Path: "/chem", Public: true},
	{Path: "/ui/"},
	{Path: "/debug/"},
}

// UnderPrefix reports whether path is prefix's own path or lies below it
// ("/api" holds "/api" and "/api/3/action/x", not "/apiary").
func UnderPrefix(path, prefix string) bool {
	base := strings.TrimSuffix(prefix, "/")
	return path == base || strings.HasPrefix(path, base+"/")
}

// ReservedPrefixes are the paths of Prefixes: those no module may claim.
func ReservedPrefixes() []string {
	out := make([]string, len(Prefixes))
	for i, p := range Prefixes {
		out[i] = p.Path
	}
	return out
}

// PublicPath reports whether path needs no role at the mesh: the root page
// and everything under a public prefix.
func PublicPath(path string) bool {
	if path == "/" || path == "" {
		return true
	}
	for _, p := range Prefixes {
		if p.Public && UnderPrefix(path, p.Path) {
			return true
		}
	}
	return false
}
