package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/plugins/contract"
)

// HandleCreate serves POST /jobs for c: 202 with {id, state, status_url}
// and Location once the input is staged and the job queued.
func (s *Service) HandleCreate(ctx *fasthttp.RequestCtx, c contract.Identity) {
	var req Request
	dec := json.NewDecoder(bytesReader(ctx.PostBody()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "invalid_json", "the body must be a JSON object {model, resource_id, package_id, smiles_column}: "+err.Error(), "")
		return
	}
	rctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, err := s.Create(rctx, c, req)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	ctx.Response.Header.Set("Location", st.StatusURL)
	httpcore.WriteJSON(ctx, fasthttp.StatusAccepted, map[string]any{"id": st.ID, "state": st.State, "status_url": st.StatusURL, "total": st.Total})
}

// HandleRerun serves POST /jobs/{id}/rerun: 202 with the new job, which
// scores the same input version with today's module; its GET /jobs/{id}
// answers the differences once it succeeded.
func (s *Service) HandleRerun(ctx *fasthttp.RequestCtx, c contract.Identity) {
	id, _ := ctx.UserValue("id").(string)
	rctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, err := s.Rerun(rctx, c, id)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	ctx.Response.Header.Set("Location", st.StatusURL)
	httpcore.WriteJSON(ctx, fasthttp.StatusAccepted, map[string]any{"id": st.ID, "state": st.State, "status_url": st.StatusURL, "total": st.Total,
		"rerun_of": id, "input_version": st.InputVersion})
}

// HandleGet serves GET /jobs/{id}.
func (s *Service) HandleGet(ctx *fasthttp.RequestCtx, c contract.Identity) {
	id, _ := ctx.UserValue("id").(string)
	st, err := s.Get(ctx, c, id)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, st)
}

// HandleCancel serves DELETE /jobs/{id}.
func (s *Service) HandleCancel(ctx *fasthttp.RequestCtx, c contract.Identity) {
	id, _ := ctx.UserValue("id").(string)
	st, err := s.Cancel(ctx, c, id)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, st)
}

// HandleList serves GET /jobs: the caller's jobs, newest first.
func (s *Service) HandleList(ctx *fasthttp.RequestCtx, c contract.Identity) {
	list, err := s.List(ctx, c)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"jobs": list})
}

// RetryAfterBusy is the Retry-After, in seconds, of the 429 for a user
// with jobs.max_per_user jobs queued or running.
const RetryAfterBusy = "30"

func writeErr(ctx *fasthttp.RequestCtx, err error) {
	var e *Error
	if errors.As(err, &e) {
		if e.Status == fasthttp.StatusTooManyRequests {
			ctx.Response.Header.Set("Retry-After", RetryAfterBusy)
		}
		httpcore.WriteError(ctx, e.Status, e.Code, e.Message, e.Field)
		return
	}
	httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", err.Error(), "")
}
