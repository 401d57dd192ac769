package server

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
	"toxgate/plugins/contract"
)

// ActionHandler serves one CKAN action for an authenticated (or anonymous) caller.
type ActionHandler func(ctx *fasthttp.RequestCtx, action string, caller identity.Caller)

// CoreAction is a CKAN action served by the gateway core itself (the user
// and token actions, which live in the identity store) rather than by a plugin.
type CoreAction struct {
	contract.ActionSpec
	Handle ActionHandler
}

// AddCoreAction serves a CKAN action from the core; it takes precedence over
// plugins declaring the same name.
func (a *App) AddCoreAction(act CoreAction) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.coreActions == nil {
		a.coreActions = map[string]CoreAction{}
	}
	a.coreActions[act.Name] = act
}

// CoreActions lists the actions served by the core (for the API docs).
func (a *App) CoreActions() []CoreAction {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]CoreAction, 0, len(a.coreActions))
	for _, act := range a.coreActions {
		out = append(out, act)
	}
	return out
}

// SetPluginActions installs the handler for actions not served by the core
// (the plugin host); it answers unknown actions itself.
func (a *App) SetPluginActions(h ActionHandler) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pluginActions = h
}

// action serves /api/3/action/{name} and /api/action/{name}.
func (a *App) action(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("name").(string)
	a.mu.Lock()
	core, isCore := a.coreActions[name]
	plugin := a.pluginActions
	a.mu.Unlock()
	caller := a.Caller(ctx)
	defer noSniff(ctx)
	switch {
	case isCore:
		core.Handle(ctx, name, caller)
	case plugin != nil:
		plugin(ctx, name, caller)
	default:
		UnknownAction(ctx, name)
	}
}

// UnknownAction answers as CKAN does for an action nobody serves: 400 with a
// bare JSON string and no envelope.
func UnknownAction(ctx *fasthttp.RequestCtx, name string) {
	ctx.SetStatusCode(fasthttp.StatusBadRequest)
	ctx.SetContentType("application/json;charset=utf-8")
	ctx.SetBody(strconv.AppendQuoteToASCII(nil, "Bad request - Action name not known: "+name))
}

// noSniff tells browsers to take an action reply for its declared type
// only, so that a JSON or JSONP reply is never run as another kind of
// script or page.
func noSniff(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
}
