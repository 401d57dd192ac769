package server

import (
	"context"
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/catalogclient"
	"toxgate/gateway/httpcore"
)

// chemMaxQuery bounds /chem/resolve's q before it reaches the catalog
// (the resolver holds the same bound).
const chemMaxQuery = 2000

// attachChem serves GET /chem/resolve?q=: the catalog's compound_resolve
// action (the resolver lives in the catalog plugin, next to the DataStore
// tables registered as dictionaries) answered in the gateway's JSON shape,
// a refused query as 400.
func (a *App) attachChem(context.Context) error {
	a.router.GET("/chem/resolve", a.chemResolve)
	return nil
}

func (a *App) chemResolve(ctx *fasthttp.RequestCtx) {
	q := strings.TrimSpace(string(ctx.QueryArgs().Peek("q")))
	if q == "" {
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", "q is missing: a name, synonym, CAS number, DTXSID, InChIKey or SMILES", "q")
		return
	}
	if len(q) > chemMaxQuery {
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", "q is too long: at most 2000 bytes", "q")
		return
	}
	caller := a.Caller(ctx)
	if caller.Anonymous() {
		caller = a.sessionCaller(ctx)
	}
	var out map[string]any
	err := a.catalog.Do(ctx, caller.Identity, "compound_resolve", map[string]any{"q": q}, &out)
	var ce *catalogclient.Error
	switch {
	case err == nil:
		httpcore.WriteJSON(ctx, fasthttp.StatusOK, out)
	case errors.As(err, &ce) && ce.Err != nil:
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", "the catalog is temporarily unavailable; please retry", "")
	case errors.As(err, &ce) && ce.Status == fasthttp.StatusConflict:
		msg := ce.Message
		if l := ce.Fields["q"]; len(l) > 0 {
			msg = strings.Join(l, "; ")
		}
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", msg, "q")
	case errors.As(err, &ce):
		httpcore.WriteError(ctx, ce.Status, "error", ce.Error(), "")
	default:
		httpcore.WriteError(ctx, fasthttp.StatusBadGateway, "bad_gateway", err.Error(), "")
	}
}
