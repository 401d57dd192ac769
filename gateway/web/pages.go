package web

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
)

func (w *Web) root(ctx *fasthttp.RequestCtx) {
	r := w.load(ctx)
	if r.sess != nil {
		redirect(ctx, "/dashboard")
		return
	}
	redirect(ctx, "/login")
}

type loginData struct {
	Username string
	Next     string
}

func (w *Web) loginPage(ctx *fasthttp.RequestCtx) {
	r := w.load(ctx)
	next := string(ctx.QueryArgs().Peek("next"))
	if r.sess != nil {
		redirect(ctx, safeNext(next))
		return
	}
	flash := ""
	if string(ctx.QueryArgs().Peek("done")) == "verified" {
		flash = "Your e-mail address is verified. Log in to continue."
	}
	w.render(r, fasthttp.StatusOK, "login", "Log in", loginData{Next: next}, flash, "")
}

func (w *Web) loginSubmit(ctx *fasthttp.RequestCtx) {
	r := w.load(ctx)
	if !w.csrfOK(r) {
		w.badCSRF(r)
		return
	}
	name, next := form(ctx, "username"), form(ctx, "next")
	u, err := w.id.Login(r.c, name, string(ctx.PostArgs().Peek("password")), w.clientIP(ctx))
	switch {
	case errors.Is(err, identity.ErrThrottled):
		secs := int(math.Ceil(identity.RetryAfter(err).Seconds()))
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(max(secs, 1)))
		w.render(r, fasthttp.StatusTooManyRequests, "login", "Log in", loginData{Username: name, Next: next}, "",
			"Too many failed logins for this account. Try again in "+waitText(secs)+".")
		return
	case errors.Is(err, identity.ErrBadLogin):
		w.render(r, fasthttp.StatusUnauthorized, "login", "Log in", loginData{Username: name, Next: next}, "", "Wrong user name or password.")
		return
	case err != nil:
		w.fail(r, err)
		return
	}
	if r.cookie != "" {
		_ = w.id.EndSession(r.c, r.cookie)
	}
	secret, _, err := w.id.StartSession(r.c, u.ID)
	if err != nil {
		w.fail(r, err)
		return
	}
	w.setCookie(ctx, SessionCookie, secret, w.o.SessionTTL, false)
	if !u.FirstLoginDone() {
		if !u.EmailVerified {
			if err := w.id.SendVerification(r.c, u, w.baseURL(ctx), false); err != nil {
				w.log.Error("web: send verification", "user", u.Name, "err", err)
			}
		}
		redirect(ctx, "/welcome")
		return
	}
	redirect(ctx, safeNext(next))
}

// clientIP is the request's client address (Options.ClientIP).
func (w *Web) clientIP(ctx *fasthttp.RequestCtx) string {
	if w.o.ClientIP != nil {
		return w.o.ClientIP(ctx)
	}
	return ctx.RemoteIP().String()
}

// waitText says a wait of secs seconds in words.
func waitText(secs int) string {
	switch {
	case secs <= 1:
		return "a second"
	case secs < 120:
		return strconv.Itoa(secs) + " seconds"
	default:
		return strconv.Itoa((secs+59)/60) + " minutes"
	}
}

func (w *Web) logout(ctx *fasthttp.RequestCtx) {
	r := w.load(ctx)
	if r.sess != nil && !w.csrfOK(r) {
		w.badCSRF(r)
		return
	}
	if r.cookie != "" {
		if err := w.id.EndSession(r.c, r.cookie); err != nil {
			w.log.Error("web: logout", "err", err)
		}
	}
	w.setCookie(ctx, SessionCookie, "", -1, false)
	redirect(ctx, "/login")
}

func (w *Web) fail(r *req, err error) {
	w.log.Error("web: request failed", "path", string(r.ctx.Path()), "err", err)
	w.render(r, fasthttp.StatusInternalServerError, "message", "Error", map[string]string{"Text": "Something went wrong; please try again."}, "", "")
}

type welcomeData struct {
	EmailVerified  bool
	PasswordChange bool
	Email          string
}

func (w *Web) welcome(r *req) {
	if r.user.FirstLoginDone() {
		redirect(r.ctx, "/dashboard")
		return
	}
	flash := ""
	switch string(r.ctx.QueryArgs().Peek("done")) {
	case "sent":
		flash = "A new verification link is on its way to " + r.user.Email + "."
	case "verified":
		flash = "Your e-mail address is verified."
	case "password":
		flash = "Your password is changed."
	}
	w.render(r, fasthttp.StatusOK, "welcome", "Finish setting up your account",
		welcomeData{EmailVerified: r.user.EmailVerified, PasswordChange: r.user.MustChangePassword, Email: r.user.Email}, flash, "")
}

func (w *Web) resend(r *req) {
	if !r.user.EmailVerified {
		if err := w.id.SendVerification(r.c, r.user, w.baseURL(r.ctx), false); err != nil {
			w.fail(r, err)
			return
		}
	}
	redirect(r.ctx, "/welcome?done=sent")
}

type verifyData struct{ Token string }

func (w *Web) verifyPage(ctx *fasthttp.RequestCtx) {
	r := w.load(ctx)
	tok := string(ctx.QueryArgs().Peek("token"))
	if tok == "" || !w.id.VerificationValid(r.c, tok) {
		w.render(r, fasthttp.StatusGone, "message", "Link not valid", map[string]string{
			"Text": "This verification link is unknown, already used, or expired. Log in to get a new one.",
		}, "", "")
		return
	}
	w.render(r, fasthttp.StatusOK, "verify", "Verify your e-mail address", verifyData{Token: tok}, "", "")
}

