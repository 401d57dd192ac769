package oidcprovider

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/url"
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
)

// ClientsPagePath is the sysadmins' page of registered clients.
const ClientsPagePath = "/admin/clients"

var clientsPage = template.Must(template.New("clients").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Single sign-on clients · toxgate</title><link rel="stylesheet" href="/static/toxgate.css"></head>
<body><main>
<p><a href="/dashboard">Dashboard</a> · <a href="/admin/users">Users</a></p>
<h1>Single sign-on clients</h1>
<p>Issuer <code id="issuer">{{.Issuer}}</code> (discovery at <code>{{.Issuer}}/.well-known/openid-configuration</code>).</p>
{{if .Error}}<div class="card error" id="client-error">{{.Error}}</div>{{end}}
{{if .Created}}<div class="card" id="created-client"><p>Client <strong>{{.Created.ID}}</strong> registered.
{{if .Secret}}Its secret, shown only this once: <code class="secret" id="client-secret">{{.Secret}}</code>{{else}}A public client: no secret, PKCE required.{{end}}</p></div>{{end}}
<div class="card">
<h2>Register a client</h2>
<form method="post" action="/admin/clients" id="create-client-form">
  <input type="hidden" name="csrf" value="{{.CSRF}}">
  <label for="client-name">Name (the client_id)</label><input type="text" id="client-name" name="name" required pattern="[a-z0-9][a-z0-9_\-]{1,63}">
  <label for="client-redirects">Redirect URIs (one a line)</label><textarea id="client-redirects" name="redirect_uris" rows="3" required></textarea>
  <label for="client-logouts">Post-logout redirect URIs (one a line)</label><textarea id="client-logouts" name="post_logout_redirect_uris" rows="2"></textarea>
  <label><input type="checkbox" name="public" value="1" id="client-public"> Public client (no secret, PKCE required)</label>
  <label>Only users with one of these roles may sign in (none: every user)</label>
  <div class="inline">{{range .Roles}}<label><input type="checkbox" name="roles" value="{{.}}" id="client-role-{{.}}"> {{.}}</label>{{end}}</div>
  <div><button type="submit" id="create-client">Register</button></div>
</form>
</div>
<table id="clients">
<tr><th>Client</th><th>Type</th><th>Roles</th><th>Redirect URIs</th><th></th></tr>
{{range .Clients}}<tr data-client="{{.ID}}"><td>{{.ID}}</td><td>{{if .Public}}public{{else}}confidential{{end}}</td>
<td>{{range .Roles}}<span class="pill">{{.}}</span>{{end}}</td><td>{{range .RedirectURIs}}<code>{{.}}</code><br>{{end}}</td>
<td><form method="post" action="/admin/clients/{{.ID}}/delete"><input type="hidden" name="csrf" value="{{$.CSRF}}"><button type="submit" class="revoke">Delete</button></form></td></tr>{{end}}
</table>
</main></body></html>
`))

type clientsPageData struct {
	Issuer, CSRF, Error, Secret string
	Created                     *Client
	Roles                       []string
	Clients                     []*Client
}

// RegisterAdminPage adds the sysadmins' clients page (session and CSRF as
// the other web pages).
func (p *Provider) RegisterAdminPage(r *router.Router) {
	r.GET(ClientsPagePath, p.pageAuth(p.clientsPage))
	r.POST(ClientsPagePath, p.pageAuth(p.clientsCreate))
	r.POST(ClientsPagePath+"/{id}/delete", p.pageAuth(p.clientsDelete))
}

// pageAuth runs h for a sysadmin's session (and, on POST, a matching CSRF
// token); others are sent to the login or told the page is for sysadmins.
func (p *Provider) pageAuth(h func(*fasthttp.RequestCtx, context.Context, *identity.Session, *identity.User)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.o.Timeout)
		defer cancel()
		sess, u, err := p.o.Identity.SessionUser(cctx, string(ctx.Request.Header.Cookie(p.o.SessionCookie)))
		switch {
		case errors.Is(err, identity.ErrNotFound) || err == nil && !u.FirstLoginDone():
			redirect(ctx, "/login?next="+url.QueryEscape(ClientsPagePath))
			return
		case err != nil:
			p.fail(ctx, err)
			return
		case !u.Sysadmin:
			p.page(ctx, fasthttp.StatusForbidden, "Not allowed", "This page is for sysadmins.")
			return
		case ctx.IsPost() && !identity.CheckCSRF(sess.CSRF, string(ctx.PostArgs().Peek("csrf"))):
			p.page(ctx, fasthttp.StatusForbidden, "Form expired", "The form was missing its security token or it did not match. Go back, reload the page and try again.")
			return
		}
		h(ctx, cctx, sess, u)
	}
}

func (p *Provider) renderClients(ctx *fasthttp.RequestCtx, cctx context.Context, sess *identity.Session, d clientsPageData, status int) {
	cls, err := p.st.clients.list(cctx)
	if err != nil {
		p.fail(ctx, err)
		return
	}
	d.Issuer, d.CSRF, d.Roles, d.Clients = p.issuer, sess.CSRF, p.o.Identity.Roles(), cls
	var b bytes.Buffer
	if err := clientsPage.Execute(&b, d); err != nil {
		p.fail(ctx, err)
		return
	}
	securityHeaders(ctx)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetStatusCode(status)
	ctx.SetBody(b.Bytes())
}

func (p *Provider) clientsPage(ctx *fasthttp.RequestCtx, cctx context.Context, sess *identity.Session, _ *identity.User) {
	p.renderClients(ctx, cctx, sess, clientsPageData{}, fasthttp.StatusOK)
}

// lines splits a textarea into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (p *Provider) clientsCreate(ctx *fasthttp.RequestCtx, cctx context.Context, sess *identity.Session, u *identity.User) {
	args := ctx.PostArgs()
	in := NewClient{Name: string(args.Peek("name")), RedirectURIs: lines(string(args.Peek("redirect_uris"))),
		PostLogoutRedirectURIs: lines(string(args.Peek("post_logout_redirect_uris"))), Public: string(args.Peek("public")) == "1"}
	for _, r := range args.PeekMulti("roles") {
		in.Roles = append(in.Roles, string(r))
	}
	cl, secret, err := p.CreateClient(cctx, in, u.Name)
	var verr *ValidationError
	switch {
	case errors.As(err, &verr):
		p.renderClients(ctx, cctx, sess, clientsPageData{Error: verr.Error()}, fasthttp.StatusBadRequest)
	case errors.Is(err, ErrClientExists), errors.Is(err, ErrTooManyClients):
		p.renderClients(ctx, cctx, sess, clientsPageData{Error: err.Error()}, fasthttp.StatusConflict)
	case err != nil:
		p.fail(ctx, err)
	default:
		p.renderClients(ctx, cctx, sess, clientsPageData{Created: cl, Secret: secret}, fasthttp.StatusOK)
	}
}

func (p *Provider) clientsDelete(ctx *fasthttp.RequestCtx, cctx context.Context, _ *identity.Session, u *identity.User) {
	id, _ := ctx.UserValue("id").(string)
	err := p.st.clients.remove(cctx, id)
	if err == nil {
		err = p.st.revokeClient(cctx, id)
	}
	if err != nil && !errors.Is(err, ErrNoClient) {
		p.fail(ctx, err)
		return
	}
	if err == nil {
		p.o.Logger.Info("oidc provider: client deleted", "client", id, "by", u.Name)
	}
	redirect(ctx, ClientsPagePath)
}
