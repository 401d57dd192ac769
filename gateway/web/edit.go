package web

import (
	"errors"
	"mime"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/catalogclient"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
)

// datasetForm is what the dataset form edits.
type datasetForm struct {
	Name, Title, Notes, Tags, OwnerOrg, LicenseID, Author, Maintainer, Version, URL string
	Private                                                                         bool
}

type license struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type datasetFormData struct {
	Form     datasetForm
	Orgs     []Organization
	Licenses []license
	Errors   []string
	Action   string
	Edit     string // the dataset's name when editing
}

func formOf(d *Dataset) datasetForm {
	tags := make([]string, 0, len(d.Tags))
	for _, t := range d.Tags {
		if t.VocabularyID == "" {
			tags = append(tags, t.Name)
		}
	}
	return datasetForm{Name: d.Name, Title: d.Title, Notes: d.Notes, Tags: strings.Join(tags, ", "), OwnerOrg: d.OwnerOrg,
		LicenseID: d.LicenseID, Author: d.Author, Maintainer: d.Maintainer, Version: d.Version, URL: d.URL, Private: d.Private}
}

func postedForm(r *req) datasetForm {
	return datasetForm{Name: form(r.ctx, "name"), Title: form(r.ctx, "title"), Notes: form(r.ctx, "notes"), Tags: form(r.ctx, "tags"),
		OwnerOrg: form(r.ctx, "owner_org"), LicenseID: form(r.ctx, "license_id"), Author: form(r.ctx, "author"),
		Maintainer: form(r.ctx, "maintainer"), Version: form(r.ctx, "version"), URL: form(r.ctx, "url"),
		Private: form(r.ctx, "private") != "false"}
}

// args are the package_create / package_patch fields of the form.
func (f datasetForm) args() map[string]any {
	tags := []map[string]string{}
	for _, t := range strings.Split(f.Tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, map[string]string{"name": t})
		}
	}
	return map[string]any{"name": f.Name, "title": f.Title, "notes": f.Notes, "tags": tags, "owner_org": f.OwnerOrg,
		"license_id": f.LicenseID, "author": f.Author, "maintainer": f.Maintainer, "version": f.Version, "url": f.URL, "private": f.Private}
}

func (w *Web) datasetFormView(r *req, status int, title string, d datasetFormData) {
	d.Orgs = w.editableOrgs(r)
	if d.Edit != "" && d.Form.OwnerOrg != "" && !hasOrg(d.Orgs, d.Form.OwnerOrg) {
		// a collaborator edits a dataset of an organization they are not in
		var o Organization
		if err := w.call(r, "organization_show", map[string]any{"id": d.Form.OwnerOrg, "include_users": false}, &o); err == nil {
			d.Orgs = append([]Organization{o}, d.Orgs...)
		}
	}
	if err := w.call(r, "license_list", map[string]any{}, &d.Licenses); err != nil {
		w.log.Warn("web: license_list", "err", err)
	}
	w.render(r, status, "dataset_form", title, d, "", "")
}

func (w *Web) datasetNew(r *req) {
	f := datasetForm{Private: true, OwnerOrg: string(r.ctx.QueryArgs().Peek("owner_org"))}
	w.datasetFormView(r, fasthttp.StatusOK, "Add a dataset", datasetFormData{Form: f, Action: "/dataset/new"})
}

// hasOrg reports whether orgs holds the organization ref (id or name).
func hasOrg(orgs []Organization, ref string) bool {
	for _, o := range orgs {
		if o.ID == ref || o.Name == ref {
			return true
		}
	}
	return false
}

// fieldErrors lists a validation failure's messages, field by field.
func fieldErrors(err error) []string {
	var ce *catalogclient.Error
	if !errors.As(err, &ce) {
		return []string{err.Error()}
	}
	var out []string
	keys := make([]string, 0, len(ce.Fields))
	for k := range ce.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+": "+strings.Join(ce.Fields[k], " "))
	}
	if len(out) == 0 {
		out = append(out, ce.Error())
	}
	return out
}

func errStatus(err error) int {
	var ce *catalogclient.Error
	if errors.As(err, &ce) && ce.Status >= 400 {
		return ce.Status
	}
	return fasthttp.StatusInternalServerError
}

func (w *Web) datasetCreate(r *req) {
	f := postedForm(r)
	var d Dataset
	if err := w.call(r, "package_create", f.args(), &d); err != nil {
		w.datasetFormView(r, errStatus(err), "Add a dataset", datasetFormData{Form: f, Action: "/dataset/new", Errors: fieldErrors(err)})
		return
	}
	redirect(r.ctx, "/dataset/"+url.PathEscape(d.Name)+"?done=created")
}

func (w *Web) datasetEdit(r *req) {
	d, err := w.showDataset(r, pathValue(r, "id"))
	if err != nil {
		w.catalogFail(r, "Dataset", err)
		return
	}
	w.datasetFormView(r, fasthttp.StatusOK, "Edit "+d.DisplayTitle(), datasetFormData{Form: formOf(&d), Action: "/dataset/edit/" + url.PathEscape(d.Name), Edit: d.Name})
}

func (w *Web) datasetUpdate(r *req) {
	id := pathValue(r, "id")
	f := postedForm(r)
	args := f.args()
	args["id"] = id
	var d Dataset
	if err := w.call(r, "package_patch", args, &d); err != nil {
		w.datasetFormView(r, errStatus(err), "Edit "+id, datasetFormData{Form: f, Action: "/dataset/edit/" + url.PathEscape(id), Edit: id, Errors: fieldErrors(err)})
		return
	}
	redirect(r.ctx, "/dataset/"+url.PathEscape(d.Name)+"?done=updated")
}

