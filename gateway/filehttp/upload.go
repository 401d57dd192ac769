package filehttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/catalog/ckan"
	"toxgate/catalog/filestore"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/pluginhost"
	"toxgate/plugins/contract"
)

// Upload streams a resource upload. Before a byte of the file is read the
// caller must be authenticated, hold one of its upload slots
// (catalog.max_uploads_per_user; 429 beyond) and be allowed by the catalog
// to write where the upload goes, named by the fields sent before the file
// (package_id for resource_create, id for resource_update and
// resource_patch) or by the query string; a file part that comes first is
// refused (409). The "upload" part then goes into the file store (never
// whole in memory), the other fields are collected, and the plugin runs the
// action with a reference to the complete file. When the plugin refuses the
// action the file is deleted; when its answer is lost (503, 504) the file is
// left to the sweep, which keeps it if a resource holds it.
func (h *Handler) Upload(ctx *fasthttp.RequestCtx, action string, caller pluginhost.Identity) {
	site := h.plugins.SiteURL(ctx)
	fail := func(e *ckan.Error, outcome string) {
		h.m.uploads.WithLabelValues(outcome).Inc()
		httpcore.DrainBody(ctx)
		ctx.SetConnectionClose() // the rest of the body is never read
		r := ckan.Failure(site, action, e)
		ctx.SetStatusCode(r.Status)
		ctx.SetContentType(r.ContentType)
		ctx.SetBody(r.Body)
	}
	if caller.UserID == "" && caller.Name == "" {
		fail(ckan.NotAuthorized("Action "+action+" requires an authenticated user"), "rejected")
		return
	}
	_, params, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if err != nil || params["boundary"] == "" {
		fail(ckan.BadRequest("multipart/form-data without a boundary"), "rejected")
		return
	}
	if cl := ctx.Request.Header.ContentLength(); cl > 0 && int64(cl) > h.cfg.MaxBytes+FormSlack {
		fail(h.tooLarge(), "too_large")
		return
	}
	slot := caller.UserID
	if slot == "" {
		slot = "name:" + caller.Name
	}
	if !h.slots.acquire(slot) {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(retryAfterBusy))
		fail(&ckan.Error{Status: fasthttp.StatusTooManyRequests, Type: TypeTooManyRequests, Message: fmt.Sprintf(
			"You have %d uploads in progress, the most one user may have at once (catalog.max_uploads_per_user); retry when one has finished", h.cfg.MaxUploadsPerUser)}, "busy")
		return
	}
	defer h.slots.release(slot)
	h.m.inFlight.Inc()
	defer h.m.inFlight.Dec()
	var body io.Reader = &deadlineReader{r: ctx.RequestBodyStream(), conn: ctx, d: h.cfg.ReadTimeout}
	if ctx.RequestBodyStream() == nil {
		body = bytes.NewReader(ctx.PostBody())
	}
	body = &cappedReader{r: body, n: h.cfg.MaxBytes + FormSlack}
	field := targetField(action)
	var fixed map[string]string
	if v := ctx.QueryArgs().Peek(field); len(v) > 0 {
		fixed = map[string]string{field: string(v)}
	}
	fr := newFieldReader(body, params["boundary"], fixed)
	bodyErr := func(err error) {
		var ce *ckan.Error
		switch {
		case errors.Is(err, errBodyTooLarge):
			fail(h.tooLarge(), "too_large")
		case errors.As(err, &ce):
			outcome := "rejected"
			if ce.Status == fasthttp.StatusRequestEntityTooLarge {
				outcome = "too_large"
			}
			fail(ce, outcome)
		default:
			fail(ckan.BadRequest("cannot read the multipart body: "+err.Error()), "rejected")
		}
	}
	var w *filestore.Writer
	kept := false
	defer func() {
		if w != nil && !kept {
			actx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := w.Abort(actx); err != nil {
				ctx.Logger().Printf("abandoned upload %s not removed (the sweep will): %v", w.ID(), err)
			}
		}
	}()
	for {
		part, err := fr.next()
		if err != nil {
			bodyErr(err)
			return
		}
		if part == nil {
			break
		}
		if name := part.FormName(); name != "upload" {
			fail(ckan.FieldError(name, "Files are accepted only in the field named upload"), "rejected")
			return
		}
		if w != nil {
			fail(ckan.FieldError("upload", "Only one file per request"), "rejected")
			return
		}
		if e := h.mayWrite(ctx, site, action, caller, fr.form); e != nil {
			fail(e, "denied")
			return
		}
		w, err = h.store.Create(context.Background(), MungeFilename(part.FileName()), h.cfg.MaxBytes)
		if err != nil {
			fail(unavailable(err), "failed")
			return
		}
		if _, err := io.Copy(w, part); err != nil {
			switch {
			case errors.Is(err, filestore.ErrTooLarge), errors.Is(err, errBodyTooLarge):
				fail(h.tooLarge(), "too_large")
			case errors.As(err, new(*readError)):
				fail(ckan.BadRequest("cannot read the multipart body: "+err.Error()), "rejected")
			default:
				fail(unavailable(err), "failed")
			}
			return
		}
		if w.Size() == 0 {
			fail(ckan.FieldError("upload", "The uploaded file is empty"), "rejected")
			return
		}
	}
	form := fr.form
	if w == nil && action == "resource_create" && form.Get("url_type") == "upload" {
		fail(ckan.FieldError("upload", "Missing value"), "rejected")
		return
	}
	var ref *contract.Upload
	if w != nil {
		info, err := w.Commit()
		if err != nil {
			fail(unavailable(err), "failed")
			return
		}
		ref = &contract.Upload{FileID: info.ID, Filename: info.Filename, Mimetype: info.Mimetype, Size: info.Size, SHA256: info.SHA256}
	}
	h.plugins.HandleActionWith(ctx, action, caller, "application/x-www-form-urlencoded", []byte(form.Encode()), ref)
	if ref == nil {
		return
	}
	switch status := ctx.Response.StatusCode(); {
	case status == fasthttp.StatusOK:
		kept = true
		h.m.uploads.WithLabelValues("stored").Inc()
		h.m.upBytes.Add(float64(ref.Size))
	case status == fasthttp.StatusServiceUnavailable || status == fasthttp.StatusGatewayTimeout:
		kept = true // the plugin may have written the resource: the sweep decides
		h.m.uploads.WithLabelValues("failed").Inc()
	default:
		h.m.uploads.WithLabelValues("rejected").Inc()
	}
}

