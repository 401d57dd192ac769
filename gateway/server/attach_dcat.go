package server

import (
	"fmt"

	"toxgate/internal/egress"

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
func (a *App) attachCitations() (*citation.Handler, error) {
	o := citation.Options{Catalog: a.catalog, Caller: a.pageCaller, SiteURL: a.siteURL, Log: a.log}
	if dc := a.cfg.DataCite; dc.RepositoryID != "" {
		pol, err := egress.New(egress.Options{Allow: a.cfg.Egress.Allow, MaxRedirects: a.cfg.Egress.MaxRedirects})
		if err != nil {
			return nil, fmt.Errorf("datacite: %w", err)
		}
		o.Registrar = &citation.Registrar{APIURL: dc.APIURL, RepositoryID: dc.RepositoryID, Password: dc.Password,
			Prefix: dc.Prefix, Timeout: dc.Timeout, HTTP: pol.Client(dc.Timeout)}
	}
	cite := citation.New(o)
	cite.Register(a.router)
	croissant.New(cite).Register(a.router)
	spec, handle := cite.Action()
	a.AddCoreAction(CoreAction{ActionSpec: spec, Handle: handle})
	spec, handle = cite.DOIAction()
	a.AddCoreAction(CoreAction{ActionSpec: spec, Handle: handle})
	return cite, nil
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
