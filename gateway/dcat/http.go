package dcat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/catalogclient"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
	"toxgate/gateway/rdf"
)

// Options are what the endpoints need from the gateway.
type Options struct {
	// Catalog runs the catalog actions the endpoints read, as the caller.
	Catalog *catalogclient.Client
	// Caller is the request's identity (token or web session; anonymous otherwise).
	Caller func(*fasthttp.RequestCtx) identity.Caller
	// SiteURL is the external base URL of the request (no trailing slash).
	SiteURL func(*fasthttp.RequestCtx) string
	// PerPage is the number of datasets per catalog page (default 100).
	PerPage int
}

// Handler serves the DCAT endpoints.
type Handler struct{ o Options }

// New makes the endpoints.
func New(o Options) *Handler {
	if o.PerPage <= 0 {
		o.PerPage = 100
	}
	return &Handler{o: o}
}

// format is one RDF serialisation.
type format struct {
	ext, mediaType string
	write          func(*rdf.Graph, *bytes.Buffer) error
}

var (
	turtle = format{"ttl", "text/turtle", func(g *rdf.Graph, b *bytes.Buffer) error { return g.WriteTurtle(b) }}
	n3     = format{"n3", "text/n3", turtle.write} // Turtle is a subset of N3
	jsonld = format{"jsonld", "application/ld+json", func(g *rdf.Graph, b *bytes.Buffer) error { return g.WriteJSONLD(b) }}
	rdfxml = format{"xml", "application/rdf+xml", func(g *rdf.Graph, b *bytes.Buffer) error { return g.WriteRDFXML(b) }}
	rdfext = format{"rdf", rdfxml.mediaType, rdfxml.write}
)

// byExt are the path extensions of ckanext-dcat (rdf: RDF/XML).
var byExt = map[string]format{"ttl": turtle, "n3": n3, "jsonld": jsonld, "xml": rdfxml, "rdf": rdfext}

// byMediaType are the media types content negotiation offers.
var byMediaType = map[string]format{
	"text/turtle": turtle, "application/x-turtle": turtle, "text/n3": n3,
	"application/ld+json": jsonld, "application/json": jsonld,
	"application/rdf+xml": rdfxml, "application/xml": rdfxml, "text/xml": rdfxml,
}

// Register adds GET and HEAD /catalog.{ext} and /catalog (format by
// ?format= or Accept).
func (h *Handler) Register(r *router.Router) {
	both := func(path string, handle fasthttp.RequestHandler) {
		r.GET(path, handle)
		r.HEAD(path, handle) // fasthttp sends the headers of the GET answer without its body
	}
	for ext, f := range byExt {
		both("/catalog."+ext, func(ctx *fasthttp.RequestCtx) { h.catalog(ctx, f) })
	}
	both("/catalog", func(ctx *fasthttp.RequestCtx) {
		if v := string(ctx.QueryArgs().Peek("format")); v != "" {
			f, ok := byExt[v]
			if !ok {
				f, ok = byMediaType[v]
			}
			if !ok {
				httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_format", "unknown format "+strconv.Quote(v)+": use ttl, n3, jsonld, xml or rdf", "format")
				return
			}
			h.catalog(ctx, f)
			return
		}
		f, ok := negotiate(string(ctx.Request.Header.Peek("Accept")), false)
		if !ok {
			httpcore.WriteError(ctx, fasthttp.StatusNotAcceptable, "not_acceptable",
				"the catalog is served as text/turtle, text/n3, application/ld+json or application/rdf+xml", "")
			return
		}
		h.catalog(ctx, f)
	})
}

// DatasetAs serves /dataset/{id}.{ext} (id holds the extension) and
// /dataset/{id} when the Accept header prefers an RDF type to HTML, and
// reports whether it did; otherwise the dataset's web page is served.
func (h *Handler) DatasetAs(ctx *fasthttp.RequestCtx, id string) bool {
	if i := strings.LastIndexByte(id, '.'); i > 0 {
		if f, ok := byExt[id[i+1:]]; ok {
			h.dataset(ctx, id[:i], f)
			return true
		}
	}
	if f, ok := negotiate(string(ctx.Request.Header.Peek("Accept")), true); ok {
		ctx.Response.Header.Add("Vary", "Accept")
		h.dataset(ctx, id, f)
		return true
	}
	return false
}

