package identity

import (
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"toxgate/plugins/contract"
)

// User states, as CKAN names them.
const (
	StatePending = "pending" // provisioned; first login (verification, password change) not finished
	StateActive  = "active"
	StateDeleted = "deleted" // disabled by an administrator
)

// User is one account, stored in the collection "users", which this
// package alone reads and writes; plugins see users through
// Store.LookupUsers (contract.Users).
type User struct {
	ID       string    `bson:"_id"`
	Name     string    `bson:"name"`
	Email    string    `bson:"email"`
	Fullname string    `bson:"fullname"`
	About    string    `bson:"about"`
	State    string    `bson:"state"`
	Sysadmin bool      `bson:"sysadmin"`
	Roles    []string  `bson:"roles"`
	Created  time.Time `bson:"created"`

	FirstName          string     `bson:"first_name"`
	LastName           string     `bson:"last_name"`
	EmailKey           string     `bson:"email_key"` // lower-cased e-mail, unique
	PasswordHash       string     `bson:"password_hash"`
	EmailVerified      bool       `bson:"email_verified"`
	MustChangePassword bool       `bson:"must_change_password"`
	LastLogin          *time.Time `bson:"last_login,omitempty"`
	VerifySentAt       *time.Time `bson:"verify_sent_at,omitempty"`
	// Subject is the OIDC "iss|sub" of a user provisioned from a JWT.
	Subject string `bson:"oidc_subject,omitempty"`
}

// Caller is the identity of an authenticated request by this user.
func (u *User) Caller(via string) Caller {
	return Caller{Identity: contract.Identity{UserID: u.ID, Name: u.Name, Sysadmin: u.Sysadmin}, Roles: slices.Clone(u.Roles), Via: via}
}

// FirstLoginDone reports whether the user has verified the e-mail address
// and replaced the initial password.
func (u *User) FirstLoginDone() bool { return u.EmailVerified && !u.MustChangePassword }

// DisplayName is the full name if set, else the user name (CKAN's display_name).
func (u *User) DisplayName() string {
	if strings.TrimSpace(u.Fullname) != "" {
		return u.Fullname
	}
	return u.Name
}

// nameRE is CKAN's name rule: lowercase alphanumerics, - and _.
var nameRE = regexp.MustCompile(`^[a-z0-9_-]+$`)

// ValidateName checks a user name as CKAN does; it returns the messages.
func ValidateName(name string) []string {
	var msgs []string
	n := utf8.RuneCountInString(name)
	if n < 2 {
		msgs = append(msgs, "Must be at least 2 characters long", fmt.Sprintf("Name %q length is less than minimum 2", name))
	}
	if n > 100 {
		msgs = append(msgs, fmt.Sprintf("Name %q length is more than maximum 100", name))
	}
	if n > 0 && !nameRE.MatchString(name) {
		msgs = append(msgs, "Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_")
	}
	return msgs
}

// ValidateEmail checks an e-mail address ("Email <e> is not a valid format").
func ValidateEmail(email string) string {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || !strings.Contains(email, "@") {
		return fmt.Sprintf("Email %s is not a valid format", email)
	}
	return ""
}

// MinPasswordLen is CKAN's minimum password length.
const MinPasswordLen = 8

// ValidatePassword returns why a new password is refused, or "".
func ValidatePassword(pw string) string {
	switch {
	case utf8.RuneCountInString(pw) < MinPasswordLen:
		return "Your password must be 8 characters or longer"
	case len(pw) > 72:
		return "Your password must be 72 bytes or shorter"
	}
	return ""
}

// fullName joins first and last name.
func fullName(first, last string) string {
	return strings.TrimSpace(strings.TrimSpace(first) + " " + strings.TrimSpace(last))
}

// normalizeRoles sorts and de-duplicates roles and syncs the sysadmin role
// with the sysadmin flag.
func normalizeRoles(roles []string, sysadmin bool) ([]string, bool) {
	out := make([]string, 0, len(roles)+1)
	for _, r := range roles {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if r == RoleSysadmin {
			sysadmin = true
		}
		out = append(out, r)
	}
	if sysadmin {
		out = append(out, RoleSysadmin)
	}
	slices.Sort(out)
	return slices.Compact(out), sysadmin
}
