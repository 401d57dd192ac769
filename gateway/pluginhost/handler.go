package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/catalog/ckan"
	"toxgate/plugins/contract"
)

// TypeUnavailable is the error __type of the 503 reply while a plugin is down.
const TypeUnavailable = "Service Unavailable"

// HandleAction answers one CKAN action request: unknown actions get CKAN's
// bare-string 400, a GET of a POST-only action CKAN's 400, a plugin that is
// down a CKAN-shaped 503 at once; otherwise the request goes raw to the
// plugin and its status, content type and body are returned as they are
// (with Retry-After on a 503, such as the catalog's while it loads).
func (h *Host) HandleAction(ctx *fasthttp.RequestCtx, action string, caller Identity) {
	h.HandleActionWith(ctx, action, caller, string(ctx.Request.Header.ContentType()), ctx.PostBody(), nil)
}

// SiteURL is the public base URL (Config.SiteURL); never the request's
// Host header, which a client chooses.
func (h *Host) SiteURL(*fasthttp.RequestCtx) string {
	return h.cfg.SiteURL
}

// HandleActionWith is HandleAction with the body given (a streamed upload's
// form fields) and the file the gateway stored from it.
func (h *Host) HandleActionWith(ctx *fasthttp.RequestCtx, action string, caller Identity, contentType string, body []byte, upload *contract.Upload) {
	arrived := contract.Monotonic()
	site := h.SiteURL(ctx)
	r, ok := (*h.routes.Load())[action]
	if ok && r.spec.Internal {
		ok = false
	}
	if !ok {
		if down := h.notRunning(); down != "" {
			// The action may be that plugin's: it is not known until the
			// plugin runs, so a valid call is told to retry, not refused.
			ctx.Response.Header.Set("Retry-After", "5")
			writeCKAN(ctx, ckan.Failure(site, action, &ckan.Error{Status: fasthttp.StatusServiceUnavailable, Type: TypeUnavailable,
				Message: "The " + down + " service is not running; please retry"}))
			return
		}
		writeCKAN(ctx, ckan.Failure(site, action, ckan.UnknownAction(action)))
		return
	}
	method := string(ctx.Method())
	if method != fasthttp.MethodPost && !r.spec.GET {
		writeCKAN(ctx, ckan.Failure(site, action, ckan.POSTRequired()))
		return
	}
	req := &contract.Request{
		Action:      action,
		Method:      method,
		ContentType: contentType,
		Query:       string(ctx.URI().QueryString()),
		Body:        append([]byte(nil), body...),
		SiteURL:     site,
		Caller:      caller,
		Upload:      upload,
		Arrived:     arrived,
	}
	start := time.Now()
	resp, err := h.call(context.WithoutCancel(ctx), r.m, req)
	h.metrics.seconds.WithLabelValues(r.m.cfg.Name).Observe(time.Since(start).Seconds())
	if err != nil {
		status := 503
		msg := "The " + r.m.cfg.Name + " service is temporarily unavailable; please retry"
		if errors.Is(err, context.DeadlineExceeded) {
			status, msg = 504, "The "+r.m.cfg.Name+" service did not answer in time"
		}
		h.metrics.calls.WithLabelValues(r.m.cfg.Name, action, strconv.Itoa(status)).Inc()
		ctx.Response.Header.Set("Retry-After", "1")
		writeCKAN(ctx, ckan.Failure(site, action, &ckan.Error{Status: status, Type: TypeUnavailable, Message: msg}))
		return
	}
	h.metrics.calls.WithLabelValues(r.m.cfg.Name, action, strconv.Itoa(resp.Status)).Inc()
	if resp.Status == fasthttp.StatusServiceUnavailable {
		// the plugin cannot answer yet (the catalog loads): retry soon
		ctx.Response.Header.Set("Retry-After", "1")
	}
	ctx.SetStatusCode(resp.Status)
	ctx.SetContentType(resp.ContentType)
	ctx.SetBody(resp.Body)
}

// CallInternal runs an internal action (one the plugin marks Internal, such
// as the catalog's resource_file) with a JSON body and returns the plugin's
// reply: status and the CKAN envelope.
func (h *Host) CallInternal(action, siteURL string, caller Identity, body []byte) (*contract.Response, error) {
	return h.CallInternalContext(context.Background(), action, siteURL, caller, body)
}

// CallInternalContext is CallInternal on behalf of ctx (a request's
// context: its values; it is not cancelled by a shutdown, see
// httpcore.RequestContext), within plugins.call_timeout.
func (h *Host) CallInternalContext(ctx context.Context, action, siteURL string, caller Identity, body []byte) (*contract.Response, error) {
	r, ok := (*h.routes.Load())[action]
	if !ok {
		return nil, fmt.Errorf("pluginhost: no plugin serves %s", action)
	}
	return h.call(ctx, r.m, &contract.Request{Action: action, Method: fasthttp.MethodPost, ContentType: "application/json",
		Body: body, SiteURL: siteURL, Caller: caller})
}

// Call runs action (one served over HTTP or an internal one) outside of an
// HTTP request, as caller, with body of contentType and optionally a file
// the gateway stored, and returns the plugin's reply (status, CKAN envelope).
func (h *Host) Call(action, siteURL string, caller Identity, contentType string, body []byte, upload *contract.Upload) (*contract.Response, error) {
	return h.CallContext(context.Background(), action, siteURL, caller, contentType, body, upload)
}

// CallContext is Call on behalf of ctx, within plugins.call_timeout.
func (h *Host) CallContext(ctx context.Context, action, siteURL string, caller Identity, contentType string, body []byte, upload *contract.Upload) (*contract.Response, error) {
	r, ok := (*h.routes.Load())[action]
	if !ok {
		return nil, fmt.Errorf("pluginhost: no plugin serves %s", action)
	}
	return h.call(ctx, r.m, &contract.Request{Action: action, Method: fasthttp.MethodPost, ContentType: contentType,
		Body: body, SiteURL: siteURL, Caller: caller, Upload: upload})
}

// errDown means the plugin has no running process.
var errDown = errors.New("plugin is down")

// call sends req to the current process of m, following a swap that
// happens between picking the process and registering the call; it waits
// for the answer until ctx ends or plugins.call_timeout passes.
func (h *Host) call(parent context.Context, m *managed, req *contract.Request) (*contract.Response, error) {
	for {
		inst := m.cur.Load()
		if inst == nil {
			return nil, errDown
		}
		if !inst.acquire() {
			if m.cur.Load() == inst {
				return nil, errDown
			}
			continue
		}
		ctx, cancel := context.WithTimeout(parent, h.cfg.CallTimeout)
		resp, err := inst.rpc.Call(ctx, req)
		cancel()
		inst.release()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			if inst.client.Exited() || inst.proto.Ping() != nil {
				m.crashed(inst, err)
			} else {
				m.log.Warn("plugin call failed", "action", req.Action, "err", err)
			}
		}
		return resp, err
	}
}

func writeCKAN(ctx *fasthttp.RequestCtx, r ckan.Response) {
	ctx.SetStatusCode(r.Status)
	ctx.SetContentType(r.ContentType)
	ctx.SetBody(r.Body)
}
