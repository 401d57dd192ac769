package identityhttp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/catalog/ckan"
	"toxgate/gateway/identity"
	"toxgate/plugins/contract"
)

// Action is a CKAN action served from the identity store: its descriptor
// and its handler.
type Action struct {
	contract.ActionSpec
	// Handle serves the action over HTTP (the gateway's core-action seam).
	Handle func(ctx *fasthttp.RequestCtx, action string, caller identity.Caller)
}

// Actions are CKAN's user and API-token actions on this store: user_list,
// user_show, user_create, user_update, user_patch, user_delete, api_token_create,
// api_token_list, api_token_revoke.
func (h *Handlers) Actions() []Action {
	type call func(ctx context.Context, data map[string]any, c identity.Caller) (any, error)
	wrap := func(get bool, f call) func(*fasthttp.RequestCtx, string, identity.Caller) {
		return func(ctx *fasthttp.RequestCtx, action string, c identity.Caller) {
			req := ckan.Request{Action: action, Method: string(ctx.Method()), ContentType: string(ctx.Request.Header.ContentType()),
				Query: string(ctx.QueryArgs().QueryString()), Body: ctx.PostBody(), SiteURL: h.opts.SiteURL(ctx)}
			resp := ckan.Serve(req, get, func(data map[string]any, anonymous bool) (any, error) {
				if anonymous {
					c = identity.Caller{}
				}
				cctx, cancel := h.context(ctx)
				defer cancel()
				return f(cctx, data, c)
			})
			ctx.SetStatusCode(resp.Status)
			ctx.SetContentType(resp.ContentType)
			ctx.SetBody(resp.Body)
		}
	}
	return []Action{
		{ActionSpec: contract.ActionSpec{Name: "user_list", GET: true, Description: "List users (q, order_by, all_fields)"}, Handle: wrap(true, h.userList)},
		{ActionSpec: contract.ActionSpec{Name: "user_show", GET: true, Description: "Show a user (id: name or id; default: the caller)"}, Handle: wrap(true, h.userShow)},
		{ActionSpec: contract.ActionSpec{Name: "user_create", Description: "Create a user (sysadmin only)"}, Handle: wrap(false, h.userCreate)},
		{ActionSpec: contract.ActionSpec{Name: "user_update", Description: "Update a user (the user or a sysadmin)"}, Handle: wrap(false, h.userUpdate)},
		{ActionSpec: contract.ActionSpec{Name: "user_patch", Description: "Update only the given fields of a user (the user or a sysadmin)"}, Handle: wrap(false, h.userPatch)},
		{ActionSpec: contract.ActionSpec{Name: "user_delete", Description: "Delete (disable) a user (sysadmin only)"}, Handle: wrap(false, h.userDelete)},
		{ActionSpec: contract.ActionSpec{Name: "api_token_create", Description: "Create an API token (user, name, optional expires_in seconds)"}, Handle: wrap(false, h.apiTokenCreate)},
		{ActionSpec: contract.ActionSpec{Name: "api_token_list", GET: true, Description: "List a user's API tokens (user_id)"}, Handle: wrap(true, h.apiTokenList)},
		{ActionSpec: contract.ActionSpec{Name: "api_token_revoke", Description: "Revoke an API token (token or jti)"}, Handle: wrap(false, h.apiTokenRevoke)},
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
func UserDict(u *identity.User, private bool, createdPackages int) map[string]any {
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

func canSeePrivate(c identity.Caller, u *identity.User) bool {
	return c.Sysadmin || (c.UserID != "" && c.UserID == u.ID)
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

// seesUsers is CKAN's user_list and user_show auth: everyone logged in,
// anonymous callers with public_user_details (CKAN's restrict_anon).
func (h *Handlers) seesUsers(c identity.Caller) error {
	if c.Anonymous() && !h.opts.PublicUserDetails {
		return ckan.NotAuthorized("")
	}
	return nil
}

// createdPackages returns each user's number_created_packages as c may
// see it: private datasets count in one's own dict and for sysadmins.
func (h *Handlers) createdPackages(ctx context.Context, c identity.Caller) func(u *identity.User) int {
	public := h.opts.CreatedPackages(ctx, false)
	if c.Anonymous() {
		return func(u *identity.User) int { return public[u.ID] }
	}
	all := h.opts.CreatedPackages(ctx, true)
	return func(u *identity.User) int {
		if canSeePrivate(c, u) {
			return all[u.ID]
		}
		return public[u.ID]
	}
}

func (h *Handlers) userList(ctx context.Context, data map[string]any, c identity.Caller) (any, error) {
	if err := h.seesUsers(c); err != nil {
		return nil, err
	}
	users, err := h.svc.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	if q := strings.ToLower(ckan.String(data, "q")); q != "" {
		users = slices.DeleteFunc(users, func(u *identity.User) bool {
			return !strings.Contains(strings.ToLower(u.Name), q) && !strings.Contains(strings.ToLower(u.Fullname), q) &&
				!(c.Sysadmin && strings.Contains(strings.ToLower(u.Email), q))
		})
	}
	if email := ckan.String(data, "email"); email != "" && c.Sysadmin {
		users = slices.DeleteFunc(users, func(u *identity.User) bool { return !strings.EqualFold(u.Email, email) })
	}
	count := h.createdPackages(ctx, c)
	orderBy := ckan.String(data, "order_by")
	key := func(u *identity.User) string { return u.DisplayName() }
	switch orderBy {
	case "", "display_name":
	case "name":
		key = func(u *identity.User) string { return u.Name }
	case "fullname":
		key = func(u *identity.User) string { return u.Fullname }
	case "created":
		key = func(u *identity.User) string { return u.Created.Format(time.RFC3339Nano) }
	case "email":
		key = func(u *identity.User) string { return u.Email }
	case "number_created_packages":
	default:
		return nil, ckan.ValidationMessage("Cannot sort by field `" + orderBy + "`")
	}
	slices.SortStableFunc(users, func(a, b *identity.User) int {
		if orderBy == "number_created_packages" {
			return count(a) - count(b)
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
		out[i] = UserDict(u, canSeePrivate(c, u), count(u))
	}
	return out, nil
}

// userRef loads the user named by data[key] (id or name); 404 if unknown.
func (h *Handlers) userRef(ctx context.Context, ref string) (*identity.User, error) {
	u, err := h.svc.Store().UserByIDOrName(ctx, ref)
	if errors.Is(err, identity.ErrNotFound) {
		return nil, ckan.NotFound("User not found")
	}
	return u, err
}

func (h *Handlers) userShow(ctx context.Context, data map[string]any, c identity.Caller) (any, error) {
	if err := h.seesUsers(c); err != nil {
		return nil, err
	}
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
	u, err := h.userRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	return UserDict(u, canSeePrivate(c, u), h.opts.CreatedPackages(ctx, canSeePrivate(c, u))[u.ID]), nil
}

// ckanValidation turns a *ValidationError into CKAN's 409.
func ckanValidation(err error) error {
	var verr *identity.ValidationError
	if errors.As(err, &verr) {
		fields := make(map[string]any, len(verr.Fields))
		for k, v := range verr.Fields {
			fields[k] = v
		}
		return ckan.Validation(fields)
	}
	return err
}

func (h *Handlers) userCreate(ctx context.Context, data map[string]any, c identity.Caller) (any, error) {
	if !c.Sysadmin {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to create users via the API")
	}
	in := identity.NewUser{
		ID: ckan.String(data, "id"), Name: ckan.String(data, "name"), Email: ckan.String(data, "email"),
		FirstName: ckan.String(data, "first_name"), LastName: ckan.String(data, "last_name"),
		Fullname: ckan.String(data, "fullname"), About: ckan.String(data, "about"),
		Password: ckan.String(data, "password"), Roles: ckan.StringList(data, "roles"),
		Sysadmin: asBoolDefault(data, "sysadmin", false), Active: ckan.String(data, "state") == identity.StateActive,
	}
	u, err := h.svc.CreateUser(ctx, in)
	if err != nil {
		return nil, ckanValidation(err)
	}
	d := UserDict(u, true, 0)
	if asBoolDefault(data, "with_apitoken", false) {
		tok, _, err := h.svc.CreateToken(ctx, u.ID, "default", 0)
		if err != nil {
			return nil, err
		}
		d["token"] = tok
	}
	return d, nil
}

// editableUser is the user data["id"] names, if c may edit it (user_update
// and user_patch: the user themself or a sysadmin).
func (h *Handlers) editableUser(ctx context.Context, data map[string]any, c identity.Caller) (*identity.User, error) {
	ref := ckan.String(data, "id")
	if ref == "" {
		return nil, ckan.FieldError("id", "Missing value")
	}
	u, err := h.userRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !canSeePrivate(c, u) {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to edit user " + u.ID)
	}
	return u, nil
}

func (h *Handlers) userUpdate(ctx context.Context, data map[string]any, c identity.Caller) (any, error) {
	u, err := h.editableUser(ctx, data, c)
	if err != nil {
		return nil, err
	}
	ch := identity.UserChanges{Name: ckan.String(data, "name"), Email: ckan.String(data, "email"),
		Password: ckan.String(data, "password"), OldPassword: ckan.String(data, "old_password")}
	for k, dst := range map[string]**string{"fullname": &ch.Fullname, "about": &ch.About, "first_name": &ch.FirstName, "last_name": &ch.LastName} {
		if _, ok := data[k]; ok {
			v := ckan.String(data, k)
			*dst = &v
		}
	}
	if _, ok := data["roles"]; ok {
		roles := ckan.StringList(data, "roles")
		ch.Roles = &roles
	}
	if u, err = h.svc.UpdateUser(ctx, u, ch, c); err != nil {
		return nil, ckanValidation(err)
	}
	return UserDict(u, true, h.opts.CreatedPackages(ctx, true)[u.ID]), nil
}

// userPatch is CKAN 2.11's user_patch: user_update over the user's current
// fields with the given ones laid on top, so that what is not given stays.
func (h *Handlers) userPatch(ctx context.Context, data map[string]any, c identity.Caller) (any, error) {
	u, err := h.editableUser(ctx, data, c)
	if err != nil {
		return nil, err
	}
	patched := map[string]any{"id": u.ID, "name": u.Name, "email": u.Email, "fullname": u.Fullname,
		"about": u.About, "first_name": u.FirstName, "last_name": u.LastName}
	for k, v := range data {
		patched[k] = v
	}
	return h.userUpdate(ctx, patched, c)
}

func (h *Handlers) userDelete(ctx context.Context, data map[string]any, c identity.Caller) (any, error) {
	if !c.Sysadmin {
		if c.Anonymous() {
			return nil, ckan.NotAuthorized("Action user_delete requires an authenticated user")
		}
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to delete users")
	}
	u, err := h.userRef(ctx, ckan.String(data, "id"))
	if err != nil {
		return nil, err
	}
	if _, err := h.svc.Disable(ctx, u.ID); err != nil {
		return nil, err
	}
	return nil, nil
}

// fieldErrors collects CKAN validation messages by field.
type fieldErrors map[string][]string

func (f fieldErrors) add(field, msg string) { f[field] = append(f[field], msg) }

func requireUser(c identity.Caller, action string) error {
	if c.Anonymous() {
		return ckan.NotAuthorized("Action " + action + " requires an authenticated user")
	}
	return nil
}

func (h *Handlers) apiTokenCreate(ctx context.Context, data map[string]any, c identity.Caller) (any, error) {
	if err := requireUser(c, "api_token_create"); err != nil {
		return nil, err
	}
	verr := fieldErrors{}
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
	if len(verr) > 0 {
		return nil, ckanValidation(&identity.ValidationError{Fields: verr})
	}
	u, err := h.userRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !canSeePrivate(c, u) {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to create API tokens for " + u.Name)
	}
	tok, _, err := h.svc.CreateToken(ctx, u.ID, name, ttl)
	if err != nil {
		return nil, ckanValidation(err)
	}
	return map[string]any{"token": tok}, nil
}

// TokenDict is CKAN's api_token_list item plus the expiry.
func TokenDict(t *identity.Token) map[string]any {
	return map[string]any{"id": t.ID, "name": t.Name, "user_id": t.UserID, "created_at": ckan.Time(t.CreatedAt),
		"last_access": ckanTimePtr(t.LastUsed), "expires_at": ckanTimePtr(t.ExpiresAt)}
}

func (h *Handlers) apiTokenList(ctx context.Context, data map[string]any, c identity.Caller) (any, error) {
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
	u, err := h.userRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !canSeePrivate(c, u) {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to list API tokens of " + u.Name)
	}
	toks, err := h.svc.Tokens(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(toks))
	for i, t := range toks {
		out[i] = TokenDict(t)
	}
	return out, nil
}

func (h *Handlers) apiTokenRevoke(ctx context.Context, data map[string]any, c identity.Caller) (any, error) {
	if err := requireUser(c, "api_token_revoke"); err != nil {
		return nil, err
	}
	id := ckan.String(data, "jti")
	if id == "" {
		tok := ckan.String(data, "token")
		if tok == "" {
			return nil, ckan.FieldError("token", "Missing value")
		}
		id = identity.TokenID(identity.TokenHash(tok))
	}
	err := h.svc.RevokeToken(ctx, c, id)
	if errors.Is(err, identity.ErrNotFound) {
		return nil, ckan.NotAuthorized("User " + c.Name + " not authorized to revoke this API token")
	}
	return nil, err
}
