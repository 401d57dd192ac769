package identity

import (
	"context"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ListUsers returns every user that is not deleted, in store order.
func (s *Service) ListUsers(ctx context.Context) ([]*User, error) {
	return s.store.Users(ctx, bson.M{"state": bson.M{"$ne": StateDeleted}})
}

// UserChanges are what an update of a user's profile asks for; a nil
// field, or an empty string, leaves that part as it is.
type UserChanges struct {
	// Name must be the user's own name when given: login names never change.
	Name string
	// Email is required.
	Email string
	// Fullname, About, FirstName and LastName replace the stored values.
	Fullname, About, FirstName, LastName *string
	// Password sets a new password; OldPassword must be the current one
	// unless a sysadmin changes another user's password.
	Password, OldPassword string
	// Roles replaces the gateway roles; only a sysadmin may change them.
	Roles *[]string
}

// UpdateUser applies ch to u as actor (the user or a sysadmin: the caller
// checks who may). It answers a *ValidationError in CKAN's words when the
// input is wrong, and the updated user; a pending user whose first login
// is done becomes active, and a new password ends all of the user's web
// sessions.
func (s *Service) UpdateUser(ctx context.Context, u *User, ch UserChanges, actor Caller) (*User, error) {
	var verr ValidationError
	set := bson.M{}
	switch {
	case ch.Email == "":
		verr.add("email", "Missing value")
	case ValidateEmail(ch.Email) != "":
		verr.add("email", ValidateEmail(ch.Email))
	case !strings.EqualFold(ch.Email, u.Email):
		if _, err := s.store.UserByEmail(ctx, ch.Email); err == nil {
			verr.add("email", "The email address '"+ch.Email+"' belongs to a registered user.")
		}
		set["email"], set["email_key"], set["email_verified"] = ch.Email, emailKey(ch.Email), false
	}
	if ch.Name != "" && ch.Name != u.Name {
		verr.add("name", "Login name cannot be changed")
	}
	if ch.About != nil && (strings.Contains(*ch.About, "http://") || strings.Contains(*ch.About, "https://")) {
		verr.add("about", "Edit not allowed as it looks like spam. Please avoid links in your description.")
	}
	for k, v := range map[string]*string{"fullname": ch.Fullname, "about": ch.About, "first_name": ch.FirstName, "last_name": ch.LastName} {
		if v != nil {
			set[k] = *v
		}
	}
	if pw := ch.Password; pw != "" {
		if m := ValidatePassword(pw); m != "" {
			verr.add("password", m)
		} else if !actor.Sysadmin || actor.UserID == u.ID {
			if !CheckPassword(u.PasswordHash, ch.OldPassword) {
				verr.add("oldpassword", "Old Password: incorrect password")
			}
		}
		if len(verr.Fields) == 0 {
			h, err := HashPassword(pw, s.cfg.BcryptCost)
			if err != nil {
				return nil, err
			}
			set["password_hash"] = h
			if actor.UserID == u.ID {
				set["must_change_password"] = false
			}
		}
	}
	if ch.Roles != nil && actor.Sysadmin {
		roles, sysadmin := normalizeRoles(*ch.Roles, false)
		for _, r := range roles {
			if !slices.Contains(s.Roles(), r) {
				verr.add("roles", "Unknown role \""+r+"\"")
			}
		}
		set["roles"], set["sysadmin"] = roles, sysadmin
	}
	if err := verr.orNil(); err != nil {
		return nil, err
	}
	if len(set) == 0 {
		return u, nil
	}
	u, err := s.store.UpdateUser(ctx, u.ID, set)
	if err != nil {
		return nil, err
	}
	// Activation follows the first-login rules.
	if u.State == StatePending && u.FirstLoginDone() {
		if u, err = s.store.UpdateUser(ctx, u.ID, bson.M{"state": StateActive}); err != nil {
			return nil, err
		}
	}
	// A new password ends the user's web sessions, as a change on the
	// password page ends the others (an API call has no session of its
	// own to keep); API tokens stay, as they do there.
	if _, ok := set["password_hash"]; ok {
		if err := s.store.DeleteSessions(ctx, bson.M{"user_id": u.ID}); err != nil {
			return nil, err
		}
		s.log.Info("password changed", "user", u.Name, "by", actor.Name, "via", "api")
	}
	s.forget()
	return u, nil
}
