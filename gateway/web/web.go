// Package web serves the gateway's web platform: login, first-login
// e-mail verification and password change, logout, the dashboard, the API
// token page, the user administration pages, the catalog's pages at CKAN's
// paths (dataset search with facets, dataset, resource with preview,
// organizations, and the editing forms) and a page per model (card, input
// form, results). Pages are html/template with an embedded style sheet and
// one small script, plus a drawing script for molecules on pages that show
// SMILES (no external CDN; every page works without JavaScript);
// cookies are HttpOnly and SameSite, Secure behind TLS; every form carries a
// CSRF token. Catalog and model pages act through Backend with the session
// user's identity, under the same rules as the API. See README.md.
package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/catalogclient"
	"toxgate/gateway/identity"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/toxgate.css
var styleCSS []byte

//go:embed static/toxgate.js
var scriptJS []byte

//go:embed static/favicon.svg
var faviconSVG []byte

//go:embed static/chem.js
var chemJS []byte

// vendorFS holds the browser libraries make web-vendor copied from npm
// (static/vendor/tus.min.js: tus-js-client; static/vendor/openchemlib.js:
// OpenChemLib JS); a build without them serves none: the resource form
// uploads with its multipart form and SMILES show as text.
//
//go:embed static/vendor
var vendorFS embed.FS

// tusJS is tus-js-client's built file, or nil.
var tusJS, _ = vendorFS.ReadFile("static/vendor/tus.min.js")

// oclJS is OpenChemLib JS's built file (an ES module), or nil.
var oclJS, _ = vendorFS.ReadFile("static/vendor/openchemlib.js")

// Cookie names.
const (
	SessionCookie = "tg_session"
	csrfCookie    = "tg_csrf" // CSRF token of forms shown before login
)

// Model is a model on the dashboard.
type Model struct {
	Name   string
	Title  string
	Status string // "ready" or "failed"
	Paths  []string
}

// Options configure the web pages.
type Options struct {
	Identity *identity.Service
	Logger   *slog.Logger
	// ClientIP is a request's client address, as the login throttle
	// counts it (nil: the TCP peer).
	ClientIP func(*fasthttp.RequestCtx) string
	// PublicURL is the external base URL for links in e-mails (the
	// gateway passes server.SiteURL; empty: links are relative).
	PublicURL string
	// SecureCookies marks cookies Secure (also done for TLS requests).
	SecureCookies bool
	// SessionTTL is the session cookie lifetime.
	SessionTTL time.Duration
	// ModelsOpen is true when model endpoints need no token (modules.require_token false).
	ModelsOpen bool
	// Models lists the model index for the dashboard (nil: none).
	Models func(ctx context.Context) []Model
	// DocsURL is the interactive API documentation (default /docs).
	DocsURL string
	// Catalog runs the catalog pages' actions (nil: those pages answer 503).
	Catalog *catalogclient.Client
	// Backend serves uploads, previews and the model pages (nil: those
	// pages answer 503).
	Backend Backend
	// Jobs serves the scoring-job pages (nil: they answer 503).
	Jobs Jobs
	// MaxUploadBytes is the largest resource file (catalog.max_resource_bytes), shown on the form.
	MaxUploadBytes int64
	// DatasetAs, when set, may serve GET /dataset/{id} in another form (the
	// DCAT serialisations at /dataset/{name}.ttl and by Accept) and reports
	// whether it did; otherwise the page is served.
	DatasetAs func(ctx *fasthttp.RequestCtx, id string) bool
	// Cite, when set, returns how to cite dataset id as the page's caller
	// sees it (a reference in text), or "" when there is none; the page
	// then links the citation formats and the Croissant description.
	Cite func(ctx *fasthttp.RequestCtx, id string) string
}

// Web is the set of pages.
type Web struct {
	o     Options
	id    *identity.Service
	log   *slog.Logger
	pages map[string]*template.Template
}

