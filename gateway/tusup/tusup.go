// Package tusup serves resumable uploads with the tus 1.0 protocol at
// /uploads/ (creation, creation-with-upload, termination, checksum,
// expiration) through tusd, for the catalog's resources: a finished upload
// is attached to a resource by resource_create or resource_update with
// upload_id (gateway/filehttp), which moves its bytes into the file store.
// Every request is authorized by one function (authorize) with the caller
// of the API's token or session; partial uploads live in files under
// Config.Dir, so they survive a crash of the gateway. See README.md.
package tusup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tus/tusd/v2/pkg/filestore"
	tusd "github.com/tus/tusd/v2/pkg/handler"
	"github.com/tus/tusd/v2/pkg/memorylocker"
	"github.com/valyala/fasthttp"
	expslog "golang.org/x/exp/slog"

	"toxgate/gateway/httpcore"
	"toxgate/plugins/contract"
)

// BasePath is where the uploads are served.
const BasePath = "/uploads/"

// Metadata keys the gateway sets on every upload (a client's values for
// them are dropped).
const (
	metaOwner   = "toxgate_owner"
	metaCreated = "toxgate_created"
	// MetaPackageID is the Upload-Metadata key naming the dataset the
	// upload is for: the caller must be allowed to write to it.
	MetaPackageID = "package_id"
)

// Config sets where uploads live and their limits.
type Config struct {
	// Dir holds the partial and finished uploads (<id> and <id>.info).
	Dir string
	// MaxBytes is the largest upload (catalog.max_resource_bytes).
	MaxBytes int64
	// Expiry is how long an upload lives after its creation, finished
	// or not, unless attached to a resource before.
	Expiry time.Duration
	// CleanInterval is how often expired uploads are removed.
	CleanInterval time.Duration
	// MaxUnfinishedPerUser bounds the unfinished uploads of one user.
	MaxUnfinishedPerUser int
	// MaxPendingBytesPerUser bounds the declared bytes of one user's
	// unfinished uploads.
	MaxPendingBytesPerUser int64
	// ReadTimeout is how long a PATCH may go without receiving a byte.
	ReadTimeout time.Duration
}

// MayWrite reports whether caller may write to the dataset pkg; the error
// is the catalog's refusal (its HTTP status from StatusOf).
type MayWrite func(ctx context.Context, caller contract.Identity, pkg string) error

// StatusError is an error carrying an HTTP status.
type StatusError interface {
	error
	HTTPStatus() int
}

// Handler serves /uploads/.
type Handler struct {
	cfg      Config
	tus      *tusd.UnroutedHandler
	routes   http.Handler
	store    filestore.FileStore
	idx      *index
	mayWrite MayWrite
	log      *slog.Logger
}

type callerKey struct{}

// createState carries the id given to an upload being created back to
// Serve, which drops the reservation if the creation failed.
type createState struct{ id string }

type createKey struct{}

