package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
	"toxgate/gateway/jobs"
)

// Jobs is the scoring-job service as the job pages use it, always on
// behalf of the page's user (the same rules as /jobs in the API).
type Jobs interface {
	CreateJob(ctx context.Context, c identity.Caller, req jobs.Request) (*jobs.Status, error)
	Job(ctx context.Context, c identity.Caller, id string) (*jobs.Status, error)
	ListJobs(ctx context.Context, c identity.Caller) ([]*jobs.Status, error)
	CancelJob(ctx context.Context, c identity.Caller, id string) (*jobs.Status, error)
}

// jobView is one job as the pages show it.
type jobView struct {
	*jobs.Status
	Percent    int
	Running    bool
	Progress   string
	ResultHref string
	InputHref  string
}

func newJobView(st *jobs.Status) jobView {
	v := jobView{Status: st, Running: !jobs.Terminal(st.State), Progress: progressText(st)}
	if st.Total > 0 {
		v.Percent = int(math.Floor(100 * float64(st.Done) / float64(st.Total)))
	}
	if st.ResultResourceID != "" {
		v.ResultHref = "/dataset/" + url.PathEscape(st.PackageID) + "/resource/" + url.PathEscape(st.ResultResourceID)
	}
	return v
}

// progressText is the line under a job's progress bar: "1,200 of 5,000
// rows · 850 rows/s · about 5 s left".
func progressText(st *jobs.Status) string {
	parts := []string{thousands(st.Done) + " of " + thousands(st.Total) + " rows"}
	if st.FailedRows > 0 {
		parts = append(parts, thousands(st.FailedRows)+" with an error")
	}
	if !jobs.Terminal(st.State) && st.RowsPerSecond > 0 {
		parts = append(parts, strconv.FormatFloat(st.RowsPerSecond, 'f', 0, 64)+" rows/s")
	}
	if !jobs.Terminal(st.State) && st.ETASeconds != nil {
		parts = append(parts, "about "+durationText(*st.ETASeconds)+" left")
	}
	return strings.Join(parts, " · ")
}

func durationText(sec float64) string {
	switch s := int(math.Ceil(sec)); {
	case s < 60:
		return strconv.Itoa(s) + " s"
	case s < 3600:
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	default:
		return fmt.Sprintf("%d h %d min", s/3600, s/60%60)
	}
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// jobsUser wraps a job page: a logged-in user with the models role.
func (w *Web) jobsUser(h func(*req)) fasthttp.RequestHandler {
	return w.auth(false, func(r *req) {
		if w.o.Jobs == nil {
			w.render(r, fasthttp.StatusServiceUnavailable, "message", "Jobs unavailable", map[string]string{"Text": "Scoring jobs are not running on this gateway."}, "", "")
			return
		}
		if !r.caller().HasRole(identity.RoleModels) {
			w.render(r, fasthttp.StatusForbidden, "message", "Not allowed", map[string]string{"Text": "Scoring jobs need the models role; ask a sysadmin for it."}, "", "")
			return
		}
		h(r)
	})
}

// JobsPage serves GET /jobs to a browser: the user's jobs, newest first,
// each with its progress bar.
func (w *Web) JobsPage(ctx *fasthttp.RequestCtx) {
	w.jobsUser(func(r *req) {
		list, err := w.o.Jobs.ListJobs(r.c, r.caller())
		if err != nil {
			w.jobFail(r, err)
			return
		}
		views := make([]jobView, len(list))
		for i, st := range list {
			views[i] = newJobView(st)
		}
		w.render(r, fasthttp.StatusOK, "jobs", "Scoring jobs", views, "", "")
	})(ctx)
}

// JobPage serves GET /jobs/{id} to a browser: one job, its progress bar
// (updated by the script from /jobs/{id}/progress, or by a page refresh
// without it), its result and a Cancel button.
func (w *Web) JobPage(ctx *fasthttp.RequestCtx) {
	w.jobsUser(func(r *req) {
		st, err := w.o.Jobs.Job(r.c, r.caller(), pathValue(r, "id"))
		if err != nil {
			w.jobFail(r, err)
			return
		}
		v := newJobView(st)
		w.renderRefresh(r, "job", "Job "+st.ID, v, v.Running)
	})(ctx)
}

// jobProgress serves GET /jobs/{id}/progress: the progress bar's numbers
// as JSON for the page's script (session cookie, not a token).
func (w *Web) jobProgress(ctx *fasthttp.RequestCtx) {
	r := w.load(ctx)
	if r.sess == nil || w.o.Jobs == nil || !r.caller().HasRole(identity.RoleModels) {
		httpcore.WriteError(ctx, fasthttp.StatusUnauthorized, "unauthorized", "log in with a user that has the models role", "")
		return
	}
	st, err := w.o.Jobs.Job(r.c, r.caller(), pathValue(r, "id"))
	if err != nil {
		var je *jobs.Error
		if errors.As(err, &je) {
			httpcore.WriteError(ctx, je.Status, je.Code, je.Message, je.Field)
			return
		}
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", err.Error(), "")
		return
	}
	v := newJobView(st)
	ctx.Response.Header.Set("Cache-Control", "no-store")
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"state": st.State, "done": st.Done, "total": st.Total,
		"percent": v.Percent, "text": v.Progress, "running": v.Running, "result_href": v.ResultHref, "error": st.Error})
}

