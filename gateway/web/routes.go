package web

import (
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// registerCatalog adds the catalog pages at CKAN's paths. They share the
// tree with the download route /dataset/{id}/resource/{resource_id}/download
// (the gateway's), hence the same parameter names.
func (w *Web) registerCatalog(r *router.Router) {
	r.GET("/dataset", w.page(w.datasetSearch))
	r.GET("/dataset/new", w.auth(false, w.datasetNew))
	r.POST("/dataset/new", w.auth(false, w.datasetCreate))
	r.GET("/dataset/edit/{id}", w.auth(false, w.datasetEdit))
	r.POST("/dataset/edit/{id}", w.auth(false, w.datasetUpdate))
	r.POST("/dataset/delete/{id}", w.auth(false, w.datasetDelete))
	r.GET("/dataset/{id}", w.datasetOrAlternate(w.page(w.datasetPage)))
	r.GET("/dataset/{id}/versions/diff", w.page(w.versionDiffPage))
	r.GET("/dataset/{id}/resource/new", w.auth(false, w.resourceNew))
	r.POST("/dataset/{id}/resource/new", w.resourceCreate)
	r.GET("/dataset/{id}/resource/{resource_id}", w.page(w.resourcePage))
	r.POST("/dataset/{id}/resource/{resource_id}/delete", w.auth(false, w.resourceDelete))
	r.POST("/dataset/{id}/resource/{resource_id}/score", w.jobsUser(w.resourceScore))
	r.GET("/organization", w.page(w.orgListPage("organization")))
	r.GET("/organization/{id}", w.page(w.orgPage("organization")))
	r.GET("/group", w.page(w.orgListPage("group")))
	r.GET("/group/{id}", w.page(w.orgPage("group")))
	r.POST("/models/{name}/run", w.page(w.modelRun))
}

// datasetOrAlternate lets Options.DatasetAs serve /dataset/{id} first.
func (w *Web) datasetOrAlternate(page fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if w.o.DatasetAs != nil {
			if id, _ := ctx.UserValue("id").(string); w.o.DatasetAs(ctx, id) {
				return
			}
		}
		page(ctx)
	}
}

// page wraps a page open to everyone: the session is read when there is one.
func (w *Web) page(h func(*req)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		r := w.load(ctx)
		if ctx.IsPost() && !w.csrfOK(r) {
			w.badCSRF(r)
			return
		}
		h(r)
	}
}

// truncate shortens s to n characters at a word boundary.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)[:n]
	out := string(rs)
	if i := strings.LastIndexByte(out, ' '); i > n/2 {
		out = out[:i]
	}
	return out + "…"
}

// humanBytes formats a size (a *int64 or an int64).
func humanBytes(v any) string {
	var n int64
	switch x := v.(type) {
	case *int64:
		if x == nil {
			return ""
		}
		n = *x
	case int64:
		n = x
	case int:
		n = int64(x)
	}
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, suffix := float64(n), []string{"KiB", "MiB", "GiB", "TiB"}
	i := -1
	for f >= unit && i < len(suffix)-1 {
		f /= unit
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + suffix[i]
}

// stamp formats a CKAN timestamp (ISO 8601 without zone, UTC).
func stamp(s string) string {
	for _, layout := range []string{"2006-01-02T15:04:05.999999", time.RFC3339Nano, "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format("2006-01-02 15:04 UTC")
		}
	}
	return s
}

// resourceURL is where a resource's button leads: the gateway's download
// route for an uploaded file (a path, whatever host the catalog recorded),
// the link itself otherwise (html/template refuses unsafe schemes).
func resourceURL(d Dataset, r Resource) string {
	if r.Uploaded() {
		name := ""
		if u, err := url.Parse(r.URL); err == nil {
			name = path.Base(u.Path)
		}
		p := "/dataset/" + url.PathEscape(d.ID) + "/resource/" + url.PathEscape(r.ID) + "/download"
		if name != "" && name != "download" && name != "." && name != "/" {
			p += "/" + url.PathEscape(name)
		}
		return p
	}
	return r.URL
}