// negotiate picks the RDF format the Accept header prefers. With page set,
// an HTML page is on offer too and wins ties, a missing header and */*.
func negotiate(accept string, page bool) (format, bool) {
	if strings.TrimSpace(accept) == "" {
		return turtle, !page
	}
	best, bestQ, htmlQ := format{}, 0.0, -1.0
	for _, part := range strings.Split(accept, ",") {
		fields := strings.Split(part, ";")
		mt := strings.ToLower(strings.TrimSpace(fields[0]))
		q := 1.0
		for _, prm := range fields[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(prm), "q="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		switch mt {
		case "text/html", "application/xhtml+xml":
			htmlQ = max(htmlQ, q)
		case "*/*", "text/*":
			if page {
				htmlQ = max(htmlQ, q)
			} else if q > bestQ {
				best, bestQ = turtle, q
			}
		default:
			if f, ok := byMediaType[mt]; ok && q > bestQ {
				best, bestQ = f, q
			}
		}
	}
	if bestQ <= 0 || bestQ <= htmlQ {
		return format{}, false
	}
	return best, true
}

func (h *Handler) caller(ctx *fasthttp.RequestCtx) identity.Caller {
	if h.o.Caller == nil {
		return identity.Caller{}
	}
	return h.o.Caller(ctx)
}

// call runs a catalog action and decodes its result.
func (h *Handler) call(ctx *fasthttp.RequestCtx, site, action string, args map[string]any, out any) (status int, msg string) {
	// the plugin host bounds the call; a shutdown lets it finish
	err := h.o.Catalog.At(site).Do(context.WithoutCancel(ctx), h.caller(ctx).Identity, action, args, out)
	var ce *catalogclient.Error
	switch {
	case err == nil:
		return fasthttp.StatusOK, ""
	case errors.As(err, &ce) && ce.Err != nil:
		return fasthttp.StatusServiceUnavailable, "the catalog is temporarily unavailable; please retry"
	case errors.As(err, &ce):
		return ce.Status, ce.Error()
	default:
		return fasthttp.StatusBadGateway, err.Error()
	}
}

func (h *Handler) write(ctx *fasthttp.RequestCtx, g *rdf.Graph, f format) {
	var b bytes.Buffer
	if err := f.write(g, &b); err != nil {
		httpcore.WriteError(ctx, fasthttp.StatusInternalServerError, "internal", "serialising the graph: "+err.Error(), "")
		return
	}
	ctx.SetContentType(f.mediaType + "; charset=utf-8")
	ctx.SetBody(b.Bytes())
}

func (h *Handler) dataset(ctx *fasthttp.RequestCtx, id string, f format) {
	site := h.o.SiteURL(ctx)
	var pkg Package
	if st, msg := h.call(ctx, site, "package_show", map[string]any{"id": id}, &pkg); st != fasthttp.StatusOK {
		switch st {
		case fasthttp.StatusNotFound, fasthttp.StatusForbidden:
			// A dataset the caller may not read is "not found", as on the page.
			httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "no dataset "+strconv.Quote(id), "")
		default:
			httpcore.WriteError(ctx, max(st, 500), "unavailable", msg, "")
		}
		return
	}
	g := rdf.NewGraph(prefixes...)
	m := &mapper{g: g, site: site}
	d := m.addDataset(&pkg)
	// Its versions (a catalog without them, or a failed list, adds none).
	var versions []Version
	if st, _ := h.call(ctx, site, "dataset_version_list", map[string]any{"dataset": pkg.ID}, &versions); st == fasthttp.StatusOK {
		m.addVersions(d, &pkg, versions)
	}
	h.write(ctx, g, f)
}

// modifiedSince reads modified_since (an ISO 8601 date or date-time) as the
// lower bound of a metadata_modified range, in the index's format.
func modifiedSince(v string) (string, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC().Format("2006-01-02T15:04:05.000000Z"), true
		}
	}
	return "", false
}

