package server

import (
	"github.com/valyala/fasthttp"

	"toxgate/gateway/citation"
	"toxgate/gateway/croissant"
	"toxgate/gateway/dcat"
	"toxgate/gateway/identity"
)

// newDCAT makes the DCAT endpoints (gateway/dcat): they read the catalog
// plugin through the same in-process calls as the web pages, as the
// request's caller (API token, else the web session, else anonymous).
func (a *App) newDCAT() *dcat.Handler {
	return dcat.New(dcat.Options{
		Catalog: a.catalog,
		Caller:  a.pageCaller,
		SiteURL: a.siteURL,
		PerPage: a.cfg.Catalog.DCATPerPage,
	})
}

// attachCitations serves how to cite each dataset and version
// (gateway/citation: /dataset/{id}/citation.bib and the other formats, the
// dataset_citation action) and its Croissant description
// (gateway/croissant: /dataset/{id}/croissant.jsonld), read as the
// request's caller like the DCAT endpoints.
func (a *App) attachCitations() *citation.Handler {
	cite := citation.New(citation.Options{Catalog: a.catalog, Caller: a.pageCaller, SiteURL: a.siteURL})
	cite.Register(a.router)
	croissant.New(cite).Register(a.router)
	spec, handle := cite.Action()
	a.AddCoreAction(CoreAction{ActionSpec: spec, Handle: handle})
	return cite
}

// pageCaller is the request's API token, else its web session, else
// anonymous: how the catalog's alternate forms (DCAT, citations) read.
func (a *App) pageCaller(ctx *fasthttp.RequestCtx) identity.Caller {
	c := a.Caller(ctx)
	if c.Anonymous() {
		c = a.sessionCaller(ctx)
	}
	return c
}
