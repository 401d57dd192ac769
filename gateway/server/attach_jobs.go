package server

import (
	"context"

	"github.com/valyala/fasthttp"

	"toxgate/catalog/filestore"
	"toxgate/gateway/identity"
	"toxgate/gateway/jobs"
)

// attachJobs serves scoring jobs (POST/GET /jobs, GET/DELETE /jobs/{id})
// to users with the models role and runs this gateway's share of them.
func (a *App) attachJobs(context.Context) error {
	if a.plugins == nil || a.modules == nil {
		return nil
	}
	jc := a.cfg.Jobs
	svc := jobs.New(a.store.DB(), a.modules, a.plugins, filestore.New(a.store.DB(), a.log.With("component", "jobs")).WithDir(a.filesDir()), jobs.Config{
		Workers: jc.Workers, ChunkRows: jc.ChunkRows, CallRows: jc.CallRows, Lease: jc.Lease, Poll: jc.PollInterval,
		MaxRows: jc.MaxRows, MaxResultBytes: int64(a.cfg.Catalog.MaxResourceBytes), SiteURL: a.cfg.Server.PublicURL,
	}, a.log.With("component", "jobs"))
	if jc.Workers > 0 {
		svc.Start()
		a.AddCloser("jobs", svc.Close)
	}
	as := func(h func(*fasthttp.RequestCtx, jobs.Caller)) fasthttp.RequestHandler {
		return a.RequireRole(identity.RoleModels, func(ctx *fasthttp.RequestCtx, c identity.Caller) {
			h(ctx, jobs.Caller{UserID: c.UserID, Name: c.Name, Sysadmin: c.Sysadmin})
		})
	}
	r := a.router
	r.POST("/jobs", as(svc.HandleCreate))
	r.GET("/jobs", as(svc.HandleList))
	r.GET("/jobs/{id}", as(svc.HandleGet))
	r.DELETE("/jobs/{id}", as(svc.HandleCancel))
	return nil
}
