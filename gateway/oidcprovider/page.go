package oidcprovider

import (
	"bytes"
	"html/template"

	"github.com/valyala/fasthttp"
)

// pageTemplate is the provider's one page: why a sign-in cannot go on.
var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · toxgate</title><link rel="stylesheet" href="/static/toxgate.css"></head>
<body><main><div class="card narrow" id="provider-message"><h1>{{.Title}}</h1><p>{{.Text}}</p><p><a href="/dashboard">Your toxgate dashboard</a></p></div></main></body></html>
`))

// continueTemplate moves the browser on to the next step of a sign-in.
var continueTemplate = template.Must(template.New("continue").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={{.URL}}">
<title>Signing in · toxgate</title><link rel="stylesheet" href="/static/toxgate.css"></head>
<body><main><div class="card narrow"><h1>Signing in to {{.Client}}</h1><p><a id="continue" href="{{.URL}}">Continue</a></p></div></main></body></html>
`))

// continuePage answers with a page that moves the browser to next (a URL
// the provider made) at once.
func (p *Provider) continuePage(ctx *fasthttp.RequestCtx, client, next string) {
	var b bytes.Buffer
	_ = continueTemplate.Execute(&b, struct{ Client, URL string }{client, next})
	securityHeaders(ctx)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetBody(b.Bytes())
}

// page answers with a short HTML page.
func (p *Provider) page(ctx *fasthttp.RequestCtx, status int, title, text string) {
	var b bytes.Buffer
	_ = pageTemplate.Execute(&b, struct{ Title, Text string }{title, text})
	securityHeaders(ctx)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetStatusCode(status)
	ctx.SetBody(b.Bytes())
}

// redirect sends the browser to a path or URL the provider made (never one
// from the request).
func redirect(ctx *fasthttp.RequestCtx, to string) {
	securityHeaders(ctx)
	ctx.Response.Header.Set("Location", to)
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
}

func securityHeaders(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
}
