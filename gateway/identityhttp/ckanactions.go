package identity

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
	"go.mongodb.org/mongo-driver/v2/bson"

	"toxgate/catalog/ckan"
)

// Action is a CKAN action served from the identity store.
type Action struct {
	Name        string
	GET         bool // side-effect free: accepts GET
	Description string
	// Handle serves the action over HTTP (the gateway's core-action seam).
	Handle func(ctx *fasthttp.RequestCtx, action string, caller Caller)
}

// Actions are CKAN's user and API-token actions on this store: user_list,
// user_show, user_create, user_update, user_patch, user_delete, api_token_create,
// api_token_list, api_token_revoke.
func (s *Service) Actions(siteURL func(*fasthttp.RequestCtx) string) []Action {
	type call func(ctx context.Context, data map[string]any, c Caller) (any, error)
	wrap := func(get bool, f call) func(*fasthttp.RequestCtx, string, Caller) {
		return func(ctx *fasthttp.RequestCtx, action string, c Caller) {
			req := ckan.Request{Action: action, Method: string(ctx.Method()), ContentType: string(ctx.Request.Header.ContentType()),
				Query: string(ctx.QueryArgs().QueryString()), Body: ctx.PostBody(), SiteURL: siteURL(ctx)}
			resp := ckan.Serve(req, get, func(data map[string]any, anonymous bool) (any, error) {
				if anonymous {
					c = Caller{}
				}
				cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				return f(cctx, data, c)
			})
			ctx.SetStatusCode(resp.Status)
			ctx.SetContentType(resp.ContentType)
			ctx.SetBody(resp.Body)
		}
	}
	return []Action{
		{Name: "user_list", GET: true, Description: "List users (q, order_by, all_fields)", Handle: wrap(true, s.userList)},
		{Name: "user_show", GET: true, Description: "Show a user (id: name or id; default: the caller)", Handle: wrap(true, s.userShow)},
		{Name: "user_create", Description: "Create a user (sysadmin only)", Handle: wrap(false, s.userCreate)},
		{Name: "user_update", Description: "Update a user (the user or a sysadmin)", Handle: wrap(false, s.userUpdate)},
		{Name: "user_patch", Description: "Update only the given fields of a user (the user or a sysadmin)", Handle: wrap(false, s.userPatch)},
		{Name: "user_delete", Description: "Delete (disable) a user (sysadmin only)", Handle: wrap(false, s.userDelete)},
		{Name: "api_token_create", Description: "Create an API token (user, name, optional expires_in seconds)", Handle: wrap(false, s.apiTokenCreate)},
		{Name: "api_token_list", GET: true, Description: "List a user's API tokens (user_id)", Handle: wrap(true, s.apiTokenList)},
		{Name: "api_token_revoke", Description: "Revoke an API token (token or jti)", Handle: wrap(false, s.apiTokenRevoke)},
	}
}

func ckanTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ckan.Time(*t)
}

// UserDict renders u as CKAN's user dict (ckan.UserDict). private adds what
// only the user and sysadmins see (email, apikey, roles, first-login state).
func UserDict(u *User, private bool, createdPackages int) map[string]any {
	d := ckan.UserDict(ckan.User{ID: u.ID, Name: u.Name, Fullname: u.Fullname, About: u.About, Email: u.Email,
		State: u.State, Sysadmin: u.Sysadmin, Created: u.Created, LastActive: u.LastLogin}, createdPackages)
	if private {
		d["email"] = u.Email
		d["apikey"] = nil
		d["roles"] = append([]string{}, u.Roles...)
		d["first_name"], d["last_name"] = u.FirstName, u.LastName
		d["email_verified"], d["must_change_password"] = u.EmailVerified, u.MustChangePassword
	}
	return d
}

func canSeePrivate(c Caller, u *User) bool { return c.Sysadmin || (c.UserID != "" && c.UserID == u.ID) }