// jobCancel serves POST /jobs/{id}/cancel from the job page.
func (w *Web) jobCancel(r *req) {
	id := pathValue(r, "id")
	if _, err := w.o.Jobs.CancelJob(r.c, r.caller(), id); err != nil {
		w.jobFail(r, err)
		return
	}
	redirect(r.ctx, "/jobs/"+url.PathEscape(id))
}

// jobFail shows a refused job request with its status and message.
func (w *Web) jobFail(r *req, err error) {
	var je *jobs.Error
	if errors.As(err, &je) {
		title := "Job refused"
		if je.Status == fasthttp.StatusNotFound {
			title = "No such job"
		}
		w.render(r, je.Status, "message", title, map[string]string{"Text": je.Message}, "", "")
		return
	}
	w.log.Warn("web: jobs", "err", err)
	w.render(r, fasthttp.StatusServiceUnavailable, "message", "Jobs unavailable", map[string]string{"Text": "The job service could not answer; try again."}, "", "")
}

// scoreModel is a model the resource page offers for scoring: one that
// takes a list of SMILES.
type scoreModel struct {
	Name, Title, Path string
}

// scoreModels lists the models whose routes score a list of SMILES.
func (w *Web) scoreModels(r *req) []scoreModel {
	if w.o.Models == nil || w.o.Backend == nil {
		return nil
	}
	var out []scoreModel
	for _, m := range w.o.Models(r.c) {
		info, ok := w.o.Backend.Model(m.Name)
		if !ok {
			continue
		}
		for _, rt := range info.Routes {
			var s schema
			if json.Unmarshal(rt.InputSchema, &s) != nil {
				continue
			}
			if p := s.Properties["smiles"]; p != nil && p.takesList() {
				title := info.Title
				if title == "" {
					title = info.Name
				}
				out = append(out, scoreModel{Name: info.Name, Title: title, Path: rt.Path})
			}
		}
	}
	return out
}

// resourceScore serves POST /dataset/{id}/resource/{resource_id}/score:
// the resource page's form starts a scoring job whose result goes into
// the same dataset, then shows the job's page.
func (w *Web) resourceScore(r *req) {
	args := r.ctx.PostArgs()
	req := jobs.Request{Model: string(args.Peek("model")), ResourceID: pathValue(r, "resource_id"),
		SMILESColumn: string(args.Peek("smiles_column")), PackageID: pathValue(r, "id")}
	st, err := w.o.Jobs.CreateJob(r.c, r.caller(), req)
	if err != nil {
		w.jobFail(r, err)
		return
	}
	redirect(r.ctx, "/jobs/"+url.PathEscape(st.ID))
}