// New parses the templates.
func New(o Options) (*Web, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.DocsURL == "" {
		o.DocsURL = "/docs"
	}
	w := &Web{o: o, id: o.Identity, log: o.Logger, pages: map[string]*template.Template{}}
	funcs := template.FuncMap{
		"tusJS": func() bool { return tusJS != nil },
		// chemJS: the pages can draw molecules (OpenChemLib is embedded).
		"chemJS":     func() bool { return oclJS != nil },
		"depict":     depictAttrs,
		"isSMILES":   smilesColumn,
		"depictable": depictable,
		"structure":  isStructureField,
		"when": func(t *time.Time) string {
			if t == nil {
				return "never"
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		},
		"date":        func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"has":         func(list []string, s string) bool { return contains(list, s) },
		"join":        strings.Join,
		"trunc":       truncate,
		"bytes":       humanBytes,
		"stamp":       stamp,
		"md":          markdown,
		"plain":       plainText,
		"resourceURL": resourceURL,
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" || base == "partials" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", n)
		if err != nil {
			return nil, err
		}
		w.pages[base] = t
	}
	return w, nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// Register adds the pages to r.
func (w *Web) Register(r *router.Router) {
	r.GET("/", w.root)
	r.GET("/static/toxgate.css", func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/css; charset=utf-8")
		ctx.Response.Header.Set("Cache-Control", "public, max-age=3600")
		ctx.SetBody(styleCSS)
	})
	static := func(path, ctype string, body []byte) {
		r.GET(path, func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType(ctype)
			ctx.Response.Header.Set("Cache-Control", "public, max-age=3600")
			ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
			ctx.SetBody(body)
		})
	}
	static("/static/toxgate.js", "text/javascript; charset=utf-8", scriptJS)
	if tusJS != nil {
		static("/static/vendor/tus.min.js", "text/javascript; charset=utf-8", tusJS)
	}
	if oclJS != nil {
		r.GET("/static/vendor/openchemlib.js", gzipStatic("text/javascript; charset=utf-8", oclJS))
		static("/static/chem.js", "text/javascript; charset=utf-8", chemJS)
	}
	static("/favicon.svg", "image/svg+xml", faviconSVG)
	static("/favicon.ico", "image/svg+xml", faviconSVG)
	w.registerCatalog(r)
	r.GET("/login", w.loginPage)
	r.POST("/login", w.loginSubmit)
	r.POST("/logout", w.logout)
	r.GET("/verify", w.verifyPage)
	r.POST("/verify", w.verifySubmit)
	r.GET("/welcome", w.auth(true, w.welcome))
	r.POST("/welcome/resend", w.auth(true, w.resend))
	r.GET("/password", w.auth(true, w.passwordPage))
	r.POST("/password", w.auth(true, w.passwordSubmit))
	r.GET("/dashboard", w.auth(false, w.dashboard))
	r.GET("/tokens", w.auth(false, w.tokensPage))
	r.POST("/tokens", w.auth(false, w.tokenCreate))
	r.POST("/tokens/{id}/renew", w.auth(false, w.tokenRenew))
	r.POST("/tokens/{id}/rotate", w.auth(false, w.tokenRotate))
	r.POST("/tokens/{id}/revoke", w.auth(false, w.tokenRevoke))
	r.GET("/jobs/{id}/progress", w.jobProgress)
	r.POST("/jobs/{id}/cancel", w.jobsUser(w.jobCancel))
	r.GET("/admin/users", w.admin(w.adminUsers))
	r.POST("/admin/users", w.admin(w.adminCreate))
	r.GET("/admin/users/{name}", w.admin(w.adminUser))
	r.POST("/admin/users/{name}/roles", w.admin(w.adminRoles))
	r.POST("/admin/users/{name}/disable", w.admin(w.adminDisable))
	r.POST("/admin/users/{name}/enable", w.admin(w.adminEnable))
	r.POST("/admin/users/{name}/password", w.admin(w.adminResetPassword))
}

// req is one page request with its session.
type req struct {
	ctx    *fasthttp.RequestCtx
	c      context.Context
	sess   *identity.Session
	cookie string
	user   *identity.User
}

// caller is the session's user as a Caller.
func (r *req) caller() identity.Caller { return r.user.Caller("session") }

// view is what every template gets.
type view struct {
	Title   string
	User    *identity.User
	CSRF    string
	Flash   string
	Error   string
	Data    any
	DocsURL string
	// Refresh reloads the page every few seconds when scripts are off
	// (a running job's progress).
	Refresh bool
	// Alternates are the page's other representations (DCAT).
	Alternates []Alternate
}

func (w *Web) render(r *req, status int, page, title string, data any, flash, errMsg string) {
	w.renderView(r, status, page, view{Title: title, Data: data, Flash: flash, Error: errMsg})
}

// renderRefresh renders a page that reloads itself without scripts while
// refresh is true.
func (w *Web) renderRefresh(r *req, page, title string, data any, refresh bool) {
	w.renderView(r, fasthttp.StatusOK, page, view{Title: title, Data: data, Refresh: refresh})
}

func (w *Web) renderView(r *req, status int, page string, v view) {
	v.DocsURL = w.o.DocsURL
	v.Alternates = w.alternates(page, v.Data)
	if r.user != nil && r.sess != nil {
		v.User = r.user
	}
	v.CSRF = w.csrfToken(r)
	var buf bytes.Buffer
	t, ok := w.pages[page]
	if !ok {
		w.log.Error("web: no template", "page", page)
		r.ctx.Error("internal error", fasthttp.StatusInternalServerError)
		return
	}
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		w.log.Error("web: render", "page", page, "err", err)
		r.ctx.Error("internal error", fasthttp.StatusInternalServerError)
		return
	}
	securityHeaders(r.ctx)
	r.ctx.SetStatusCode(status)
	r.ctx.SetContentType("text/html; charset=utf-8")
	r.ctx.SetBody(buf.Bytes())
}