// createdPackages counts active datasets per creator in the catalog's collection.
func (s *Service) createdPackages(ctx context.Context) map[string]int {
	out := map[string]int{}
	cur, err := s.store.users.Database().Collection("datasets").Aggregate(ctx, bson.A{
		bson.M{"$match": bson.M{"state": "active"}},
		bson.M{"$group": bson.M{"_id": "$creator_user_id", "n": bson.M{"$sum": 1}}},
	})
	if err != nil {
		return out
	}
	var rows []struct {
		ID string `bson:"_id"`
		N  int    `bson:"n"`
	}
	if cur.All(ctx, &rows) == nil {
		for _, r := range rows {
			out[r.ID] = r.N
		}
	}
	return out
}

func asBoolDefault(data map[string]any, key string, def bool) bool {
	v, ok := data[key]
	if !ok {
		return def
	}
	b, ok := ckan.AsBool(v)
	if !ok {
		return def
	}
	return b
}

func (s *Service) userList(ctx context.Context, data map[string]any, c Caller) (any, error) {
	users, err := s.store.Users(ctx, bson.M{"state": bson.M{"$ne": StateDeleted}})
	if err != nil {
		return nil, err
	}
	if q := strings.ToLower(ckan.String(data, "q")); q != "" {
		users = slices.DeleteFunc(users, func(u *User) bool {
			return !strings.Contains(strings.ToLower(u.Name), q) && !strings.Contains(strings.ToLower(u.Fullname), q) &&
				!(c.Sysadmin && strings.Contains(strings.ToLower(u.Email), q))
		})
	}
	if email := ckan.String(data, "email"); email != "" && c.Sysadmin {
		users = slices.DeleteFunc(users, func(u *User) bool { return !strings.EqualFold(u.Email, email) })
	}
	counts := s.createdPackages(ctx)
	orderBy := ckan.String(data, "order_by")
	key := func(u *User) string { return u.DisplayName() }
	switch orderBy {
	case "", "display_name":
	case "name":
		key = func(u *User) string { return u.Name }
	case "fullname":
		key = func(u *User) string { return u.Fullname }
	case "created":
		key = func(u *User) string { return u.Created.Format(time.RFC3339Nano) }
	case "email":
		key = func(u *User) string { return u.Email }
	case "number_created_packages":
	default:
		return nil, ckan.ValidationMessage("Cannot sort by field `" + orderBy + "`")
	}
	slices.SortStableFunc(users, func(a, b *User) int {
		if orderBy == "number_created_packages" {
			return counts[a.ID] - counts[b.ID]
		}
		return strings.Compare(key(a), key(b))
	})
	if !asBoolDefault(data, "all_fields", true) {
		names := make([]string, len(users))
		for i, u := range users {
			names[i] = u.Name
		}
		return names, nil
	}
	out := make([]map[string]any, len(users))
	for i, u := range users {
		out[i] = UserDict(u, canSeePrivate(c, u), counts[u.ID])
	}
	return out, nil
}

// userRef loads the user named by data[key] (id or name); 404 if unknown.
func (s *Service) userRef(ctx context.Context, ref string) (*User, error) {
	u, err := s.store.UserByIDOrName(ctx, ref)
	if errors.Is(err, ErrNotFound) {
		return nil, ckan.NotFound("User not found")
	}
	return u, err
}

func (s *Service) userShow(ctx context.Context, data map[string]any, c Caller) (any, error) {
	ref := ckan.String(data, "id")
	if ref == "" {
		ref = ckan.String(data, "user_obj")
	}
	if ref == "" {
		if c.Anonymous() {
			return nil, ckan.NotFound("")
		}
		ref = c.UserID
	}
	u, err := s.userRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	return UserDict(u, canSeePrivate(c, u), s.createdPackages(ctx)[u.ID]), nil
}

// ckanValidation turns a *ValidationError into CKAN's 409.
func ckanValidation(err error) error {
	var verr *ValidationError
	if errors.As(err, &verr) {
		fields := make(map[string]any, len(verr.Fields))
		for k, v := range verr.Fields {
			fields[k] = v
		}
		return ckan.Validation(fields)
	}
	return err
}

