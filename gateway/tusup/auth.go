package tusup

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/plugins/contract"
)

// op is what a request does to an upload.
type op int

const (
	// opCreate creates an upload (POST /uploads/).
	opCreate op = iota
	// opUse reads the offset of, continues or deletes an upload (HEAD,
	// PATCH, DELETE /uploads/<id>).
	opUse
	// opAttach attaches a finished upload to a resource.
	opAttach
)

// authorize is the one decision of who may do what to an upload: only a
// logged-in caller acts at all; an upload is created only for a dataset
// (Upload-Metadata package_id) the catalog lets the caller write to; an
// existing upload is used, continued, deleted or attached only by its
// creator, and others are told it does not exist; an expired upload is
// gone (410).
func (h *Handler) authorize(ctx context.Context, o op, caller contract.Identity, id string, e entry) error {
	if caller.Anonymous() {
		return &tusError{http.StatusUnauthorized, "uploads need an authenticated user (Authorization: Bearer <token>, or the web session)"}
	}
	if o == opCreate {
		pkg, err := createPackageID(ctx)
		if err != nil {
			return err
		}
		if h.mayWrite == nil {
			return &tusError{http.StatusServiceUnavailable, "the catalog is not attached"}
		}
		return h.mayWrite(ctx, caller, pkg)
	}
	if e.owner == "" || e.owner != OwnerKey(caller) {
		return errNoUpload
	}
	if !time.Now().Before(e.expires(h.cfg.Expiry)) {
		h.remove(context.WithoutCancel(ctx), id)
		return &tusError{http.StatusGone, "the upload expired (files.tus.expiry after its creation) and was removed"}
	}
	return nil
}

// createPackageID is the package_id of a creation's Upload-Metadata.
func createPackageID(ctx context.Context) (string, error) {
	rc, ok := ctx.(*fasthttp.RequestCtx)
	if !ok {
		return "", errors.New("tusup: creation outside a request")
	}
	meta, err := ParseMetadata(string(rc.Request.Header.Peek("Upload-Metadata")))
	if err != nil {
		return "", &tusError{http.StatusBadRequest, err.Error()}
	}
	pkg := meta[MetaPackageID]
	if pkg == "" {
		return "", &tusError{http.StatusBadRequest, "Upload-Metadata must name the dataset the file is for: package_id <base64 of the dataset's id or name>"}
	}
	return pkg, nil
}
