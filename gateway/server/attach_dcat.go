package server

import (
	"github.com/valyala/fasthttp"

	"toxgate/gateway/dcat"
	"toxgate/gateway/identity"
)

// newDCAT makes the DCAT endpoints (gateway/dcat): they read the catalog
// plugin through the same in-process calls as the web pages, as the
// request's caller (API token, else the web session, else anonymous).
func (a *App) newDCAT() *dcat.Handler {
	return dcat.New(dcat.Options{
		Catalog: a.catalog,
		Caller: func(ctx *fasthttp.RequestCtx) identity.Caller {
			c := a.Caller(ctx)
			if c.Anonymous() {
				c = a.sessionCaller(ctx)
			}
			return c
		},
		SiteURL: a.siteURL,
		PerPage: a.cfg.Catalog.DCATPerPage,
	})
}
