package croissant

import (
	"context"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/citation"
)

// maxTables bounds the DataStore tables one document describes.
const maxTables = 100

// Handler serves /dataset/{id}/croissant.jsonld (?version= for a version).
type Handler struct{ cite *citation.Handler }

// New makes the endpoint; it reads datasets and versions the way the
// citations do (as the request's caller).
func New(cite *citation.Handler) *Handler { return &Handler{cite: cite} }

// Register adds GET /dataset/{id}/croissant.jsonld.
func (h *Handler) Register(r *router.Router) {
	r.GET("/dataset/{id}/croissant.jsonld", h.serve)
}

func (h *Handler) serve(ctx *fasthttp.RequestCtx) {
	id, _ := ctx.UserValue("id").(string)
	version := string(ctx.QueryArgs().Peek("version"))
	caller, site := h.cite.Caller(ctx), h.cite.SiteURL(ctx)
	w, pkg, err := h.cite.Resolve(ctx, caller, site, id, version)
	if err != nil {
		citation.WriteError(ctx, err)
		return
	}
	d := Doc{Package: pkg, Site: site, Publisher: w.Publisher, CiteAs: string(citation.BibTeX(w)),
		DatePublished: w.Issued.Format("2006-01-02")}
	if version != "" {
		d.Version = w.Version
	}
	for _, c := range w.Creators {
		d.Creators = append(d.Creators, Creator{Name: c.Name, Organization: c.Organization})
	}
	c := h.cite.Catalog().At(site)
	for _, r := range pkg.Resources {
		if !r.DatastoreActive || len(d.Tables) == maxTables {
			continue
		}
		t := Table{ResourceID: r.ID}
		args := map[string]any{"resource_id": r.ID}
		if version != "" {
			args["version"] = version
		}
		// A table that cannot be read now is left out; the file stays described.
		if err := c.Do(context.WithoutCancel(ctx), caller.Identity, "datastore_info", args, &t); err == nil {
			d.Tables = append(d.Tables, t)
		}
	}
	ctx.SetContentType("application/ld+json; charset=utf-8")
	ctx.SetBody(Render(d))
}