func (s *Service) userCreate(ctx context.Context, data map[string]any, c Caller) (any, error) {
	if !c.Sysadmin {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to create users via the API")
	}
	in := NewUser{
		ID: ckan.String(data, "id"), Name: ckan.String(data, "name"), Email: ckan.String(data, "email"),
		FirstName: ckan.String(data, "first_name"), LastName: ckan.String(data, "last_name"),
		Fullname: ckan.String(data, "fullname"), About: ckan.String(data, "about"),
		Password: ckan.String(data, "password"), Roles: ckan.StringList(data, "roles"),
		Sysadmin: asBoolDefault(data, "sysadmin", false), Active: ckan.String(data, "state") == StateActive,
	}
	u, err := s.CreateUser(ctx, in)
	if err != nil {
		return nil, ckanValidation(err)
	}
	d := UserDict(u, true, 0)
	if asBoolDefault(data, "with_apitoken", false) {
		tok, _, err := s.CreateToken(ctx, u.ID, "default", 0)
		if err != nil {
			return nil, err
		}
		d["token"] = tok
	}
	return d, nil
}

func (s *Service) userUpdate(ctx context.Context, data map[string]any, c Caller) (any, error) {
	ref := ckan.String(data, "id")
	if ref == "" {
		return nil, ckan.FieldError("id", "Missing value")
	}
	u, err := s.userRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !canSeePrivate(c, u) {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to edit user " + u.ID)
	}
	var verr ValidationError
	set := bson.M{}
	email := ckan.String(data, "email")
	switch {
	case email == "":
		verr.add("email", "Missing value")
	case ValidateEmail(email) != "":
		verr.add("email", ValidateEmail(email))
	case !strings.EqualFold(email, u.Email):
		if _, err := s.store.UserByEmail(ctx, email); err == nil {
			verr.add("email", "The email address '"+email+"' belongs to a registered user.")
		}
		set["email"], set["email_key"], set["email_verified"] = email, emailKey(email), false
	}
	if name := ckan.String(data, "name"); name != "" && name != u.Name {
		verr.add("name", "Login name cannot be changed")
	}
	if about := ckan.String(data, "about"); strings.Contains(about, "http://") || strings.Contains(about, "https://") {
		verr.add("about", "Edit not allowed as it looks like spam. Please avoid links in your description.")
	}
	for _, k := range []string{"fullname", "about", "first_name", "last_name"} {
		if _, ok := data[k]; ok {
			set[k] = ckan.String(data, k)
		}
	}
	if pw := ckan.String(data, "password"); pw != "" {
		if m := ValidatePassword(pw); m != "" {
			verr.add("password", m)
		} else if !c.Sysadmin || c.UserID == u.ID {
			if !CheckPassword(u.PasswordHash, ckan.String(data, "old_password")) {
				verr.add("oldpassword", "Old Password: incorrect password")
			}
		}
		if len(verr.Fields) == 0 {
			h, err := HashPassword(pw, s.cfg.BcryptCost)
			if err != nil {
				return nil, err
			}
			set["password_hash"] = h
			if c.UserID == u.ID {
				set["must_change_password"] = false
			}
		}
	}
	if _, ok := data["roles"]; ok && c.Sysadmin {
		roles, sysadmin := normalizeRoles(ckan.StringList(data, "roles"), false)
		for _, r := range roles {
			if !slices.Contains(s.Roles(), r) {
				verr.add("roles", "Unknown role \""+r+"\"")
			}
		}
		set["roles"], set["sysadmin"] = roles, sysadmin
	}
	if err := verr.orNil(); err != nil {
		return nil, ckanValidation(err)
	}
	if len(set) > 0 {
		if u, err = s.store.UpdateUser(ctx, u.ID, set); err != nil {
			return nil, err
		}
		// Activation follows the first-login rules.
		if u.State == StatePending && u.FirstLoginDone() {
			if u, err = s.store.UpdateUser(ctx, u.ID, bson.M{"state": StateActive}); err != nil {
				return nil, err
			}
		}
		s.forget()
	}
	return UserDict(u, true, s.createdPackages(ctx)[u.ID]), nil
}

