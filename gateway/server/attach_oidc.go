package server

import (
	"context"
	"fmt"

	"toxgate/gateway/oidcprovider"
	"toxgate/gateway/web"
)

// attachOIDCProvider makes the gateway an OpenID Connect provider
// (oidc_provider.enabled): its endpoints under /oidc, the clients API and
// key rotation under /admin/api, the clients page /admin/clients, and acceptance of its access tokens as
// Bearer tokens on every route.
func (a *App) attachOIDCProvider(ctx context.Context) error {
	cfg := a.cfg
	if !cfg.OIDCProvider.Enabled || a.identity == nil {
		return nil
	}
	p, err := oidcprovider.New(ctx, oidcprovider.Options{
		Config: cfg.OIDCProvider, SiteURL: SiteURL(cfg.Server.PublicURL, cfg.Server.Addr), DB: a.store.DB(),
		Identity: a.identity, SessionCookie: web.SessionCookie, SecureCookies: cfg.Auth.SecureCookies,
		Timeout: cfg.Server.WriteTimeout, Logger: a.log,
	})
	if err != nil {
		return fmt.Errorf("oidc provider: %w", err)
	}
	p.Register(a.router)
	p.RegisterAdminAPI(a.router, a.adminGuard)
	p.RegisterAdminPage(a.router)
	a.identity.SetProviderTokens(p)
	a.log.Info("OpenID Connect provider", "issuer", p.Issuer())
	return nil
}
