// Package identity is the gateway's one identity store and authentication:
// users, roles, passwords, sessions, API tokens, e-mail verification, OIDC
// bearer JWTs. Other parts see only the Caller of a request.
package identity

import "slices"

// Well-known roles. Administrators may configure others (auth.roles).
const (
	RoleSysadmin  = "sysadmin"
	RoleModels    = "models"
	RoleNotebooks = "notebooks"
)

// Caller is who sent a request. The zero value is the anonymous caller.
type Caller struct {
	UserID   string   `json:"user_id,omitempty"`
	Name     string   `json:"name,omitempty"`
	Sysadmin bool     `json:"sysadmin,omitempty"`
	Roles    []string `json:"roles,omitempty"`
	// Via says how the caller was authenticated: "token", "session", "oidc" or "" (anonymous).
	Via string `json:"via,omitempty"`
}

// Anonymous reports whether no user is authenticated.
func (c Caller) Anonymous() bool { return c.UserID == "" && c.Name == "" }

// HasRole reports whether the caller holds role; sysadmins hold every role.
func (c Caller) HasRole(role string) bool {
	return c.Sysadmin || slices.Contains(c.Roles, role)
}
