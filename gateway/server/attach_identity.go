package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
	"toxgate/gateway/identity/oidc"
	"toxgate/gateway/identityhttp"
	"toxgate/gateway/web"
	"toxgate/plugins/contract"
)

// AdminKeyFile is the file, next to the embedded store's data directory,
// where a gateway on the embedded store writes the key with which
// `toxgate user ...` on the same machine calls its admin API.
func AdminKeyFile(dataDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(dataDir)), "admin.key")
}

// attachIdentity connects the identity part: accounts and tokens in the
// store, request authentication, the CKAN user and token actions, the
// external-authorization check, the admin API, and the first sysadmin.
func (a *App) attachIdentity(ctx context.Context) error {
	cfg := a.cfg
	st := identity.NewStore(a.store.DB())
	if err := st.EnsureIndexes(ctx); err != nil {
		return err
	}
	a.users = st
	var verifier *oidc.Verifier
	if cfg.OIDC.Issuer != "" {
		v, err := oidc.New(oidc.Config{Issuer: cfg.OIDC.Issuer, Audience: cfg.OIDC.Audience, JWKSURL: cfg.OIDC.JWKSURL,
			RolesClaim: cfg.OIDC.RolesClaim, UserClaim: cfg.OIDC.UserClaim})
		if err != nil {
			return fmt.Errorf("oidc: %w", err)
		}
		verifier = v
		a.log.Info("accepting OIDC bearer tokens", "issuer", cfg.OIDC.Issuer, "audience", cfg.OIDC.Audience)
	}
	svc := identity.NewService(st, identity.Options{
		Auth: cfg.Auth, OIDC: verifier, Mailer: identity.NewMailer(cfg.SMTP, a.log), Logger: a.log,
	})
	hs := identityhttp.New(svc, identityhttp.Options{Timeout: cfg.Server.WriteTimeout, SiteURL: a.siteURL,
		CreatedPackages: a.createdPackages, PublicUserDetails: cfg.Catalog.Auth.PublicUserDetails, Logger: a.log})
	a.SetAuthenticator(hs)
	a.identity = svc
	a.sessionCaller = func(ctx *fasthttp.RequestCtx) identity.Caller {
		cookie := string(ctx.Request.Header.Cookie(web.SessionCookie))
		if cookie == "" {
			return identity.Caller{}
		}
		_, u, err := svc.SessionUser(ctx, cookie)
		if err != nil || u.State != identity.StateActive || !u.FirstLoginDone() {
			return identity.Caller{}
		}
		return u.Caller("session")
	}

	for _, act := range hs.Actions() {
		a.AddCoreAction(CoreAction{ActionSpec: act.ActionSpec, Handle: act.Handle})
	}

	check := hs.ExtAuthz("/auth/check", cfg.Modules.RequireToken)
	a.router.ANY("/auth/check", check)
	a.router.ANY("/auth/check/{path:*}", check)

	localKey := ""
	if a.store.Embedded() {
		localKey = identity.RandomToken()
		keyFile := AdminKeyFile(cfg.MongoDB.DataDir)
		if err := os.WriteFile(keyFile, []byte(localKey+"\n"), 0o600); err != nil {
			return fmt.Errorf("write admin key: %w", err)
		}
		a.AddCloser("admin key", func(context.Context) error {
			if err := os.Remove(keyFile); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("remove admin key: %w", err)
			}
			return nil
		})
	}
	hs.RegisterAdminAPI(a.router, localKey)
	a.adminGuard = hs.AdminGuard(localKey)

	created, generated, err := svc.EnsureSysadmin(ctx, cfg.Auth.AdminUsername, cfg.Auth.AdminEmail, cfg.Auth.AdminPassword)
	if err != nil {
		return err
	}
	if created {
		login := SiteURL(cfg.Server.PublicURL, cfg.Server.Addr) + "/login"
		if generated != "" {
			a.AddBanner(fmt.Sprintf("First sysadmin created: log in at %s as %q with the initial password %s", login, cfg.Auth.AdminUsername, generated))
			a.AddBanner(fmt.Sprintf("(shown only this once; at first login you verify %s through the link written to the log and choose a new password)", cfg.Auth.AdminEmail))
		} else {
			a.AddBanner(fmt.Sprintf("First sysadmin %q created with the password from auth.admin_password; log in at %s", cfg.Auth.AdminUsername, login))
		}
	}
	return nil
}

// siteURL is the external base URL (CKAN's "help" links, DCAT):
// server.public_url, which main sets from the listener when it is empty
// (SiteURL), never the request's Host header.
func (a *App) siteURL(*fasthttp.RequestCtx) string {
	return SiteURL(a.cfg.Server.PublicURL, a.cfg.Server.Addr)
}

// modelIndex is the model index (GET /models) from the module host, for
// the dashboard.
func (a *App) modelIndex(context.Context) []web.Model {
	models := a.modules.Models()
	out := make([]web.Model, 0, len(models))
	for _, m := range models {
		wm := web.Model{Name: m.Name, Title: m.Title, Status: m.Status}
		for _, r := range m.Routes {
			wm.Paths = append(wm.Paths, r.Path)
		}
		out = append(out, wm)
	}
	return out
}

// createdPackages counts each user's active datasets (CKAN's
// number_created_packages), public ones or all, by asking the catalog
// plugin, which owns the datasets; none when it does not answer. It runs
// on requests only, once attachPlugins has made the catalog client.
func (a *App) createdPackages(ctx context.Context, includePrivate bool) map[string]int {
	out := map[string]int{}
	body := []byte(`{"include_private": false}`)
	if includePrivate {
		body = []byte(`{"include_private": true}`)
	}
	var counts map[string]int
	if err := a.catalog.Do(ctx, contract.Identity{Sysadmin: true}, "user_package_counts", body, &counts); err == nil && counts != nil {
		out = counts
	}
	return out
}
