package identity

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
func AdminView(u *User) AdminUser {
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

// RegisterAdminAPI adds the JSON admin API to r. A request is allowed with a
// sysadmin's token, or with localKey (the key the gateway writes to its data
// directory for the CLI on the same machine; empty: none).
func (s *Service) RegisterAdminAPI(r *router.Router, localKey string) {
	guard := func(h func(ctx *fasthttp.RequestCtx, c Caller)) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			cred := Credential(&ctx.Request.Header)
			if localKey != "" && subtle.ConstantTimeCompare([]byte(cred), []byte(localKey)) == 1 {
				h(ctx, Caller{Name: "local-admin", Sysadmin: true, Via: "local"})
				return
			}
			c, err := s.Authenticate(ctx)
			switch {
			case err != nil || c.Anonymous():
				ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="toxgate"`)
				httpcore.WriteError(ctx, fasthttp.StatusUnauthorized, "unauthorized", "a sysadmin's API token is required", "")
			case !c.Sysadmin:
				httpcore.WriteError(ctx, fasthttp.StatusForbidden, "forbidden", "user "+c.Name+" is not a sysadmin", "")
			default:
				h(ctx, c)
			}
		}
	}
	r.GET(AdminAPIPrefix, guard(s.adminList))
	r.POST(AdminAPIPrefix, guard(s.adminCreate))
	r.POST(AdminAPIPrefix+"/{name}/roles", guard(s.adminSetRoles))
	r.POST(AdminAPIPrefix+"/{name}/disable", guard(s.adminState(s.Disable)))
	r.POST(AdminAPIPrefix+"/{name}/enable", guard(s.adminState(s.Enable)))
}

func adminCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

func writeAdminErr(ctx *fasthttp.RequestCtx, err error) {
	var verr *ValidationError
	switch {
	case errors.As(err, &verr):
		field := ""
		for k := range verr.Fields {
			field = k
			break
		}
		httpcore.WriteError(ctx, fasthttp.StatusConflict, "validation", verr.Error(), field)
	case errors.Is(err, ErrNotFound):
		httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "no such user", "")
	default:
		httpcore.WriteError(ctx, fasthttp.StatusInternalServerError, "internal", err.Error(), "")
	}
}

func (s *Service) adminList(ctx *fasthttp.RequestCtx, _ Caller) {
	cctx, cancel := adminCtx()
	defer cancel()
	users, err := s.store.Users(cctx, nil)
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

func (s *Service) adminCreate(ctx *fasthttp.RequestCtx, c Caller) {
	var req CreateUserRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", "body must be a JSON object: "+err.Error(), "")
		return
	}
	cctx, cancel := adminCtx()
	defer cancel()
	u, err := s.CreateUser(cctx, NewUser{Name: req.Name, Email: req.Email, FirstName: req.FirstName, LastName: req.LastName,
		Password: req.Password, Roles: req.Roles, Active: req.Active})
	if err != nil {
		writeAdminErr(ctx, err)
		return
	}
	s.log.Info("user provisioned", "user", u.Name, "by", c.Name)
	httpcore.WriteJSON(ctx, fasthttp.StatusCreated, map[string]any{"user": AdminView(u)})
}

func (s *Service) adminSetRoles(ctx *fasthttp.RequestCtx, _ Caller) {
	var req struct {
		Roles []string `json:"roles"`
	}
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", "body must be {\"roles\": [...]}", "")
		return
	}
	cctx, cancel := adminCtx()
	defer cancel()
	u, err := s.SetRoles(cctx, ctx.UserValue("name").(string), req.Roles)
	if err != nil {
		writeAdminErr(ctx, err)
		return
	}
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"user": AdminView(u)})
}

func (s *Service) adminState(f func(context.Context, string) (*User, error)) func(*fasthttp.RequestCtx, Caller) {
	return func(ctx *fasthttp.RequestCtx, _ Caller) {
		cctx, cancel := adminCtx()
		defer cancel()
		u, err := f(cctx, ctx.UserValue("name").(string))
		if err != nil {
			writeAdminErr(ctx, err)
			return
		}
		httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"user": AdminView(u)})
	}
}
