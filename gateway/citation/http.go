package citation

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"toxgate/catalog/ckan"
	"toxgate/gateway/catalogclient"
	"toxgate/gateway/dcat"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
	"toxgate/plugins/contract"
)

// maxVersionArg bounds the `version` argument (an id or a name).
const maxVersionArg = 200

// Options are what the citation endpoints need from the gateway.
type Options struct {
	// Catalog runs package_show (and the version lookups) as the caller.
	Catalog *catalogclient.Client
	// Caller is the request's identity (token, else web session).
	Caller func(*fasthttp.RequestCtx) identity.Caller
	// SiteURL is the external base URL of the request (no trailing slash).
	SiteURL func(*fasthttp.RequestCtx) string
	// Registrar registers DOIs (nil: dataset_doi_register refuses).
	Registrar *Registrar
	// Log records registrations and DOIs registered but not recorded.
	Log *slog.Logger
}

// Handler serves citations over HTTP and as the dataset_citation action.
type Handler struct{ o Options }

// New makes the endpoints.
func New(o Options) *Handler { return &Handler{o: o} }

// Register adds GET /dataset/{id}/citation (format by ?format=, default
// text) and one path per format (/dataset/{id}/citation.bib, .ris, .json,
// .txt, /dataset/{id}/datacite.xml, .json); each takes ?version=.
func (h *Handler) Register(r *router.Router) {
	for _, f := range Formats {
		r.GET("/dataset/{id}/"+f.File, func(ctx *fasthttp.RequestCtx) { h.serve(ctx, f) })
	}
	r.GET("/dataset/{id}/citation", func(ctx *fasthttp.RequestCtx) {
		name := string(ctx.QueryArgs().Peek("format"))
		if name == "" {
			name = "text"
		}
		f, ok := Formats[name]
		if !ok {
			httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_format", "unknown citation format "+strconv.Quote(clipArg(name))+": use "+FormatNames(), "format")
			return
		}
		h.serve(ctx, f)
	})
}

// Action is the dataset_citation action: id (a dataset's id or name),
// format (default "text"), version (a version's id or name). Its result is
// {format, media_type, citation}: the citation as a string, or as JSON for
// the JSON formats.
func (h *Handler) Action() (contract.ActionSpec, func(*fasthttp.RequestCtx, string, identity.Caller)) {
	spec := contract.ActionSpec{Name: "dataset_citation", GET: true,
		Description: "How to cite a dataset or one of its versions (id, format: text|bibtex|ris|csl-json|datacite-json|datacite-xml, version)"}
	return spec, func(ctx *fasthttp.RequestCtx, action string, caller identity.Caller) {
		site := h.o.SiteURL(ctx)
		req := ckan.Request{Action: action, Method: string(ctx.Method()), ContentType: string(ctx.Request.Header.ContentType()),
			Query: string(ctx.QueryArgs().QueryString()), Body: ctx.PostBody(), SiteURL: site}
		resp := ckan.Serve(req, true, func(data map[string]any, anonymous bool) (any, error) {
			if anonymous {
				caller = identity.Caller{}
			}
			id, version := ckan.String(data, "id"), ckan.String(data, "version")
			if id == "" {
				return nil, ckan.FieldError("id", ckan.MsgMissing)
			}
			name := ckan.String(data, "format")
			if name == "" {
				name = "text"
			}
			f, ok := Formats[name]
			if !ok {
				return nil, ckan.FieldError("format", "unknown citation format; use "+FormatNames())
			}
			w, err := h.work(ctx, caller, site, id, version)
			if err != nil {
				return nil, err
			}
			out := map[string]any{"format": f.Name, "media_type": f.MediaType}
			body := f.Render(w)
			if strings.Contains(f.MediaType, "json") {
				out["citation"] = json.RawMessage(body)
			} else {
				out["citation"] = string(body)
			}
			return out, nil
		})
		ctx.SetStatusCode(resp.Status)
		ctx.SetContentType(resp.ContentType)
		ctx.SetBody(resp.Body)
	}
}

// serve answers one format of a dataset's (or version's) citation.
func (h *Handler) serve(ctx *fasthttp.RequestCtx, f Format) {
	id, _ := ctx.UserValue("id").(string)
	w, err := h.work(ctx, h.Caller(ctx), h.o.SiteURL(ctx), id, string(ctx.QueryArgs().Peek("version")))
	if err != nil {
		WriteError(ctx, err)
		return
	}
	ctx.SetContentType(f.MediaType)
	if ctx.QueryArgs().Has("download") {
		ctx.Response.Header.Set("Content-Disposition", `attachment; filename="`+w.Key+"."+strings.TrimPrefix(f.File[strings.IndexByte(f.File, '.'):], ".")+`"`)
	}
	ctx.SetBody(f.Render(w))
}

