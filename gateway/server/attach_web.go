package server

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/citation"
	"toxgate/gateway/filehttp"
	"toxgate/gateway/identity"
	"toxgate/gateway/modulehost"
	"toxgate/gateway/web"
	"toxgate/plugins/contract"
)

// attachWeb makes the web pages and the DCAT endpoints, the last part:
// they read the catalog through its client, the files through the file
// routes, the models through the module host and the jobs through the jobs
// service, all made before them.
func (a *App) attachWeb(context.Context) error {
	cfg := a.cfg
	rdfEndpoints := a.newDCAT()
	rdfEndpoints.Register(a.router)
	cite, err := a.attachCitations()
	if err != nil {
		return err
	}
	w, err := web.New(web.Options{
		Identity: a.identity, Logger: a.log, PublicURL: SiteURL(cfg.Server.PublicURL, cfg.Server.Addr), SecureCookies: cfg.Auth.SecureCookies,
		SessionTTL: cfg.Auth.SessionTTL, ModelsOpen: !cfg.Modules.RequireToken, Models: a.modelIndex,
		Catalog: a.catalog, Backend: webBackend{a: a, files: a.files, modules: a.modules}, Jobs: webJobs{svc: a.jobs},
		MaxUploadBytes: int64(cfg.Catalog.MaxResourceBytes), DatasetAs: rdfEndpoints.DatasetAs, ClientIP: a.ClientIP,
		Cite: func(ctx *fasthttp.RequestCtx, id string) string {
			w, _, err := cite.Resolve(ctx, a.pageCaller(ctx), a.siteURL(ctx), id, "")
			if err != nil {
				return ""
			}
			return citation.Text(w)
		},
	})
	if err != nil {
		return fmt.Errorf("web pages: %w", err)
	}
	w.Register(a.router)
	a.pages = w
	return nil
}

// webBackend gives the web pages the file routes, in-process requests
// through the router and the module host, each called with the page
// user's identity.
type webBackend struct {
	a       *App // the router and the model callers' weights
	files   *filehttp.Handler
	modules *modulehost.Host
}

func pluginIdentity(c identity.Caller) contract.Identity {
	return c.Identity
}

// Upload streams a multipart resource action into the file store.
func (b webBackend) Upload(ctx *fasthttp.RequestCtx, action string, caller identity.Caller) {
	b.files.Upload(ctx, action, pluginIdentity(caller))
}

// Attach runs a resource action with a finished resumable upload.
func (b webBackend) Attach(ctx *fasthttp.RequestCtx, action string, caller identity.Caller, body []byte, ref string) {
	b.files.Attach(ctx, action, pluginIdentity(caller), "application/x-www-form-urlencoded", body, ref)
}

// Get serves a GET in-process through the router (the download route for
// previews), so the route's own authorization applies to the given headers.
func (b webBackend) Get(path string, header map[string]string, resp *fasthttp.Response) {
	var rc fasthttp.RequestCtx
	rc.Init2(nopConn{}, fasthttpLogger{b.a.log}, false)
	rc.Request.SetRequestURI(path)
	rc.Request.Header.SetMethod(fasthttp.MethodGet)
	for k, v := range header {
		rc.Request.Header.Set(k, v)
	}
	b.a.router.Handler(&rc)
	rc.Response.CopyTo(resp)
	resp.SetBody(rc.Response.Body()) // reads a streamed body to its end and closes it
}

// Model returns a loaded model's index entry.
func (b webBackend) Model(name string) (web.ModelInfo, bool) {
	for _, m := range b.modules.Models() {
		if m.Name != name || m.Status != "ready" {
			continue
		}
		wm := web.ModelInfo{Name: m.Name, Version: m.Version, Title: m.Title, Description: m.Description, SHA256: m.SHA256}
		if c := m.Card; c != nil {
			wm.Card = web.ModelCard{Summary: c.Summary, IntendedUse: c.IntendedUse, Data: c.Data, Method: c.Method,
				Validation: c.Validation, Limitations: c.Limitations, License: c.License, Units: c.Units,
				References: c.References, Authors: c.Authors}
		}
		for _, r := range m.Routes {
			wr := web.ModelRoute{Path: r.Path, Summary: r.Summary, InputSchema: r.InputSchema, Example: r.Example}
			if r.Output.Table != nil {
				wr.Table = r.Output.Table.Field
			}
			wm.Routes = append(wm.Routes, wr)
		}
		return wm, true
	}
	return web.ModelInfo{}, false
}

// RunModel calls a model path through the module host as the caller,
// sharing the caller's fair share of the module's instances (and the
// caller's running-call cap) with the caller's API calls.
func (b webBackend) RunModel(path string, body []byte, accept string, caller identity.Caller, remoteIP string) (int, string, []byte) {
	var rc fasthttp.RequestCtx
	rc.Init2(nopConn{}, fasthttpLogger{b.a.log}, false)
	rc.Request.SetRequestURI(path)
	rc.Request.Header.SetMethod(fasthttp.MethodPost)
	rc.Request.Header.SetContentType("application/json")
	rc.Request.Header.Set("Accept", accept)
	rc.Request.SetBody(body)
	if !b.modules.ServeModelAs(&rc, b.a.modelCaller(caller, remoteIP)) {
		return fasthttp.StatusNotFound, "application/json", []byte(`{"error":{"code":"not_found","message":"no model serves ` + path + `"}}`)
	}
	return rc.Response.StatusCode(), string(rc.Response.Header.ContentType()), append([]byte(nil), rc.Response.Body()...)
}

// nopConn is the connection of an in-process request: deadlines are
// accepted and ignored, nothing is read or written.
type nopConn struct{}

func (nopConn) Read([]byte) (int, error)         { return 0, net.ErrClosed }
func (nopConn) Write(p []byte) (int, error)      { return len(p), nil }
func (nopConn) Close() error                     { return nil }
func (nopConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
func (nopConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
func (nopConn) SetDeadline(time.Time) error      { return nil }
func (nopConn) SetReadDeadline(time.Time) error  { return nil }
func (nopConn) SetWriteDeadline(time.Time) error { return nil }