func (w *Web) datasetDelete(r *req) {
	if form(r.ctx, "confirm") != "yes" {
		redirect(r.ctx, "/dataset/"+url.PathEscape(pathValue(r, "id")))
		return
	}
	if err := w.call(r, "package_delete", map[string]any{"id": pathValue(r, "id")}, nil); err != nil {
		w.catalogFail(r, "Dataset", err)
		return
	}
	redirect(r.ctx, "/dataset?done=deleted")
}

type resourceFormData struct {
	D        Dataset
	Errors   []string
	MaxBytes int64
}

func (w *Web) resourceNew(r *req) {
	d, err := w.showDataset(r, pathValue(r, "id"))
	if err != nil {
		w.catalogFail(r, "Dataset", err)
		return
	}
	maxBytes := w.o.MaxUploadBytes
	w.render(r, fasthttp.StatusOK, "resource_form", "Add a resource", resourceFormData{D: d, MaxBytes: maxBytes}, "", "")
}

var uploadPath = regexp.MustCompile(`^/dataset/[^/]+/resource/new$`)

// IsUpload reports whether a request is the resource form's multipart
// POST, whose body the gateway streams into the file store (give it the
// resource upload limit and do not read it before the handler).
func IsUpload(ctx *fasthttp.RequestCtx) bool {
	if !ctx.IsPost() || !uploadPath.Match(ctx.Path()) {
		return false
	}
	mt, _, _ := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	return mt == "multipart/form-data"
}

// resourceCreate serves the resource form. Its multipart body is not read
// before the session and the CSRF token (in the form's action URL, since a
// streamed body's fields cannot be read first) are checked; then the file
// streams into the file store as for the API's resource_create.
func (w *Web) resourceCreate(ctx *fasthttp.RequestCtx) {
	r := w.load(ctx)
	refuse := func(h func()) {
		httpcore.DrainBody(ctx)
		ctx.SetConnectionClose()
		h()
	}
	if r.sess == nil || !r.user.FirstLoginDone() {
		refuse(func() { redirect(ctx, "/login") })
		return
	}
	if !identity.CheckCSRF(r.sess.CSRF, string(ctx.QueryArgs().Peek("csrf"))) {
		refuse(func() { w.badCSRF(r) })
		return
	}
	id := pathValue(r, "id")
	if !IsUpload(ctx) {
		// A form without a file sent as urlencoded (an old browser): a link resource.
		w.resourceLink(r, id)
		return
	}
	if w.o.Backend == nil {
		refuse(func() { w.fail(r, errors.New("the catalog is not attached")) })
		return
	}
	w.o.Backend.Upload(ctx, "resource_create", r.catalogCaller())
	w.afterResource(r, id, ctx.Response.StatusCode(), ctx.Response.Body())
}

// resourceLink creates a link resource from an urlencoded form, or a
// file resource from the finished resumable upload its upload_id names
// (the form's script sends the file to /uploads/ first).
func (w *Web) resourceLink(r *req, id string) {
	if ref := form(r.ctx, "upload_id"); ref != "" && w.o.Backend != nil {
		fields := url.Values{}
		for _, k := range []string{"package_id", "name", "format", "description"} {
			if v := form(r.ctx, k); v != "" {
				fields.Set(k, v)
			}
		}
		if fields.Get("package_id") == "" {
			fields.Set("package_id", id)
		}
		w.o.Backend.Attach(r.ctx, "resource_create", r.catalogCaller(), []byte(fields.Encode()), ref)
		w.afterResource(r, id, r.ctx.Response.StatusCode(), r.ctx.Response.Body())
		return
	}
	args := map[string]any{"package_id": form(r.ctx, "package_id"), "url": form(r.ctx, "url"), "name": form(r.ctx, "name"),
		"format": form(r.ctx, "format"), "description": form(r.ctx, "description")}
	if args["package_id"] == "" {
		args["package_id"] = id
	}
	var res Resource
	err := w.call(r, "resource_create", args, &res)
	if err != nil {
		w.resourceFailed(r, id, err)
		return
	}
	redirect(r.ctx, "/dataset/"+url.PathEscape(id)+"/resource/"+url.PathEscape(res.ID)+"?done=resource")
}

// afterResource turns resource_create's CKAN answer into a redirect to the
// new resource, or the form again with the errors.
func (w *Web) afterResource(r *req, id string, status int, env []byte) {
	var res Resource
	err := catalogclient.Decode(status, append([]byte(nil), env...), &res)
	r.ctx.Response.ResetBody()
	r.ctx.Response.Header.Del("Content-Disposition")
	if err != nil {
		w.resourceFailed(r, id, err)
		return
	}
	redirect(r.ctx, "/dataset/"+url.PathEscape(id)+"/resource/"+url.PathEscape(res.ID)+"?done=resource")
}

func (w *Web) resourceFailed(r *req, id string, err error) {
	d, derr := w.showDataset(r, id)
	if derr != nil {
		w.catalogFail(r, "Dataset", derr)
		return
	}
	w.render(r, errStatus(err), "resource_form", "Add a resource", resourceFormData{D: d, Errors: fieldErrors(err), MaxBytes: w.o.MaxUploadBytes}, "", "")
}

func (w *Web) resourceDelete(r *req) {
	id, rid := pathValue(r, "id"), pathValue(r, "resource_id")
	if form(r.ctx, "confirm") != "yes" {
		redirect(r.ctx, "/dataset/"+url.PathEscape(id)+"/resource/"+url.PathEscape(rid))
		return
	}
	if err := w.call(r, "resource_delete", map[string]any{"id": rid}, nil); err != nil {
		w.catalogFail(r, "Resource", err)
		return
	}
	redirect(r.ctx, "/dataset/"+url.PathEscape(id)+"?done=resource_deleted")
}
