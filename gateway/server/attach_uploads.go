package server

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/valyala/fasthttp"

	"toxgate/catalog/ckan"
	"toxgate/gateway/tusup"
	"toxgate/plugins/contract"
)

// uploadsDir is files.tus.dir made absolute (empty: uploads/ beside
// mongodb.data_dir).
func (a *App) uploadsDir() string {
	dir := a.cfg.Files.Tus.Dir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(filepath.Clean(a.cfg.MongoDB.DataDir)), "uploads")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir
}

// catalogRefusal is a catalog's CKAN error as a tus refusal.
type catalogRefusal struct{ e *ckan.Error }

func (r catalogRefusal) Error() string {
	if r.e.Message != "" {
		return r.e.Message
	}
	b, _ := json.Marshal(r.e.Fields)
	return r.e.Type + ": " + string(b)
}
func (r catalogRefusal) HTTPStatus() int { return r.e.Status }

// attachUploads serves resumable uploads at /uploads/ (gateway/tusup) with
// the API's caller (token, else the web session), and lets the resource
// actions attach finished ones by upload_id.
func (a *App) attachUploads(ctx context.Context) error {
	t := a.cfg.Files.Tus
	files := a.files
	mayWrite := func(ctx context.Context, caller contract.Identity, pkg string) error {
		if e := files.MayWriteDataset(ctx, a.plugins.SiteURL(nil), caller, pkg); e != nil {
			return catalogRefusal{e}
		}
		return nil
	}
	h, err := tusup.New(ctx, tusup.Config{Dir: a.uploadsDir(), MaxBytes: int64(a.cfg.Catalog.MaxResourceBytes),
		Expiry: t.Expiry, CleanInterval: t.CleanInterval, MaxUnfinishedPerUser: t.MaxUnfinishedPerUser,
		MaxPendingBytesPerUser: int64(t.MaxPendingBytesPerUser), ReadTimeout: a.cfg.Server.ReadTimeout,
	}, mayWrite, a.log.With("component", "uploads"))
	if err != nil {
		return err
	}
	files.SetResumable(h)
	cctx, cancel := context.WithCancel(context.Background())
	go h.Run(cctx)
	a.AddCloser("uploads", func(ctx context.Context) error { cancel(); return h.Close(ctx) })
	serve := func(ctx *fasthttp.RequestCtx) {
		c := a.Caller(ctx)
		if c.Anonymous() {
			c = a.sessionCaller(ctx)
		}
		h.Serve(ctx, c.Identity)
	}
	for _, p := range []string{tusup.BasePath, tusup.BasePath + "{id}"} {
		for _, m := range []string{fasthttp.MethodPost, fasthttp.MethodHead, fasthttp.MethodOptions, fasthttp.MethodPatch, fasthttp.MethodDelete} {
			a.router.Handle(m, p, serve)
		}
	}
	return nil
}