// userPatch is CKAN 2.11's user_patch: user_update over the user's current
// fields with the given ones laid on top, so that what is not given stays.
func (s *Service) userPatch(ctx context.Context, data map[string]any, c Caller) (any, error) {
	ref := ckan.String(data, "id")
	if ref == "" {
		return nil, ckan.FieldError("id", "Missing value")
	}
	u, err := s.userRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !canSeePrivate(c, u) {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to edit user " + u.ID)
	}
	patched := map[string]any{"id": u.ID, "name": u.Name, "email": u.Email, "fullname": u.Fullname,
		"about": u.About, "first_name": u.FirstName, "last_name": u.LastName}
	for k, v := range data {
		patched[k] = v
	}
	return s.userUpdate(ctx, patched, c)
}

func (s *Service) userDelete(ctx context.Context, data map[string]any, c Caller) (any, error) {
	if !c.Sysadmin {
		if c.Anonymous() {
			return nil, ckan.NotAuthorized("Action user_delete requires an authenticated user")
		}
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to delete users")
	}
	u, err := s.userRef(ctx, ckan.String(data, "id"))
	if err != nil {
		return nil, err
	}
	if _, err := s.Disable(ctx, u.ID); err != nil {
		return nil, err
	}
	return nil, nil
}

func requireUser(c Caller, action string) error {
	if c.Anonymous() {
		return ckan.NotAuthorized("Action " + action + " requires an authenticated user")
	}
	return nil
}

func (s *Service) apiTokenCreate(ctx context.Context, data map[string]any, c Caller) (any, error) {
	if err := requireUser(c, "api_token_create"); err != nil {
		return nil, err
	}
	var verr ValidationError
	ref, name := ckan.String(data, "user"), ckan.String(data, "name")
	if ref == "" {
		verr.add("user", "Missing value")
	}
	if name == "" {
		verr.add("name", "Missing value")
	}
	var ttl time.Duration
	if _, ok := data["expires_in"]; ok {
		n, msg := ckan.AsInt(data["expires_in"])
		unit := 1
		if _, ok := data["unit"]; ok {
			unit, _ = ckan.AsInt(data["unit"])
		}
		switch {
		case msg != "":
			verr.add("expires_in", msg)
		case n < 0 || unit <= 0:
			verr.add("expires_in", "Must be a natural number")
		default:
			ttl = time.Duration(n) * time.Duration(unit) * time.Second
		}
	}
	if err := verr.orNil(); err != nil {
		return nil, ckanValidation(err)
	}
	u, err := s.userRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !canSeePrivate(c, u) {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to create API tokens for " + u.Name)
	}
	tok, _, err := s.CreateToken(ctx, u.ID, name, ttl)
	if err != nil {
		return nil, ckanValidation(err)
	}
	return map[string]any{"token": tok}, nil
}

// TokenDict is CKAN's api_token_list item plus the expiry.
func TokenDict(t *Token) map[string]any {
	return map[string]any{"id": t.ID, "name": t.Name, "user_id": t.UserID, "created_at": ckan.Time(t.CreatedAt),
		"last_access": ckanTimePtr(t.LastUsed), "expires_at": ckanTimePtr(t.ExpiresAt)}
}

func (s *Service) apiTokenList(ctx context.Context, data map[string]any, c Caller) (any, error) {
	if err := requireUser(c, "api_token_list"); err != nil {
		return nil, err
	}
	ref := ckan.String(data, "user_id")
	if ref == "" {
		ref = ckan.String(data, "user")
	}
	if ref == "" {
		return nil, ckan.FieldError("user_id", "Missing value")
	}
	u, err := s.userRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !canSeePrivate(c, u) {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to list API tokens of " + u.Name)
	}
	toks, err := s.Tokens(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(toks))
	for i, t := range toks {
		out[i] = TokenDict(t)
	}
	return out, nil
}

func (s *Service) apiTokenRevoke(ctx context.Context, data map[string]any, c Caller) (any, error) {
	if err := requireUser(c, "api_token_revoke"); err != nil {
		return nil, err
	}
	id := ckan.String(data, "jti")
	if id == "" {
		tok := ckan.String(data, "token")
		if tok == "" {
			return nil, ckan.FieldError("token", "Missing value")
		}
		id = TokenID(TokenHash(tok))
	}
	err := s.RevokeToken(ctx, c, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to revoke this API token")
	}
	return nil, err
}