func (h *Handler) catalog(ctx *fasthttp.RequestCtx, f format) {
	args := ctx.QueryArgs()
	page := 1
	if v := string(args.Peek("page")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_page", "page must be a positive integer, got "+strconv.Quote(v), "page")
			return
		}
		page = n
	}
	q, fq := strings.TrimSpace(string(args.Peek("q"))), strings.TrimSpace(string(args.Peek("fq")))
	since := string(args.Peek("modified_since"))
	if since != "" {
		lo, ok := modifiedSince(since)
		if !ok {
			httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_modified_since",
				"modified_since must be an ISO 8601 date or date-time (2024-07-24 or 2024-07-24T10:00:00Z), got "+strconv.Quote(since), "modified_since")
			return
		}
		rng := "metadata_modified:[" + lo + " TO *]"
		if fq != "" {
			fq = "(" + fq + ") AND " + rng
		} else {
			fq = rng
		}
	}
	if q == "" {
		q = "*:*"
	}
	per := h.o.PerPage
	if (page - 1) > 1_000_000/per {
		httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "page "+strconv.Itoa(page)+" is past the last page", "page")
		return
	}
	site := h.o.SiteURL(ctx)
	var res struct {
		Count   int       `json:"count"`
		Results []Package `json:"results"`
	}
	search := map[string]any{"q": q, "rows": per, "start": (page - 1) * per, "sort": "metadata_modified desc", "include_private": true}
	if fq != "" {
		search["fq"] = fq
	}
	if st, msg := h.call(ctx, site, "package_search", search, &res); st != fasthttp.StatusOK {
		if st < 500 {
			httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_query", msg, "")
		} else {
			httpcore.WriteError(ctx, st, "unavailable", msg, "")
		}
		return
	}
	last := max(1, (res.Count+per-1)/per)
	if page > last {
		httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", fmt.Sprintf("page %d is past the last page (%d)", page, last), "page")
		return
	}

	g := rdf.NewGraph(prefixes...)
	g.Triples = make([]rdf.Triple, 0, 16+40*len(res.Results)) // ~35 triples a dataset with 2 resources
	m := &mapper{g: g, site: site}
	cat := rdf.IRI(site + "/catalog")
	g.Add(cat, rdf.Type, p(nsDCAT, "Catalog"))
	g.Add(cat, p(nsDCT, "title"), rdf.Literal("toxgate catalog"))
	g.Add(cat, p(nsDCT, "description"), rdf.Literal("Datasets of the toxgate catalog at "+site))
	g.Add(cat, p(nsFOAF, "homepage"), rdf.IRI(site+"/dataset"))
	// DCAT-AP requires the catalog's publisher: the site itself.
	agent := rdf.IRI(site + "/")
	g.Add(cat, p(nsDCT, "publisher"), agent)
	g.Add(agent, rdf.Type, p(nsFOAF, "Agent"))
	g.Add(agent, p(nsFOAF, "name"), rdf.Literal("toxgate at "+site))
	g.Add(agent, p(nsFOAF, "homepage"), rdf.IRI(site+"/"))
	for i := range res.Results {
		g.Add(cat, p(nsDCAT, "dataset"), m.datasetURI(&res.Results[i]))
	}
	// Hydra paging as ckanext-dcat writes it: the current hydra:next, first,
	// last, previous and their older *Page names, as literals.
	pageURL := func(n int) string {
		v := url.Values{}
		for _, k := range []string{"q", "fq", "modified_since"} {
			if s := string(args.Peek(k)); s != "" {
				v.Set(k, s)
			}
		}
		v.Set("page", strconv.Itoa(n))
		return site + "/catalog." + f.ext + "?" + v.Encode()
	}
	pc := rdf.IRI(pageURL(page))
	g.Add(pc, rdf.Type, p(nsHydra, "PagedCollection"))
	g.Add(pc, p(nsHydra, "totalItems"), rdf.Typed(strconv.Itoa(res.Count), rdf.NSXSD+"integer"))
	g.Add(pc, p(nsHydra, "itemsPerPage"), rdf.Typed(strconv.Itoa(per), rdf.NSXSD+"integer"))
	link := func(name, old string, n int) {
		g.Add(pc, p(nsHydra, name), rdf.Literal(pageURL(n)))
		g.Add(pc, p(nsHydra, old), rdf.Literal(pageURL(n)))
	}
	link("first", "firstPage", 1)
	link("last", "lastPage", last)
	if page < last {
		link("next", "nextPage", page+1)
	}
	if page > 1 {
		link("previous", "previousPage", page-1)
	}
	for i := range res.Results {
		m.addDataset(&res.Results[i])
	}
	h.write(ctx, g, f)
}
