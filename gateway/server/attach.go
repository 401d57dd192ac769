package server

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
)

// Attach builds the parts in the order they depend on each other, each
// from the concrete parts before it: identity (accounts, tokens, sessions,
// request authentication), the file store, the OpenID Connect provider,
// the plugin host (the catalog, its client and
// the file routes), the module host (the model API), scoring jobs, the
// models' datasets, and last the web pages and DCAT endpoints, which use
// all of them. Each part registers its routes, readiness checks,
// reloaders and closers.
func Attach(ctx context.Context, a *App) error {
	steps := []struct {
		name   string
		attach func(context.Context) error
	}{
		{"identity", a.attachIdentity},
		{"files", a.attachFiles},
		{"oidc provider", a.attachOIDCProvider},
		{"plugins", a.attachPlugins},
		{"uploads", a.attachUploads},
		{"modules", a.attachModules},
		{"jobs", a.attachJobs},
		{"modelcat", a.attachModelCatalog},
		{"chem", a.attachChem},
		{"web", a.attachWeb},
		{"metrics", a.attachMetrics},
	}
	for _, s := range steps {
		if err := s.attach(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// Listen opens the TCP listener for addr.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// URL is the base URL users reach the gateway at.
func (a *App) URL(addr net.Addr) string {
	return SiteURL(a.cfg.Server.PublicURL, addr.String())
}

// SiteURL is the gateway's external base URL, without a trailing slash:
// publicURL (server.public_url) when set, else http:// and the address it
// listens on (main passes the listener's, so a port 0 is the real one).
// Links in e-mails, CKAN's answers and the URLs the catalog stores for
// uploaded files are made from it; a request's Host header never is.
func SiteURL(publicURL, listenAddr string) string {
	if publicURL != "" {
		return strings.TrimRight(publicURL, "/")
	}
	return "http://" + listenAddr
}

// Banner is what the server prints after it starts (how to log in and so on).
func (a *App) Banner() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.banner...)
}

// AddBanner adds a line to what is printed at start.
func (a *App) AddBanner(line string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.banner = append(a.banner, line)
}

// Reload reloads every reloadable part (SIGHUP).
func (a *App) Reload(ctx context.Context) {
	a.mu.Lock()
	rs := append([]namedReloader(nil), a.reloaders...)
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.reload(ctx); err != nil {
				a.log.Error("reload failed", "part", r.name, "err", err)
			} else {
				a.log.Info("reloaded", "part", r.name)
			}
		}()
	}
	wg.Wait()
}

type namedReloader struct {
	name   string
	reload func(context.Context) error
}

// AddReloader registers a part reloaded on SIGHUP.
func (a *App) AddReloader(name string, r func(context.Context) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reloaders = append(a.reloaders, namedReloader{name, r})
}
