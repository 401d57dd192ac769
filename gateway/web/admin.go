package web

import (
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
	"toxgate/gateway/identityhttp"
)

type adminUsersData struct {
	Users     []*identity.User
	Roles     []string
	Form      identityhttp.CreateUserRequest
	Created   *identity.User
	Password  string
	Suggested string
}

func (w *Web) adminUsersView(r *req, status int, d adminUsersData, flash, errMsg string) {
	users, err := w.id.Store().Users(r.c, nil)
	if err != nil {
		w.fail(r, err)
		return
	}
	slices.SortFunc(users, func(a, b *identity.User) int { return strings.Compare(a.Name, b.Name) })
	d.Users, d.Roles = users, w.id.Roles()
	if d.Suggested == "" {
		d.Suggested, _ = identity.GeneratePassword(14)
	}
	w.render(r, status, "admin_users", "Users", d, flash, errMsg)
}

func (w *Web) adminUsers(r *req) {
	w.adminUsersView(r, fasthttp.StatusOK, adminUsersData{}, "", "")
}

func formRoles(ctx *fasthttp.RequestCtx) []string {
	var roles []string
	for _, v := range ctx.PostArgs().PeekMulti("roles") {
		roles = append(roles, string(v))
	}
	return roles
}

func (w *Web) adminCreate(r *req) {
	in := identityhttp.CreateUserRequest{
		Name: form(r.ctx, "username"), Email: form(r.ctx, "email"), FirstName: form(r.ctx, "first_name"),
		LastName: form(r.ctx, "last_name"), Password: string(r.ctx.PostArgs().Peek("password")), Roles: formRoles(r.ctx),
	}
	u, err := w.id.CreateUser(r.c, identity.NewUser{Name: in.Name, Email: in.Email, FirstName: in.FirstName,
		LastName: in.LastName, Password: in.Password, Roles: in.Roles})
	var verr *identity.ValidationError
	if errors.As(err, &verr) {
		w.adminUsersView(r, fasthttp.StatusBadRequest, adminUsersData{Form: in, Suggested: in.Password}, "", validationText(verr))
		return
	}
	if err != nil {
		w.fail(r, err)
		return
	}
	w.log.Info("user provisioned", "user", u.Name, "by", r.user.Name)
	w.adminUsersView(r, fasthttp.StatusCreated, adminUsersData{Created: u, Password: in.Password},
		"User "+u.Name+" created. Give them the initial password by a safe channel; at first login they verify "+u.Email+" and choose a new password.", "")
}

type adminUserData struct {
	U     *identity.User
	Roles []string
	Temp  string
}

func (w *Web) adminUserView(r *req, status int, name, flash, errMsg string) {
	u, err := w.id.Store().UserByIDOrName(r.c, name)
	if errors.Is(err, identity.ErrNotFound) {
		w.render(r, fasthttp.StatusNotFound, "message", "No such user", map[string]string{"Text": "There is no user " + name + "."}, "", "")
		return
	}
	if err != nil {
		w.fail(r, err)
		return
	}
	temp, _ := identity.GeneratePassword(14)
	w.render(r, status, "admin_user", "User "+u.Name, adminUserData{U: u, Roles: w.id.Roles(), Temp: temp}, flash, errMsg)
}

func userName(r *req) string { s, _ := r.ctx.UserValue("name").(string); return s }

func (w *Web) adminUser(r *req) {
	flash := map[string]string{"roles": "Roles saved.", "disabled": "User disabled: logins, sessions and tokens stop working.",
		"enabled": "User enabled.", "password": "Password reset: the user must change it at the next login."}[string(r.ctx.QueryArgs().Peek("done"))]
	w.adminUserView(r, fasthttp.StatusOK, userName(r), flash, "")
}

func (w *Web) adminDone(r *req, err error, done string) {
	var verr *identity.ValidationError
	switch {
	case errors.As(err, &verr):
		w.adminUserView(r, fasthttp.StatusBadRequest, userName(r), "", validationText(verr))
	case errors.Is(err, identity.ErrNotFound):
		w.adminUserView(r, fasthttp.StatusNotFound, userName(r), "", "")
	case err != nil:
		w.fail(r, err)
	default:
		redirect(r.ctx, "/admin/users/"+url.PathEscape(userName(r))+"?done="+done)
	}
}

func (w *Web) adminRoles(r *req) {
	_, err := w.id.SetRoles(r.c, userName(r), formRoles(r.ctx))
	w.adminDone(r, err, "roles")
}

func (w *Web) adminDisable(r *req) {
	if userName(r) == r.user.Name || userName(r) == r.user.ID {
		w.adminUserView(r, fasthttp.StatusBadRequest, userName(r), "", "You cannot disable your own account.")
		return
	}
	_, err := w.id.Disable(r.c, userName(r))
	w.adminDone(r, err, "disabled")
}

func (w *Web) adminEnable(r *req) {
	_, err := w.id.Enable(r.c, userName(r))
	w.adminDone(r, err, "enabled")
}

func (w *Web) adminResetPassword(r *req) {
	_, err := w.id.ResetPassword(r.c, userName(r), string(r.ctx.PostArgs().Peek("password")))
	w.adminDone(r, err, "password")
}
