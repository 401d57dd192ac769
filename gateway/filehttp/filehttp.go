// Package filehttp serves the catalog's files over HTTP: resource uploads
// (the multipart "upload" field of resource_create, resource_update and
// resource_patch, read only once the catalog allows the caller to write
// where it goes, streamed into catalog/filestore before the catalog plugin
// is called with a reference to the stored file) and downloads at CKAN's
// URL /dataset/{id}/resource/{resource_id}/download[/{filename}], with Range,
// HEAD and validators, authorized by the plugin as resource_show is. See
// README.md.
package filehttp

import (
	"mime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"toxgate/catalog/filestore"
	"toxgate/gateway/pluginhost"
	"toxgate/gateway/tusup"
)

// FormSlack is what a multipart body may hold besides its file: the other
// form fields and the part headers.
const FormSlack = 1 << 20

// TypeTooManyRequests is the error __type of the 429 for a user past the
// concurrent upload cap.
const TypeTooManyRequests = "Too Many Requests"

// retryAfterBusy is the Retry-After, in seconds, of that 429.
const retryAfterBusy = 5

// precheckTimeout bounds the catalog calls that decide, before the file is
// read, whether the caller may write where an upload goes.
const precheckTimeout = 30 * time.Second

// Handler serves uploads and downloads.
type Handler struct {
	store   *filestore.Store
	plugins *pluginhost.Host
	cfg     Config
	m       metrics
	slots   *userSlots
	tus     *tusup.Handler // finished resumable uploads (SetResumable); nil: none
}

// Config sets the limits.
type Config struct {
	// MaxBytes is the largest file an upload may hold.
	MaxBytes int64
	// ReadTimeout is how long an upload may go without receiving a byte.
	ReadTimeout time.Duration
	// WriteTimeout is how long a download may go without sending a byte.
	WriteTimeout time.Duration
	// MaxUploadsPerUser is how many uploads one user may have in progress
	// at once on this gateway (catalog.max_uploads_per_user); past it 429.
	// 0 or less: no cap.
	MaxUploadsPerUser int
}

// New returns a Handler; its metrics are registered with reg.
func New(store *filestore.Store, plugins *pluginhost.Host, cfg Config, reg prometheus.Registerer) *Handler {
	h := &Handler{store: store, plugins: plugins, cfg: cfg, m: newMetrics(store), slots: newUserSlots(cfg.MaxUploadsPerUser)}
	h.m.register(reg)
	return h
}

// uploadActions are the actions whose multipart "upload" field is a file.
var uploadActions = map[string]bool{"resource_create": true, "resource_update": true, "resource_patch": true}

// TakesUpload reports whether action takes a file (multipart upload or upload_id).
func TakesUpload(action string) bool { return uploadActions[action] }

// IsUpload reports whether a request is a resource upload: a multipart POST
// of an action that takes a file, at /api/3/action/{name} or /api/action/{name}.
// Its body is streamed by Upload rather than read into memory.
func IsUpload(ctx *fasthttp.RequestCtx) bool {
	if !ctx.IsPost() {
		return false
	}
	path := string(ctx.Path())
	name, ok := strings.CutPrefix(path, "/api/3/action/")
	if !ok {
		if name, ok = strings.CutPrefix(path, "/api/action/"); !ok {
			return false
		}
	}
	if !uploadActions[name] {
		return false
	}
	mt, _, _ := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	return mt == "multipart/form-data"
}