func (w *Web) verifySubmit(ctx *fasthttp.RequestCtx) {
	r := w.load(ctx)
	if !w.csrfOK(r) {
		w.badCSRF(r)
		return
	}
	if _, err := w.id.VerifyEmail(r.c, form(ctx, "token")); err != nil {
		if errors.Is(err, identity.ErrNotFound) {
			w.render(r, fasthttp.StatusGone, "message", "Link not valid", map[string]string{
				"Text": "This verification link is unknown, already used, or expired. Log in to get a new one.",
			}, "", "")
			return
		}
		w.fail(r, err)
		return
	}
	if r.sess != nil {
		redirect(ctx, "/welcome?done=verified")
		return
	}
	redirect(ctx, "/login?done=verified")
}

func (w *Web) passwordPage(r *req) {
	w.render(r, fasthttp.StatusOK, "password", "Change your password", nil, "", "")
}

func (w *Web) passwordSubmit(r *req) {
	next, confirm := string(r.ctx.PostArgs().Peek("new_password")), string(r.ctx.PostArgs().Peek("confirm"))
	if next != confirm {
		w.render(r, fasthttp.StatusBadRequest, "password", "Change your password", nil, "", "The two new passwords differ.")
		return
	}
	_, err := w.id.ChangePassword(r.c, r.user.ID, string(r.ctx.PostArgs().Peek("current_password")), next, r.cookie)
	var verr *identity.ValidationError
	if errors.As(err, &verr) {
		w.render(r, fasthttp.StatusBadRequest, "password", "Change your password", nil, "", validationText(verr))
		return
	}
	if err != nil {
		w.fail(r, err)
		return
	}
	redirect(r.ctx, "/welcome?done=password")
}

func validationText(verr *identity.ValidationError) string {
	var parts []string
	for _, msgs := range verr.Fields {
		parts = append(parts, msgs...)
	}
	return strings.Join(parts, " ")
}

type dashboardData struct {
	Roles      []string
	CanModels  bool
	ModelsOpen bool
	Models     []Model
}

func (w *Web) dashboard(r *req) {
	d := dashboardData{Roles: r.user.Roles, CanModels: r.caller().HasRole(identity.RoleModels), ModelsOpen: w.o.ModelsOpen}
	if w.o.Models != nil {
		d.Models = w.o.Models(r.c)
	}
	w.render(r, fasthttp.StatusOK, "dashboard", "Dashboard", d, "", "")
}

type tokensData struct {
	Tokens   []*identity.Token
	NewToken string
	NewName  string
	Now      time.Time
}

func (w *Web) tokensPage(r *req) {
	toks, err := w.id.Tokens(r.c, r.user.ID)
	if err != nil {
		w.fail(r, err)
		return
	}
	flash := map[string]string{"renewed": "Token renewed.", "revoked": "Token revoked: it no longer works."}[string(r.ctx.QueryArgs().Peek("done"))]
	w.render(r, fasthttp.StatusOK, "tokens", "API tokens", tokensData{Tokens: toks, Now: time.Now()}, flash, "")
}

// ttlField reads the expiry choice of a token form (days; 0: none).
func ttlField(r *req) time.Duration {
	days, _ := strconv.Atoi(form(r.ctx, "expires_days"))
	if days < 0 {
		days = 0
	}
	return time.Duration(days) * 24 * time.Hour
}

func (w *Web) showNewToken(r *req, secret, name, flash string) {
	toks, err := w.id.Tokens(r.c, r.user.ID)
	if err != nil {
		w.fail(r, err)
		return
	}
	w.render(r, fasthttp.StatusOK, "tokens", "API tokens", tokensData{Tokens: toks, NewToken: secret, NewName: name, Now: time.Now()}, flash, "")
}

func (w *Web) tokenCreate(r *req) {
	name := form(r.ctx, "name")
	secret, rec, err := w.id.CreateToken(r.c, r.user.ID, name, ttlField(r))
	var verr *identity.ValidationError
	if errors.As(err, &verr) {
		toks, _ := w.id.Tokens(r.c, r.user.ID)
		w.render(r, fasthttp.StatusBadRequest, "tokens", "API tokens", tokensData{Tokens: toks, Now: time.Now()}, "", "Token name: "+validationText(verr))
		return
	}
	if err != nil {
		w.fail(r, err)
		return
	}
	w.showNewToken(r, secret, rec.Name, "Token created. Copy it now: it is shown only once.")
}

func (w *Web) tokenID(r *req) string { s, _ := r.ctx.UserValue("id").(string); return s }

func (w *Web) tokenMissing(r *req, err error) bool {
	if errors.Is(err, identity.ErrNotFound) {
		w.render(r, fasthttp.StatusNotFound, "message", "No such token", map[string]string{"Text": "That token does not exist or is already revoked."}, "", "")
		return true
	}
	if err != nil {
		w.fail(r, err)
		return true
	}
	return false
}

func (w *Web) tokenRenew(r *req) {
	_, err := w.id.RenewToken(r.c, r.caller(), w.tokenID(r), ttlField(r))
	if !w.tokenMissing(r, err) {
		redirect(r.ctx, "/tokens?done=renewed")
	}
}

func (w *Web) tokenRotate(r *req) {
	secret, rec, err := w.id.RotateToken(r.c, r.caller(), w.tokenID(r), ttlField(r))
	if !w.tokenMissing(r, err) {
		w.showNewToken(r, secret, rec.Name, "Token rotated: the old secret no longer works. Copy the new one now: it is shown only once.")
	}
}

func (w *Web) tokenRevoke(r *req) {
	err := w.id.RevokeToken(r.c, r.caller(), w.tokenID(r))
	if !w.tokenMissing(r, err) {
		redirect(r.ctx, "/tokens?done=revoked")
	}
}