// tooLarge is the 413 naming the limit.
func (h *Handler) tooLarge() *ckan.Error {
	return &ckan.Error{Status: 413, Type: ckan.TypeValidation, Fields: map[string]any{
		"upload": []string{fmt.Sprintf("File is larger than the limit of %d bytes (catalog.max_resource_bytes)", h.cfg.MaxBytes)}}}
}

// unavailable is the 503 for a store that failed under an upload.
func unavailable(err error) *ckan.Error {
	return &ckan.Error{Status: 503, Type: pluginhost.TypeUnavailable, Message: "The file store is unavailable; please retry (" + err.Error() + ")"}
}

// readError marks a failure to read the client's body (as opposed to the store).
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// deadlineReader reads a streamed request body, giving the client d for
// every read, so a large upload may take as long as it keeps sending.
type deadlineReader struct {
	r    io.Reader
	conn interface{ Conn() net.Conn }
	d    time.Duration
}

func (r *deadlineReader) Read(p []byte) (int, error) {
	if r.d > 0 {
		_ = r.conn.Conn().SetReadDeadline(time.Now().Add(r.d))
	}
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = &readError{err}
	}
	return n, err
}

var (
	filenameBad    = regexp.MustCompile(`[^a-z0-9_. -]`)
	filenameDashes = regexp.MustCompile(`-+`)
)

// MungeFilename makes a client's file name safe to store and to put in a
// URL, as CKAN's munge_filename does: the base name, lower case, only
// letters, digits, "_", ".", "-" (spaces become "-"), at most 100 characters
// with the extension kept.
func MungeFilename(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSpace(strings.ToLower(name))
	name = filenameBad.ReplaceAllString(name, "")
	name = filenameDashes.ReplaceAllString(strings.ReplaceAll(name, " ", "-"), "-")
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name, ext = name[:i], name[i:]
	}
	if len(ext) > 21 {
		ext = ext[:21]
	}
	if len(name)+len(ext) > 100 {
		name = name[:100-len(ext)]
	}
	name = strings.Trim(name, "-. ")
	if name == "" {
		name = "upload"
	}
	return name + ext
}
