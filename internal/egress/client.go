package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// dialTimeout bounds one connection attempt.
const dialTimeout = 30 * time.Second

// ErrScheme is a URL whose scheme is not http or https.
var ErrScheme = errors.New("only http and https URLs can be fetched")

// errTooManyRedirects is a fetch that was redirected more than the cap.
var errTooManyRedirects = errors.New("too many redirects")

// CheckURL refuses what no fetch may ask for, before any connection: a
// scheme other than http and https, or no host.
func CheckURL(u *url.URL) error {
	if u == nil {
		return fmt.Errorf("egress: no URL: %w", ErrScheme)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return fmt.Errorf("egress: scheme %q: %w", u.Scheme, ErrScheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("egress: the URL has no host: %w", ErrScheme)
	}
	return nil
}

// DialContext connects for an outbound fetch: addr's host is resolved as
// usual, and each address the dialer is about to connect to is checked by
// the policy (net.Dialer.Control), so what is checked is what is dialled.
// Only TCP is dialled.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, &DeniedError{Host: addr, Reason: "network " + network}
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s: %w", addr, err)
	}
	d := net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second,
		Control: func(nw, address string, _ syscall.RawConn) error {
			if nw != "tcp4" && nw != "tcp6" {
				return &DeniedError{Host: host, Addr: address, Reason: "network " + nw}
			}
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &DeniedError{Host: host, Addr: address, Reason: "unreadable address"}
			}
			return p.Check(host, ap)
		}}
	return d.DialContext(ctx, network, addr)
}

// Transport is an http.Transport whose every connection goes through
// DialContext. It uses no proxy: a proxy from the environment would be
// the address checked, not the destination.
func (p *Policy) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           p.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Client is an http.Client through Transport that checks every redirect
// (scheme, and through the dialer the address) and follows at most
// MaxRedirects of them. timeout bounds each request whole (0: none; the
// request's context and Get's options bound it then).
func (p *Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: p.Transport(), Timeout: timeout, CheckRedirect: p.checkRedirect}
}

func (p *Policy) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > p.MaxRedirects() {
		return fmt.Errorf("egress: more than %d redirects: %w", p.MaxRedirects(), errTooManyRedirects)
	}
	return CheckURL(req.URL)
}
