package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// The texts a fetch's failure shows to users. They do not tell a refused
// connection from a timeout or a reset, so that fetching cannot be used
// to scan ports; the cause goes to the log (FetchError.Error).
const (
	// MsgFailed is any failure to fetch an allowed URL.
	MsgFailed = "the URL could not be fetched"
	// MsgNotAllowed is a destination the policy refuses.
	MsgNotAllowed = "the address is not allowed"
)

// FetchError is a failed fetch: Public is the text for users, Err the
// cause for the log.
type FetchError struct {
	// URL is the URL fetched, without a password.
	URL string
	// Public is what users are told (MsgFailed, MsgNotAllowed, the HTTP
	// status of an allowed server, or ErrScheme's text).
	Public string
	// Err is the cause.
	Err error
}

// Error implements error with the cause (for logs).
func (e *FetchError) Error() string { return "fetch " + e.URL + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FetchError) Unwrap() error { return e.Err }

// PublicMessage is the text users are told about err: a FetchError's
// Public text, else the generic text for err's kind.
func PublicMessage(err error) string {
	var fe *FetchError
	switch {
	case errors.As(err, &fe):
		return fe.Public
	case errors.Is(err, ErrScheme):
		return ErrScheme.Error()
	case errors.Is(err, ErrNotAllowed):
		return MsgNotAllowed
	case errors.Is(err, errTooManyRedirects):
		return MsgFailed + " (too many redirects)"
	}
	return MsgFailed
}

// FetchOptions bound one Get.
type FetchOptions struct {
	// IdleTimeout is the longest wait for the server: for the answer's
	// headers (connection and TLS included) and then for each next
	// byte of the body. 0: none.
	IdleTimeout time.Duration
	// Timeout bounds the whole fetch, the body's last byte included. 0:
	// none.
	Timeout time.Duration
	// Header is sent with the request.
	Header http.Header
}

// Get fetches rawURL with c (a Policy's Client) and returns the body of a
// 200 answer. Reading it fails with a *FetchError when the server sends
// nothing for o.IdleTimeout or o.Timeout passes; Close releases the fetch.
// Every error is a *FetchError.
func Get(ctx context.Context, c *http.Client, rawURL string, o FetchOptions) (io.ReadCloser, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, &FetchError{URL: "(unreadable URL)", Public: MsgFailed, Err: err}
	}
	shown := u.Redacted()
	if err := CheckURL(u); err != nil {
		return nil, &FetchError{URL: shown, Public: PublicMessage(err), Err: err}
	}
	fctx, cancel := context.WithCancelCause(ctx)
	stopDeadline := func() bool { return false }
	if o.Timeout > 0 {
		t := time.AfterFunc(o.Timeout, func() { cancel(fmt.Errorf("egress: not complete within %s", o.Timeout)) })
		stopDeadline = t.Stop
	}
	b := &body{ctx: fctx, parent: ctx, cancel: cancel, stopDeadline: stopDeadline, idle: o.IdleTimeout, url: shown}
	if o.IdleTimeout > 0 {
		b.timer = time.AfterFunc(o.IdleTimeout, func() { cancel(fmt.Errorf("egress: no data for %s", o.IdleTimeout)) })
	}
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, u.String(), nil)
	if err != nil {
		b.release()
		return nil, &FetchError{URL: shown, Public: MsgFailed, Err: err}
	}
	for k, v := range o.Header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	b.pause()
	if err != nil {
		err = b.cause(err)
		b.release()
		return nil, &FetchError{URL: shown, Public: PublicMessage(err), Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		b.release()
		return nil, &FetchError{URL: shown, Public: fmt.Sprintf("%s: the server answered HTTP %d", MsgFailed, resp.StatusCode),
			Err: fmt.Errorf("HTTP %s", resp.Status)}
	}
	b.rc = resp.Body
	return b, nil
}

// body is a fetched body whose reads are bounded by the idle timer, armed
// only while a read waits for the server.
type body struct {
	rc           io.ReadCloser
	ctx, parent  context.Context
	cancel       context.CancelCauseFunc
	stopDeadline func() bool
	timer        *time.Timer
	idle         time.Duration
	url          string
	once         sync.Once
}

func (b *body) Read(p []byte) (int, error) {
	if b.timer != nil {
		b.timer.Reset(b.idle)
	}
	n, err := b.rc.Read(p)
	b.pause()
	if err != nil && !errors.Is(err, io.EOF) {
		err = b.cause(err)
		return n, &FetchError{URL: b.url, Public: PublicMessage(err), Err: err}
	}
	return n, err
}

// Close ends the fetch.
func (b *body) Close() error {
	var err error
	if b.rc != nil {
		err = b.rc.Close()
	}
	b.release()
	return err
}

func (b *body) pause() {
	if b.timer != nil {
		b.timer.Stop()
	}
}

func (b *body) release() {
	b.once.Do(func() {
		b.pause()
		b.stopDeadline()
		b.cancel(nil)
	})
}

// cause is err, or the idle or overall timeout that cancelled the fetch
// (unless the caller's own context ended it, whose error stays).
func (b *body) cause(err error) error {
	if b.parent.Err() != nil {
		return err
	}
	if c := context.Cause(b.ctx); c != nil {
		return c
	}
	return err
}
