// Package identity is the gateway's one identity store and authentication:
// users, roles, passwords, sessions, API tokens, e-mail verification, OIDC
// bearer JWTs. Other parts see only the Caller of a request.
package identity

import (
	"slices"

	"toxgate/plugins/contract"
)

// Well-known roles. Administrators may configure others (auth.roles).
const (
	RoleSysadmin  = "sysadmin"
	RoleModels    = "models"
	RoleNotebooks = "notebooks"
)

// Caller is who sent a request: the identity the plugins are told
// (contract.Identity: user id, name, sysadmin) and the gateway's roles.
// The zero value is the anonymous caller.
type Caller struct {
	contract.Identity
	// Roles are the gateway roles the caller holds.
	Roles []string
	// Via says how the caller was authenticated: "token", "session", "oidc" (an external
	// provider's JWT), "provider" (an access token of the gateway's own OpenID
	// provider) or "" (anonymous).
	Via string
}

// HasRole reports whether the caller holds role; sysadmins hold every role.
func (c Caller) HasRole(role string) bool {
	return c.Sysadmin || slices.Contains(c.Roles, role)
}
