package oidcprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/httpcore"
	"toxgate/gateway/identity"
)

// ClientsAPIPrefix is the JSON API of `toxgate client ...` (sysadmins).
const ClientsAPIPrefix = "/admin/api/clients"

// KeyRotateAPIPath rotates the signing key (`toxgate client rotate-key`).
const KeyRotateAPIPath = "/admin/api/oidc/rotate-key"

// maxAdminBody bounds a client registration's JSON.
const maxAdminBody = 64 << 10

// Guard wraps an admin handler: it runs only for a sysadmin (or the local
// admin key of the CLI).
type Guard func(next func(*fasthttp.RequestCtx, identity.Caller)) fasthttp.RequestHandler

// CreatedClient is the answer to a registration: the client and, for a
// confidential client, its secret (shown this once).
type CreatedClient struct {
	Client       *Client `json:"client"`
	ClientSecret string  `json:"client_secret,omitempty"`
	Issuer       string  `json:"issuer"`
}

// CreateClient registers a client; by names who did it (for the log).
func (p *Provider) CreateClient(ctx context.Context, in NewClient, by string) (*Client, string, error) {
	cl, secret, err := p.st.clients.create(ctx, in, p.o.Identity.Roles(), by)
	if err != nil {
		return nil, "", err
	}
	p.o.Logger.Info("oidc provider: client registered", "client", cl.ID, "public", cl.Public, "roles", cl.Roles, "by", by)
	return cl, secret, nil
}

// RotateKey makes a new signing key at once; the old ones stay published
// until the tokens they signed expire. It returns the new key's id.
func (p *Provider) RotateKey(ctx context.Context) (string, error) {
	k, err := p.st.keys.rotate(ctx)
	if err != nil {
		return "", err
	}
	return k.doc.ID, nil
}

// RegisterAdminAPI adds the clients API and key rotation to r, behind guard.
func (p *Provider) RegisterAdminAPI(r *router.Router, guard Guard) {
	r.GET(ClientsAPIPrefix, guard(p.adminList))
	r.POST(ClientsAPIPrefix, guard(p.adminCreate))
	r.DELETE(ClientsAPIPrefix+"/{id}", guard(p.adminDelete))
	r.POST(KeyRotateAPIPath, guard(p.adminRotate))
}

func (p *Provider) adminCtx(ctx *fasthttp.RequestCtx) (context.Context, context.CancelFunc) {
	return httpcore.RequestContext(ctx, p.o.Timeout)
}

func (p *Provider) adminList(ctx *fasthttp.RequestCtx, _ identity.Caller) {
	cctx, cancel := p.adminCtx(ctx)
	defer cancel()
	cls, err := p.st.clients.list(cctx)
	if err != nil {
		p.o.Logger.Error("oidc provider: list clients", "err", err)
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", "the store did not answer", "")
		return
	}
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"clients": cls, "issuer": p.issuer})
}

func (p *Provider) adminCreate(ctx *fasthttp.RequestCtx, c identity.Caller) {
	body := ctx.PostBody()
	if len(body) > maxAdminBody {
		httpcore.WriteError(ctx, fasthttp.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("body larger than %d bytes", maxAdminBody), "")
		return
	}
	var in NewClient
	if err := json.Unmarshal(body, &in); err != nil {
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "bad_request", "body must be a JSON object: "+err.Error(), "")
		return
	}
	cctx, cancel := p.adminCtx(ctx)
	defer cancel()
	cl, secret, err := p.CreateClient(cctx, in, c.Name)
	var verr *ValidationError
	switch {
	case errors.As(err, &verr):
		httpcore.WriteError(ctx, fasthttp.StatusBadRequest, "validation", verr.Error(), verr.Field)
	case errors.Is(err, ErrClientExists):
		httpcore.WriteError(ctx, fasthttp.StatusConflict, "exists", "a client named "+in.Name+" is registered already", "name")
	case errors.Is(err, ErrTooManyClients):
		httpcore.WriteError(ctx, fasthttp.StatusConflict, "too_many", err.Error(), "")
	case err != nil:
		p.o.Logger.Error("oidc provider: create client", "err", err)
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", "the store did not answer", "")
	default:
		httpcore.WriteJSON(ctx, fasthttp.StatusCreated, CreatedClient{Client: cl, ClientSecret: secret, Issuer: p.issuer})
	}
}

func (p *Provider) adminDelete(ctx *fasthttp.RequestCtx, c identity.Caller) {
	id, _ := ctx.UserValue("id").(string)
	cctx, cancel := p.adminCtx(ctx)
	defer cancel()
	err := p.st.clients.remove(cctx, id)
	if err == nil {
		err = p.st.revokeClient(cctx, id)
	}
	switch {
	case errors.Is(err, ErrNoClient):
		httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "no such client", "")
	case err != nil:
		p.o.Logger.Error("oidc provider: delete client", "err", err)
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", "the store did not answer", "")
	default:
		p.o.Logger.Info("oidc provider: client deleted", "client", id, "by", c.Name)
		httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"deleted": id})
	}
}

func (p *Provider) adminRotate(ctx *fasthttp.RequestCtx, c identity.Caller) {
	cctx, cancel := p.adminCtx(ctx)
	defer cancel()
	kid, err := p.RotateKey(cctx)
	if err != nil {
		p.o.Logger.Error("oidc provider: rotate key", "err", err)
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", "the store did not answer", "")
		return
	}
	p.o.Logger.Info("oidc provider: signing key rotated", "kid", kid, "by", c.Name)
	httpcore.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"kid": kid})
}