func securityHeaders(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

func redirect(ctx *fasthttp.RequestCtx, to string) {
	securityHeaders(ctx)
	ctx.Response.Header.Set("Location", to)
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
}

// secure reports whether cookies must be Secure.
func (w *Web) secure(ctx *fasthttp.RequestCtx) bool {
	return w.o.SecureCookies || ctx.IsTLS() || strings.EqualFold(string(ctx.Request.Header.Peek("X-Forwarded-Proto")), "https")
}

func (w *Web) setCookie(ctx *fasthttp.RequestCtx, name, value string, maxAge time.Duration, strict bool) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(name)
	c.SetValue(value)
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSecure(w.secure(ctx))
	if strict {
		c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	} else {
		c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	}
	if maxAge < 0 {
		c.SetExpire(fasthttp.CookieExpireDelete)
		c.SetMaxAge(-1)
	} else if maxAge > 0 {
		c.SetMaxAge(int(maxAge / time.Second))
	}
	ctx.Response.Header.SetCookie(c)
}

// load reads the session of the request, if any.
func (w *Web) load(ctx *fasthttp.RequestCtx) *req {
	r := &req{ctx: ctx, c: context.Background()}
	r.cookie = string(ctx.Request.Header.Cookie(SessionCookie))
	if r.cookie != "" {
		sess, u, err := w.id.SessionUser(r.c, r.cookie)
		if err == nil {
			r.sess, r.user = sess, u
		} else if !errors.Is(err, identity.ErrNotFound) {
			w.log.Error("web: session", "err", err)
		}
	}
	return r
}

// csrfToken is the session's CSRF token, or for a visitor without a session
// a random token kept in a SameSite=Strict cookie (double submit).
func (w *Web) csrfToken(r *req) string {
	if r.sess != nil {
		return r.sess.CSRF
	}
	if v := string(r.ctx.Request.Header.Cookie(csrfCookie)); len(v) == 64 {
		return v
	}
	if v := string(r.ctx.Response.Header.PeekCookie(csrfCookie)); v != "" {
		return cookieValue(v)
	}
	tok := identity.RandomToken()
	w.setCookie(r.ctx, csrfCookie, tok, 0, true)
	return tok
}

// cookieValue extracts the value from a Set-Cookie header value.
func cookieValue(setCookie string) string {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	if err := c.Parse(setCookie); err != nil {
		return ""
	}
	return string(c.Value())
}

// csrfOK checks the form's csrf field.
func (w *Web) csrfOK(r *req) bool {
	got := formValue(r.ctx, "csrf")
	if r.sess != nil {
		return identity.CheckCSRF(r.sess.CSRF, got)
	}
	return identity.CheckCSRF(string(r.ctx.Request.Header.Cookie(csrfCookie)), got)
}

func (w *Web) badCSRF(r *req) {
	w.render(r, fasthttp.StatusForbidden, "message", "Form expired", map[string]string{
		"Text": "The form was missing its security token or it did not match. Go back, reload the page and try again.",
	}, "", "Invalid or missing CSRF token.")
}

// auth wraps a page that needs a session. Pages with firstLogin true are
// reachable before the first login is finished; every other page sends a
// pending user to /welcome. POSTs must carry the session's CSRF token.
func (w *Web) auth(firstLogin bool, h func(*req)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		r := w.load(ctx)
		if r.sess == nil {
			if r.cookie != "" {
				w.setCookie(ctx, SessionCookie, "", -1, false)
			}
			next := string(ctx.Path())
			if ctx.IsGet() {
				redirect(ctx, "/login?next="+url.QueryEscape(next))
			} else {
				redirect(ctx, "/login")
			}
			return
		}
		if !firstLogin && !r.user.FirstLoginDone() {
			redirect(ctx, "/welcome")
			return
		}
		if ctx.IsPost() && !w.csrfOK(r) {
			w.badCSRF(r)
			return
		}
		h(r)
	}
}

// admin wraps a page for sysadmins.
func (w *Web) admin(h func(*req)) fasthttp.RequestHandler {
	return w.auth(false, func(r *req) {
		if !r.user.Sysadmin {
			w.render(r, fasthttp.StatusForbidden, "message", "Not allowed", map[string]string{"Text": "This page is for sysadmins."}, "", "")
			return
		}
		h(r)
	})
}

// baseURL is the site's external URL (Options.PublicURL), for links in
// e-mails; never taken from the request's Host header.
func (w *Web) baseURL(*fasthttp.RequestCtx) string {
	return strings.TrimRight(w.o.PublicURL, "/")
}

// afterLogin is where a login without a usable next parameter leads.
const afterLogin = "/dashboard"

// maxNextBytes bounds the next parameter a login follows.
const maxNextBytes = 2048

// safeNext is the redirect target for a login's next parameter: next when
// it is a path of this site (a "/" not followed by "/" or "\", no scheme,
// no host, no user info), made only of visible ASCII (no control
// character, white space or backslash, which browsers drop or read as "/"
// so that "/\t/evil.example" means "//evil.example"); afterLogin otherwise.
func safeNext(next string) string {
	if next == "" || len(next) > maxNextBytes || next[0] != '/' {
		return afterLogin
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return afterLogin
		}
	}
	if len(next) > 1 && next[1] == '/' {
		return afterLogin
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		strings.HasPrefix(u.Path, "//") || strings.HasPrefix(u.Path, "/\\") {
		return afterLogin
	}
	return next
}

func form(ctx *fasthttp.RequestCtx, key string) string {
	return strings.TrimSpace(string(ctx.PostArgs().Peek(key)))
}
