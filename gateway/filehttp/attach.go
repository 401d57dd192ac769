package filehttp

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/catalog/ckan"
	"toxgate/gateway/pluginhost"
	"toxgate/gateway/tusup"
	"toxgate/plugins/contract"
)

// UploadIDField is the action field naming a finished resumable upload.
const UploadIDField = "upload_id"

// SetResumable lets resource_create, resource_update and resource_patch
// attach finished uploads of t by upload_id.
func (h *Handler) SetResumable(t *tusup.Handler) { h.tus = t }

// UploadIDOf returns the upload_id of an action's body (JSON object or
// form-urlencoded) and the body without it; ok is false when the body
// names none.
func UploadIDOf(contentType string, body []byte) (id string, rest []byte, ok bool) {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/x-www-form-urlencoded":
		if !bytes.Contains(body, []byte(UploadIDField)) {
			return "", nil, false
		}
		form, err := url.ParseQuery(string(body))
		if err != nil || len(form[UploadIDField]) == 0 {
			return "", nil, false
		}
		id = form.Get(UploadIDField)
		form.Del(UploadIDField)
		return id, []byte(form.Encode()), true
	case "", "application/json", "text/plain":
		if !bytes.Contains(body, []byte(UploadIDField)) {
			return "", nil, false
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return "", nil, false
		}
		raw, has := obj[UploadIDField]
		if !has {
			return "", nil, false
		}
		if err := json.Unmarshal(raw, &id); err != nil {
			id = "\x00" // not a string: refused as not an upload id
		}
		delete(obj, UploadIDField)
		rest, _ = json.Marshal(obj)
		return id, rest, true
	}
	return "", nil, false
}

// Attach runs action with the finished resumable upload ref: the caller
// must have created it, the catalog must let the caller write where it
// goes (as for a multipart upload), then its bytes are copied into the
// file store (SHA-256 computed, and checked against the sha256 metadata
// the client declared), the plugin runs the action with the stored file,
// and the upload is removed once the action succeeded. Refusals are CKAN
// errors on upload_id: 403 for another user's upload, 409 for an unknown,
// malformed, unfinished or expired one.
func (h *Handler) Attach(ctx *fasthttp.RequestCtx, action string, caller pluginhost.Identity, contentType string, body []byte, ref string) {
	site := h.plugins.SiteURL(ctx)
	fail := func(e *ckan.Error, outcome string) {
		h.m.uploads.WithLabelValues(outcome).Inc()
		r := ckan.Failure(site, action, e)
		ctx.SetStatusCode(r.Status)
		ctx.SetContentType(r.ContentType)
		ctx.SetBody(r.Body)
	}
	if caller.Anonymous() {
		fail(ckan.NotAuthorized("Action "+action+" requires an authenticated user"), "rejected")
		return
	}
	if h.tus == nil {
		fail(&ckan.Error{Status: 409, Type: ckan.TypeValidation, Fields: map[string]any{UploadIDField: []string{"Resumable uploads are not served here"}}}, "rejected")
		return
	}
	f, err := h.tus.OpenFinished(ctx, ref, caller)
	if err != nil {
		var ae *tusup.AttachError
		if errors.As(err, &ae) {
			e := &ckan.Error{Status: ae.Status, Type: ckan.TypeValidation, Fields: map[string]any{UploadIDField: []string{ae.Msg}}}
			if ae.Status == http.StatusForbidden {
				e = &ckan.Error{Status: 403, Type: "Authorization Error", Message: "upload_id: " + ae.Msg}
			}
			fail(e, "rejected")
			return
		}
		fail(unavailable(err), "failed")
		return
	}
	defer f.Close()
	form, err := formOf(contentType, body)
	if err != nil {
		fail(ckan.BadRequest(err.Error()), "rejected")
		return
	}
	if e := h.mayWrite(ctx, site, action, caller, form); e != nil {
		fail(e, "denied")
		return
	}
	if f.Size == 0 {
		fail(ckan.FieldError(UploadIDField, "The uploaded file is empty"), "rejected")
		return
	}
	if f.Size > h.cfg.MaxBytes {
		fail(h.tooLarge(), "too_large")
		return
	}
	w, err := h.store.Create(context.Background(), MungeFilename(f.Filename), h.cfg.MaxBytes)
	if err != nil {
		fail(unavailable(err), "failed")
		return
	}
	kept := false
	defer func() {
		if !kept {
			actx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = w.Abort(actx)
		}
	}()
	if n, err := io.Copy(w, f); err != nil || n != f.Size {
		if err == nil {
			err = errors.New("the upload is shorter than its length")
		}
		fail(unavailable(err), "failed")
		return
	}
	info, err := w.Commit()
	if err != nil {
		fail(unavailable(err), "failed")
		return
	}
	if want := strings.ToLower(strings.TrimSpace(f.SHA256)); want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(info.SHA256)) != 1 {
		fail(ckan.FieldError(UploadIDField, "The upload's SHA-256 is "+info.SHA256+", not the sha256 its metadata declared"), "rejected")
		return
	}
	up := &contract.Upload{FileID: info.ID, Filename: info.Filename, Mimetype: info.Mimetype, Size: info.Size, SHA256: info.SHA256}
	h.plugins.HandleActionWith(ctx, action, caller, contentType, body, up)
	switch status := ctx.Response.StatusCode(); {
	case status == fasthttp.StatusOK:
		kept = true
		h.m.uploads.WithLabelValues("stored").Inc()
		h.m.upBytes.Add(float64(info.Size))
		if err := h.tus.Consume(context.WithoutCancel(ctx), f.ID); err != nil {
			ctx.Logger().Printf("attached upload %s not removed (it expires): %v", f.ID, err)
		}
	case status == fasthttp.StatusServiceUnavailable || status == fasthttp.StatusGatewayTimeout:
		kept = true // the plugin may have written the resource: the sweep decides
		h.m.uploads.WithLabelValues("failed").Inc()
	default:
		h.m.uploads.WithLabelValues("rejected").Inc()
	}
}

// formOf is the target fields of an action body (package_id, id) as a
// form, for mayWrite.
func formOf(contentType string, body []byte) (url.Values, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/x-www-form-urlencoded" {
		return url.ParseQuery(string(body))
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, errors.New("the body is not a JSON object")
	}
	form := url.Values{}
	for _, k := range []string{"package_id", "id"} {
		if s, ok := obj[k].(string); ok {
			form.Set(k, s)
		}
	}
	return form, nil
}
