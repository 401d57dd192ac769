package citation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"toxgate/gateway/catalogclient"

	"github.com/valyala/fasthttp"

	"toxgate/catalog/ckan"
	"toxgate/gateway/identity"
	"toxgate/plugins/contract"
)

// DOIAction is dataset_doi_register: id (a dataset), version (optional: a
// version's id or name). It registers the DOI of the dataset, or of the
// version, with DataCite (datacite.*) and records it: in the dataset's
// `doi` extra, or in the version. Editors of a public dataset may; a DOI
// already recorded is answered as it is. The result is {doi, url,
// registered}: registered is false when the DOI was already recorded.
func (h *Handler) DOIAction() (contract.ActionSpec, func(*fasthttp.RequestCtx, string, identity.Caller)) {
	spec := contract.ActionSpec{Name: "dataset_doi_register",
		Description: "Register a DOI with DataCite for a public dataset or one of its versions (id, version; editors)"}
	return spec, func(ctx *fasthttp.RequestCtx, action string, caller identity.Caller) {
		site := h.o.SiteURL(ctx)
		req := ckan.Request{Action: action, Method: string(ctx.Method()), ContentType: string(ctx.Request.Header.ContentType()),
			Query: string(ctx.QueryArgs().QueryString()), Body: ctx.PostBody(), SiteURL: site}
		resp := ckan.Serve(req, false, func(data map[string]any, anonymous bool) (any, error) {
			if anonymous {
				caller = identity.Caller{}
			}
			return h.registerDOI(ctx, caller, site, ckan.String(data, "id"), ckan.String(data, "version"))
		})
		ctx.SetStatusCode(resp.Status)
		ctx.SetContentType(resp.ContentType)
		ctx.SetBody(resp.Body)
	}
}

func (h *Handler) registerDOI(ctx context.Context, caller identity.Caller, site, id, version string) (any, error) {
	if h.o.Registrar == nil {
		return nil, &ckan.Error{Status: fasthttp.StatusBadRequest, Type: ckan.TypeValidation,
			Message: "DOI registration is off on this site: it needs datacite.repository_id, datacite.password and datacite.prefix"}
	}
	if id == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	if caller.Anonymous() {
		return nil, ckan.NotAuthorized("registering a DOI needs an editor of the dataset")
	}
	w, pkg, err := h.Resolve(ctx, caller, site, id, version)
	if err != nil {
		return nil, err
	}
	c := h.o.Catalog.At(site)
	// Editors only: the catalog's auth function for adding to the dataset decides.
	if err := c.Do(context.WithoutCancel(ctx), caller.Identity, "package_writable", map[string]any{"id": pkg.ID}, nil); err != nil {
		var ce *catalogclient.Error
		if errors.As(err, &ce) && ce.Err == nil && ce.Status == fasthttp.StatusForbidden {
			return nil, ckan.NotAuthorized("registering a DOI needs an editor of the dataset")
		}
		return nil, asCKAN(err, id)
	}
	if pkg.Private {
		return nil, ckan.FieldError("id", "a private dataset gets no DOI: DataCite publishes its metadata; make the dataset public first")
	}
	if w.DOI != "" {
		return map[string]any{"doi": w.DOI, "url": "https://doi.org/" + w.DOI, "registered": false}, nil
	}
	versionID := ""
	if version != "" {
		v, err := h.versionOf(ctx, caller, site, pkg.ID, version)
		if err != nil {
			return nil, err
		}
		versionID = v
	}
	doi := h.o.Registrar.DOIFor(pkg.ID, versionID)
	got, err := h.o.Registrar.Register(context.WithoutCancel(ctx), w, doi)
	if err != nil {
		return nil, &ckan.Error{Status: fasthttp.StatusBadGateway, Type: "Error", Message: "DataCite refused the DOI " + doi + ": " + err.Error()}
	}
	if err := h.recordDOI(ctx, caller, site, pkg.ID, versionID, got); err != nil {
		h.log().Error("DOI registered but not recorded; dataset_doi_register again records it", "doi", got, "dataset", pkg.ID, "version", versionID, "err", err)
		return nil, &ckan.Error{Status: fasthttp.StatusServiceUnavailable, Type: "Error",
			Message: fmt.Sprintf("DOI %s is registered with DataCite but could not be recorded (%v); call dataset_doi_register again", got, err)}
	}
	h.log().Info("DOI registered", "doi", got, "dataset", pkg.ID, "version", versionID, "user", caller.UserID)
	return map[string]any{"doi": got, "url": "https://doi.org/" + got, "registered": true}, nil
}

// versionOf is the id of a dataset's version named by id or name.
func (h *Handler) versionOf(ctx context.Context, caller identity.Caller, site, dataset, version string) (string, error) {
	var ver struct{ ID string }
	if err := asCKAN(h.o.Catalog.At(site).Do(context.WithoutCancel(ctx), caller.Identity, "dataset_version_show",
		map[string]any{"dataset": dataset, "version": version}, &ver), version); err != nil {
		return "", err
	}
	return ver.ID, nil
}

// recordDOI writes the DOI into the version, or into the dataset's `doi`
// extra (the other extras kept).
func (h *Handler) recordDOI(ctx context.Context, caller identity.Caller, site, dataset, versionID, doi string) error {
	c := h.o.Catalog.At(site)
	if versionID != "" {
		return c.Do(context.WithoutCancel(ctx), caller.Identity, "dataset_version_doi_set",
			map[string]any{"dataset": dataset, "id": versionID, "doi": doi}, nil)
	}
	var cur struct {
		Extras []map[string]any `json:"extras"`
	}
	if err := c.Do(context.WithoutCancel(ctx), caller.Identity, "package_show", map[string]any{"id": dataset}, &cur); err != nil {
		return err
	}
	extras := []map[string]any{{"key": "doi", "value": doi}}
	for _, e := range cur.Extras {
		if e["key"] != "doi" {
			extras = append(extras, map[string]any{"key": e["key"], "value": e["value"]})
		}
	}
	return c.Do(context.WithoutCancel(ctx), caller.Identity, "package_patch", map[string]any{"id": dataset, "extras": extras}, nil)
}

func (h *Handler) log() *slog.Logger {
	if h.o.Log == nil {
		return slog.Default()
	}
	return h.o.Log
}
