package tusup

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"toxgate/plugins/contract"
)

// Finished is a finished upload opened to be attached to a resource.
type Finished struct {
	io.ReadCloser
	// ID is the upload's id.
	ID string
	// Size is its length in bytes.
	Size int64
	// Filename is the file name the client gave (metadata filename or
	// name), not yet made safe.
	Filename string
	// SHA256 is the hex SHA-256 the client declared (metadata sha256), if any.
	SHA256 string
	h      *Handler
}

// AttachError is a refusal to attach: Field is upload_id, Status 403
// (another user's upload), 409 (unknown, malformed, unfinished, expired).
type AttachError struct {
	Status int
	Msg    string
}

func (e *AttachError) Error() string { return e.Msg }

// OpenFinished opens the finished upload named by ref (an id or the
// upload's URL) for caller, who must have created it.
func (h *Handler) OpenFinished(ctx context.Context, ref string, caller contract.Identity) (*Finished, error) {
	id, ok := ParseID(ref)
	if !ok {
		return nil, &AttachError{http.StatusConflict, "Not an upload id (32 hexadecimal digits, or the upload's URL)"}
	}
	e, known := h.idx.get(id)
	if !known {
		return nil, &AttachError{http.StatusConflict, "No such upload: it was never created, was already attached, or expired"}
	}
	if err := h.authorize(ctx, opAttach, caller, id, e); err != nil {
		if se, ok := err.(StatusError); ok && se.HTTPStatus() == http.StatusNotFound {
			return nil, &AttachError{http.StatusForbidden, "The upload belongs to another user"}
		}
		return nil, &AttachError{http.StatusConflict, err.Error()}
	}
	if !h.idx.claim(id) {
		return nil, &AttachError{http.StatusConflict, "The upload is being attached by another request"}
	}
	ok = false
	defer func() {
		if !ok {
			h.idx.unclaim(id)
		}
	}()
	u, err := h.store.GetUpload(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("tusup: open upload %s: %w", id, err)
	}
	info, err := u.GetInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("tusup: read upload %s: %w", id, err)
	}
	if info.SizeIsDeferred || info.Offset < info.Size {
		return nil, &AttachError{http.StatusConflict, fmt.Sprintf("The upload is not finished: %d of %d bytes received; continue it with PATCH", info.Offset, info.Size)}
	}
	r, err := u.GetReader(ctx)
	if err != nil {
		return nil, fmt.Errorf("tusup: read upload %s: %w", id, err)
	}
	name := info.MetaData["filename"]
	if name == "" {
		name = info.MetaData["name"]
	}
	ok = true
	return &Finished{ReadCloser: r, ID: id, Size: info.Size, Filename: name, SHA256: info.MetaData["sha256"], h: h}, nil
}

// Close ends the read; an upload not consumed may be attached again.
func (f *Finished) Close() error {
	err := f.ReadCloser.Close()
	f.h.idx.unclaim(f.ID)
	return err
}

// Consume removes an upload that was attached to a resource.
func (h *Handler) Consume(ctx context.Context, id string) error {
	return h.remove(ctx, id)
}