// WriteError answers a Lookup or Resolve error: a refusal with its status
// (a dataset or version the caller may not read is a 404), an unreachable
// catalog with 503.
func WriteError(ctx *fasthttp.RequestCtx, err error) {
	var ce *ckan.Error
	switch {
	case errors.As(err, &ce) && (ce.Status == fasthttp.StatusNotFound || ce.Status == fasthttp.StatusForbidden):
		httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", ce.Message, "")
	case errors.As(err, &ce):
		httpcore.WriteError(ctx, ce.Status, "bad_request", ce.Error(), "")
	default:
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", "the catalog is temporarily unavailable; please retry", "")
	}
}

// Caller is the request's identity (anonymous without Options.Caller).
func (h *Handler) Caller(ctx *fasthttp.RequestCtx) identity.Caller {
	if h.o.Caller == nil {
		return identity.Caller{}
	}
	return h.o.Caller(ctx)
}

// work reads the dataset (as of the version, when one is named) as the
// caller and builds its Work. A dataset the caller may not read is not
// found, as on its page.
func (h *Handler) work(ctx context.Context, caller identity.Caller, site, id, version string) (Work, error) {
	w, _, err := h.Resolve(ctx, caller, site, id, version)
	return w, err
}

// Resolve reads dataset id (as of version, when named) as the caller and
// returns its Work and the package it was built from; errors as Lookup.
func (h *Handler) Resolve(ctx context.Context, caller identity.Caller, site, id, version string) (Work, *dcat.Package, error) {
	pkg, v, err := h.Lookup(ctx, caller, site, id, version)
	if err != nil {
		return Work{}, nil, err
	}
	var status struct {
		SiteTitle string `json:"site_title"`
	}
	if err := h.o.Catalog.At(site).Do(context.WithoutCancel(ctx), caller.Identity, "status_show", map[string]any{}, &status); err != nil {
		return Work{}, nil, asCKAN(err, id)
	}
	return FromPackage(pkg, Site{Title: status.SiteTitle, URL: site}, v), pkg, nil
}

// Lookup reads dataset id as the caller, as of version when one is named
// (an id or a name; "" is the dataset now, and v is nil). Errors are
// *ckan.Error for refusals (a dataset or version the caller may not read
// is not found) and other errors when the catalog is unreachable.
func (h *Handler) Lookup(ctx context.Context, caller identity.Caller, site, id, version string) (pkg *dcat.Package, v *Version, err error) {
	if len(version) > maxVersionArg {
		return nil, nil, ckan.FieldError("version", "too long")
	}
	pkg = new(dcat.Package)
	if err := asCKAN(h.o.Catalog.At(site).Do(context.WithoutCancel(ctx), caller.Identity, "package_show", map[string]any{"id": id}, pkg), id); err != nil {
		return nil, nil, err
	}
	if version != "" {
		if v, err = h.version(ctx, caller, site, pkg, version); err != nil {
			return nil, nil, err
		}
	}
	return pkg, v, nil
}

// version reads a version of the dataset and the dataset as of it (into
// pkg).
func (h *Handler) version(ctx context.Context, caller identity.Caller, site string, pkg *dcat.Package, version string) (*Version, error) {
	c := h.o.Catalog.At(site)
	var ver struct {
		ID, Name string
		Created  string `json:"created"`
		DOI      string `json:"doi"`
	}
	if err := asCKAN(c.Do(context.WithoutCancel(ctx), caller.Identity, "dataset_version_show",
		map[string]any{"dataset": pkg.ID, "version": version}, &ver), version); err != nil {
		return nil, err
	}
	var asOf dcat.Package
	if err := asCKAN(c.Do(context.WithoutCancel(ctx), caller.Identity, "package_show",
		map[string]any{"id": pkg.ID, "version": ver.ID}, &asOf), pkg.Name); err != nil {
		return nil, err
	}
	*pkg = asOf
	return &Version{ID: ver.ID, Name: ver.Name, Created: parseTime(ver.Created), DOI: ver.DOI}, nil
}

// asCKAN turns a catalog client error into CKAN's: refusals keep their
// status, an unknown action (no versions in this catalog) is a 400, an
// unreachable catalog stays an error the caller answers 503 for.
func asCKAN(err error, what string) error {
	if err == nil {
		return nil
	}
	var ce *catalogclient.Error
	if errors.As(err, &ce) && ce.Err == nil {
		switch ce.Status {
		case fasthttp.StatusNotFound, fasthttp.StatusForbidden:
			return ckan.NotFound(clipArg(what))
		case fasthttp.StatusBadRequest:
			return ckan.BadRequest(ce.Error())
		default:
			return &ckan.Error{Status: ce.Status, Type: "Error", Message: ce.Error()}
		}
	}
	return err
}

func clipArg(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// SiteURL is the request's external base URL.
func (h *Handler) SiteURL(ctx *fasthttp.RequestCtx) string { return h.o.SiteURL(ctx) }

// Catalog is the catalog client the handler reads through.
func (h *Handler) Catalog() *catalogclient.Client { return h.o.Catalog }
