package identityhttp

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
	"toxgate/plugins/contract"
)

// AdminAPIPrefix is where the JSON user administration API lives (used by
// `toxgate user ...`).
const AdminAPIPrefix = "/admin/api/users"

// AdminUser is a user as the admin API returns it.
type AdminUser struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	Email         string     `json:"email"`
	FirstName     string     `json:"first_name"`
	LastName      string     `json:"last_name"`
	Fullname      string     `json:"fullname"`
	State         string     `json:"state"`
	Sysadmin      bool       `json:"sysadmin"`
	Roles         []string   `json:"roles"`
	EmailVerified bool       `json:"email_verified"`
	MustChange    bool       `json:"must_change_password"`
	Created       time.Time  `json:"created"`
	LastLogin     *time.Time `json:"last_login,omitempty"`
}

// AdminView is u for the admin API.
func AdminView(u *identity.User) AdminUser {
	return AdminUser{ID: u.ID, Name: u.Name, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
		Fullname: u.Fullname, State: u.State, Sysadmin: u.Sysadmin, Roles: append([]string{}, u.Roles...),
		EmailVerified: u.EmailVerified, MustChange: u.MustChangePassword, Created: u.Created, LastLogin: u.LastLogin}
}

// CreateUserRequest is the body of POST /admin/api/users.
type CreateUserRequest struct {
	Name      string   `json:"name"`
	Email     string   `json:"email"`
	FirstName string   `json:"first_name"`
	LastName  string   `json:"last_name"`
	Password  string   `json:"password"`
	Roles     []string `json:"roles"`
	Active    bool     `json:"active"`
}

// AdminGuard wraps an admin API handler: it runs with a sysadmin's token,
// or with localKey (the key the gateway writes to its data directory for
// the CLI on the same machine; empty: none); 401 or 403 otherwise.
func (h *Handlers) AdminGuard(localKey string) func(next func(*fasthttp.RequestCtx, identity.Caller)) fasthttp.RequestHandler {
	return func(next func(ctx *fasthttp.RequestCtx, c identity.Caller)) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			cred := Credential(&ctx.Request.Header)
			if localKey != "" && subtle.ConstantTimeCompare([]byte(cred), []byte(localKey)) == 1 {
				next(ctx, identity.Caller{Identity: contract.Identity{Name: "local-admin", Sysadmin: true}, Via: "local"})
				return
			}
			c, err := h.Authenticate(ctx)
			switch {
			case err != nil || c.Anonymous():
				ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="toxgate"`)
				httpcore.WriteError(ctx, fasthttp.StatusUnauthorized, "unauthorized", "a sysadmin's API token is required", "")
			case !c.Sysadmin:
				httpcore.WriteError(ctx, fasthttp.StatusForbidden, "forbidden", "user "+c.Name+" is not a sysadmin", "")
			default:
				next(ctx, c)
			}
		}
	}
}

// RegisterAdminAPI adds the JSON admin API to r, behind AdminGuard(localKey).
func (h *Handlers) RegisterAdminAPI(r *router.Router, localKey string) {
	guard := h.AdminGuard(localKey)
	r.GET(AdminAPIPrefix, guard(h.adminList))
	r.POST(AdminAPIPrefix, guard(h.adminCreate))
	r.POST(AdminAPIPrefix+"/{name}/roles", guard(h.adminSetRoles))
	r.POST(AdminAPIPrefix+"/{name}/disable", guard(h.adminState(h.svc.Disable)))
	r.POST(AdminAPIPrefix+"/{name}/enable", guard(h.adminState(h.svc.Enable)))
}

func writeAdminErr(ctx *fasthttp.RequestCtx, err error) {
	var verr *identity.ValidationError
	switch {
	case errors.As(err, &verr):
		field := ""
		for k := range verr.Fields {
			field = k
			break
		}
		httpcore.WriteError(ctx, fasthttp.StatusConflict, "validation", verr.Error(), field)
	case errors.Is(err, identity.ErrNotFound):
		httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "no such user", "")
	default:
		httpcore.WriteError(ctx, fasthttp.StatusInternalServerError, "internal", err.Error(), "")
	}
}

func (h *Handlers) adminList(ctx *fasthttp.RequestCtx, _ identity.Caller) {
	cctx, cancel := h.context(ctx)
	defer cancel()
	users, err := h.svc.Store().Users(cctx, nil)
	if err != nil {
		writeAdminErr(ctx, err)
		return
	}
	out := make([]AdminUser, len(users))
	for i, u := range users {
		out[i] = AdminView(u)
	}
	slices.SortFunc(out, func(a, b AdminUser) int { return strings.Compare(a.Name, b.Name) })
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"users": out})
}

func (h *Handlers) adminCreate(ctx *fasthttp.RequestCtx, c identity.Caller) {
	var req CreateUserRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", "body must be a JSON object: "+err.Error(), "")
		return
	}
	cctx, cancel := h.context(ctx)
	defer cancel()
	u, err := h.svc.CreateUser(cctx, identity.NewUser{Name: req.Name, Email: req.Email, FirstName: req.FirstName, LastName: req.LastName,
		Password: req.Password, Roles: req.Roles, Active: req.Active})
	if err != nil {
		writeAdminErr(ctx, err)
		return
	}
	h.opts.Logger.Info("user provisioned", "user", u.Name, "by", c.Name)
	httpcore.WriteJSON(ctx, fasthttp.StatusCreated, map[string]any{"user": AdminView(u)})
}

func (h *Handlers) adminSetRoles(ctx *fasthttp.RequestCtx, _ identity.Caller) {
	var req struct {
		Roles []string `json:"roles"`
	}
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", "body must be {\"roles\": [...]}", "")
		return
	}
	cctx, cancel := h.context(ctx)
	defer cancel()
	u, err := h.svc.SetRoles(cctx, ctx.UserValue("name").(string), req.Roles)
	if err != nil {
		writeAdminErr(ctx, err)
		return
	}
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"user": AdminView(u)})
}

func (h *Handlers) adminState(f func(context.Context, string) (*identity.User, error)) func(*fasthttp.RequestCtx, identity.Caller) {
	return func(ctx *fasthttp.RequestCtx, _ identity.Caller) {
		cctx, cancel := h.context(ctx)
		defer cancel()
		u, err := f(cctx, ctx.UserValue("name").(string))
		if err != nil {
			writeAdminErr(ctx, err)
			return
		}
		httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"user": AdminView(u)})
	}
}