// New opens the upload directory, rebuilds the index of its uploads and
// returns the Handler. Run its cleaner with Run.
func New(ctx context.Context, cfg Config, mayWrite MayWrite, log *slog.Logger) (*Handler, error) {
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("tusup: upload directory: %w", err)
	}
	spool := filepath.Join(cfg.Dir, ".spool")
	if err := os.MkdirAll(spool, 0o750); err != nil {
		return nil, fmt.Errorf("tusup: spool directory: %w", err)
	}
	h := &Handler{cfg: cfg, store: filestore.New(cfg.Dir), idx: newIndex(), mayWrite: mayWrite, log: log}
	composer := tusd.NewStoreComposer()
	cs := &checksumStore{inner: h.store, spool: spool}
	composer.UseCore(cs)
	composer.UseTerminater(cs)
	memorylocker.New().UseIn(composer)
	readTimeout := cfg.ReadTimeout
	if readTimeout <= 0 {
		readTimeout = time.Minute
	}
	t, err := tusd.NewUnroutedHandler(tusd.Config{
		StoreComposer: composer, BasePath: BasePath, MaxSize: cfg.MaxBytes,
		DisableDownload: true, DisableConcatenation: true, NetworkTimeout: readTimeout,
		Cors:                      &tusd.CorsConfig{Disable: true},
		Logger:                    expslog.New(expslog.NewTextHandler(os.Stderr, &expslog.HandlerOptions{Level: expslog.LevelError})),
		PreUploadCreateCallback:   h.preCreate,
		PreFinishResponseCallback: h.preFinish,
	})
	if err != nil {
		return nil, fmt.Errorf("tusup: %w", err)
	}
	h.tus = t
	h.routes = t.Middleware(http.HandlerFunc(h.route))
	if err := h.load(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// load rebuilds the index from the upload records in the directory.
func (h *Handler) load(ctx context.Context) error {
	names, err := filepath.Glob(filepath.Join(h.cfg.Dir, "*.info"))
	if err != nil {
		return fmt.Errorf("tusup: list uploads: %w", err)
	}
	for _, n := range names {
		id, ok := ParseID(strings.TrimSuffix(filepath.Base(n), ".info"))
		if !ok {
			continue
		}
		u, err := h.store.GetUpload(ctx, id)
		if err != nil {
			h.log.Warn("unreadable upload left to the cleaner", "id", id, "err", err)
			continue
		}
		info, err := u.GetInfo(ctx)
		if err != nil {
			continue
		}
		h.idx.put(id, entryOf(info))
	}
	return nil
}

// entryOf is the index entry of an upload's record.
func entryOf(info tusd.FileInfo) entry {
	sec, _ := strconv.ParseInt(info.MetaData[metaCreated], 10, 64)
	return entry{owner: info.MetaData[metaOwner], size: info.Size, created: time.Unix(sec, 0),
		finished: !info.SizeIsDeferred && info.Offset == info.Size}
}

// OwnerKey is how an upload names its creator.
func OwnerKey(c contract.Identity) string {
	if c.UserID != "" {
		return "id:" + c.UserID
	}
	return "name:" + c.Name
}

// Serve answers a tus request under BasePath for caller.
func (h *Handler) Serve(ctx *fasthttp.RequestCtx, caller contract.Identity) {
	method := string(ctx.Method())
	if o := ctx.Request.Header.Peek("X-HTTP-Method-Override"); method == http.MethodPost && len(o) > 0 {
		method = string(o)
	}
	if method != http.MethodOptions && string(ctx.Request.Header.Peek("Tus-Resumable")) != "1.0.0" {
		h.refuse(ctx, &tusError{http.StatusPreconditionFailed, "send Tus-Resumable: 1.0.0 (this is a tus 1.0 endpoint)"})
		return
	}
	rest := strings.TrimPrefix(string(ctx.Path()), BasePath)
	var id string
	var e entry
	switch {
	case method == http.MethodOptions:
	case rest == "" && method == http.MethodPost:
		if err := h.authorize(ctx, opCreate, caller, "", entry{}); err != nil {
			h.refuse(ctx, err)
			return
		}
	case rest == "":
		h.refuse(ctx, &tusError{http.StatusMethodNotAllowed, "use POST to create an upload"})
		return
	default:
		var ok bool
		if id, ok = ParseID(rest); !ok || strings.Contains(rest, "/") {
			h.refuse(ctx, errNoUpload)
			return
		}
		if method != http.MethodHead && method != http.MethodPatch && method != http.MethodDelete {
			h.refuse(ctx, &tusError{http.StatusMethodNotAllowed, "an upload answers HEAD, PATCH and DELETE"})
			return
		}
		e, _ = h.idx.get(id)
		if err := h.authorize(ctx, opUse, caller, id, e); err != nil {
			h.refuse(ctx, err)
			return
		}
	}
	rctx := context.WithValue(context.Background(), callerKey{}, caller)
	cs := &createState{}
	rctx = context.WithValue(rctx, createKey{}, cs)
	if c := ctx.Request.Header.Peek("Upload-Checksum"); len(c) > 0 {
		sum, err := parseChecksum(string(c))
		if err != nil {
			h.refuse(ctx, &tusError{http.StatusBadRequest, err.Error()})
			return
		}
		rctx = context.WithValue(rctx, checksumKey{}, sum)
	}
	if err := serveHTTP(ctx, rctx, h.routes); err != nil {
		h.refuse(ctx, &tusError{http.StatusBadRequest, "bad request URI"})
		return
	}
	status := ctx.Response.StatusCode()
	switch {
	case method == http.MethodOptions:
		ctx.Response.Header.Set("Tus-Extension", h.tus.SupportedExtensions()+",checksum,expiration")
		ctx.Response.Header.Set("Tus-Checksum-Algorithm", ChecksumAlgorithms)
	case cs.id != "" && status != http.StatusCreated:
		h.idx.remove(cs.id)
	case method == http.MethodDelete && status == http.StatusNoContent:
		h.idx.remove(id)
	}
	if cs.id != "" {
		id = cs.id
	}
	if e, ok := h.idx.get(id); ok && status < 300 {
		ctx.Response.Header.Set("Upload-Expires", e.expires(h.cfg.Expiry).UTC().Format(http.TimeFormat))
	}
}

// route dispatches to tusd's handlers (after its Middleware).
// tusd reads the upload id from the path below BasePath.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) {
	r.URL.Path = strings.TrimPrefix(r.URL.Path, BasePath)
	switch r.Method {
	case http.MethodPost:
		h.tus.PostFile(w, r)
	case http.MethodHead:
		h.tus.HeadFile(w, r)
	case http.MethodPatch:
		h.tus.PatchFile(w, r)
	case http.MethodDelete:
		h.tus.DelFile(w, r)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// preCreate gives a new upload its id, owner and creation time, after the
// per-caller limits allow it.
func (h *Handler) preCreate(ev tusd.HookEvent) (tusd.HTTPResponse, tusd.FileInfoChanges, error) {
	caller, _ := ev.Context.Value(callerKey{}).(contract.Identity)
	cs, _ := ev.Context.Value(createKey{}).(*createState)
	if ev.Upload.SizeIsDeferred {
		return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, tusd.NewError("ERR_LENGTH_REQUIRED", "send Upload-Length: deferred lengths are not accepted", http.StatusBadRequest)
	}
	meta := tusd.MetaData{}
	for k, v := range ev.Upload.MetaData {
		if !strings.HasPrefix(k, "toxgate_") {
			meta[k] = v
		}
	}
	now := time.Now()
	meta[metaOwner] = OwnerKey(caller)
	meta[metaCreated] = strconv.FormatInt(now.Unix(), 10)
	id := newID()
	switch h.idx.reserve(id, entry{owner: meta[metaOwner], size: ev.Upload.Size, created: now}, h.cfg.MaxUnfinishedPerUser, h.cfg.MaxPendingBytesPerUser) {
	case "count":
		return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, tusd.NewError("ERR_TOO_MANY_UPLOADS", fmt.Sprintf(
			"you have %d unfinished uploads, the most one user may have (files.tus.max_unfinished_per_user); finish or delete one", h.cfg.MaxUnfinishedPerUser), http.StatusTooManyRequests)
	case "bytes":
		return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, tusd.NewError("ERR_TOO_MANY_BYTES", fmt.Sprintf(
			"your unfinished uploads would hold more than %d bytes (files.tus.max_pending_bytes_per_user); finish or delete one", h.cfg.MaxPendingBytesPerUser), http.StatusRequestEntityTooLarge)
	}
	if cs != nil {
		cs.id = id
	}
	return tusd.HTTPResponse{}, tusd.FileInfoChanges{ID: id, MetaData: meta}, nil
}

// preFinish records that an upload is complete.
func (h *Handler) preFinish(ev tusd.HookEvent) (tusd.HTTPResponse, error) {
	h.idx.finish(ev.Upload.ID)
	return tusd.HTTPResponse{}, nil
}

// refuse answers err as tus does: the status and a plain-text message.
func (h *Handler) refuse(ctx *fasthttp.RequestCtx, err error) {
	status := http.StatusInternalServerError
	var se StatusError
	if errors.As(err, &se) {
		status = se.HTTPStatus()
	}
	ctx.Response.Header.Set("Tus-Resumable", "1.0.0")
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusUnauthorized {
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="toxgate"`)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString(err.Error() + "\n")
	if ctx.Request.Header.ContentLength() != 0 {
		httpcore.DrainBody(ctx) // lets the client read the answer, within a bound
		ctx.SetConnectionClose()
	}
}

// tusError is a refusal with its status.
type tusError struct {
	status int
	msg    string
}

func (e *tusError) Error() string   { return e.msg }
func (e *tusError) HTTPStatus() int { return e.status }

var errNoUpload = &tusError{http.StatusNotFound, "no such upload"}

// Close does nothing yet; partial uploads stay on disk for the next start.
func (h *Handler) Close(context.Context) error { return nil }

// IsUpload reports whether a request carries a body for the upload store
// (POST or PATCH under BasePath): its body is streamed by Serve, never read
// into memory before.
func IsUpload(ctx *fasthttp.RequestCtx) bool {
	return (ctx.IsPost() || ctx.IsPatch()) && strings.HasPrefix(string(ctx.Path()), BasePath)
}
