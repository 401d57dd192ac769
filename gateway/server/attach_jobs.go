package server

import (
	"context"
	"sync"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
	"toxgate/gateway/jobs"
	"toxgate/gateway/web"
	"toxgate/plugins/contract"
)

// attachJobs serves scoring jobs (POST/GET /jobs, GET/DELETE /jobs/{id})
// to users with the models role and runs this gateway's share of them.
func (a *App) attachJobs(context.Context) error {
	jc := a.cfg.Jobs
	svc := jobs.New(a.store.DB(), a.modules, a.catalog, a.fileStore, jobs.Config{
		Workers: jc.Workers, ChunkRows: jc.ChunkRows, CallRows: jc.CallRows, Lease: jc.Lease, Poll: jc.PollInterval,
		MaxRows: jc.MaxRows, MaxResultBytes: int64(a.cfg.Catalog.MaxResourceBytes), SiteURL: SiteURL(a.cfg.Server.PublicURL, a.cfg.Server.Addr),
		MaxPerUser: jc.MaxPerUser, VersionInput: jc.VersionInput,
	}, a.log.With("component", "jobs"))
	a.jobs = svc
	if jc.Workers > 0 {
		a.startJobsAfterModules(svc)
	}
	as := func(h func(*fasthttp.RequestCtx, contract.Identity)) fasthttp.RequestHandler {
		return a.RequireRole(identity.RoleModels, func(ctx *fasthttp.RequestCtx, c identity.Caller) {
			h(ctx, jobsCaller(c))
		})
	}
	// A browser (Accept: text/html) gets the job pages, which use the
	// session; API clients get JSON.
	orPage := func(page, api fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			if web.WantsHTML(ctx) {
				page(ctx)
				return
			}
			api(ctx)
		}
	}
	r := a.router
	r.POST("/jobs", as(svc.HandleCreate))
	r.GET("/jobs", orPage(a.pagesHandler((*web.Web).JobsPage), as(svc.HandleList)))
	r.GET("/jobs/{id}", orPage(a.pagesHandler((*web.Web).JobPage), as(svc.HandleGet)))
	r.DELETE("/jobs/{id}", as(svc.HandleCancel))
	r.POST("/jobs/{id}/rerun", as(svc.HandleRerun))
	return nil
}

// startJobsAfterModules starts the job workers once the modules directory
// is loaded (a chunk picked up before would find its model missing), and
// stops them at shutdown.
func (a *App) startJobsAfterModules(svc *jobs.Service) {
	var mu sync.Mutex
	closed := false
	stop := make(chan struct{})
	go func() {
		select {
		case <-a.modules.Loaded():
		case <-stop:
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !closed {
			svc.Start()
		}
	}()
	a.AddCloser("jobs", func(ctx context.Context) error {
		mu.Lock()
		closed = true
		mu.Unlock()
		close(stop)
		return svc.Close(ctx)
	})
}

// pagesHandler is a page of the web pages as a handler; the pages are read
// on requests only (attachWeb makes them after the jobs).
func (a *App) pagesHandler(page func(*web.Web, *fasthttp.RequestCtx)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) { page(a.pages, ctx) }
}

// webJobs serves the job pages from the jobs service, as the page's user.
type webJobs struct{ svc *jobs.Service }

func jobsCaller(c identity.Caller) contract.Identity {
	return c.Identity
}

func (w webJobs) CreateJob(ctx context.Context, c identity.Caller, req jobs.Request) (*jobs.Status, error) {
	return w.svc.Create(ctx, jobsCaller(c), req)
}

func (w webJobs) Job(ctx context.Context, c identity.Caller, id string) (*jobs.Status, error) {
	return w.svc.Get(ctx, jobsCaller(c), id)
}

func (w webJobs) ListJobs(ctx context.Context, c identity.Caller) ([]*jobs.Status, error) {
	return w.svc.List(ctx, jobsCaller(c))
}

func (w webJobs) CancelJob(ctx context.Context, c identity.Caller, id string) (*jobs.Status, error) {
	return w.svc.Cancel(ctx, jobsCaller(c), id)
}
