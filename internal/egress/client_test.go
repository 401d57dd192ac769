package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// server is a loopback HTTP server that counts its requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
	port string
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	return s
}

func csv(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "a,b\n1,2\n") }

// closedPort is a loopback port with nothing listening.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

func get(t *testing.T, p *Policy, u string, o FetchOptions) (string, error) {
	t.Helper()
	body, err := Get(context.Background(), p.Client(0), u, o)
	if err != nil {
		return "", err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	return string(b), err
}

func public(err error) string {
	var fe *FetchError
	if !errors.As(err, &fe) {
		return "not a FetchError: " + err.Error()
	}
	return fe.Public
}

// Without an allow-list nothing on this machine is reached, whatever the
// spelling, and an open port and a closed one look the same.
func TestDefaultPolicyRefusesLoopback(t *testing.T) {
	s := newServer(t, csv)
	p, _ := New(Options{})
	closed := closedPort(t)
	for _, u := range []string{
		s.URL + "/x.csv",
		"http://127.0.0.1:" + closed + "/x.csv",
		"http://localhost:" + s.port + "/x.csv",
		"http://[::1]:" + s.port + "/x.csv",
		"http://[::ffff:127.0.0.1]:" + s.port + "/x.csv",
		"http://0.0.0.0:" + s.port + "/x.csv",
		"https://127.0.0.1:" + s.port + "/x.csv",
	} {
		_, err := get(t, p, u, FetchOptions{})
		if err == nil {
			t.Errorf("%s: fetched", u)
			continue
		}
		msg := public(err)
		if msg != MsgNotAllowed {
			t.Errorf("%s: public text %q", u, msg)
		}
		if strings.Contains(msg, "refused") || strings.Contains(msg, "timeout") {
			t.Errorf("%s: the public text tells the cause: %q", u, msg)
		}
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
	// the open port and the closed port answer alike
	_, e1 := get(t, p, s.URL+"/x.csv", FetchOptions{})
	_, e2 := get(t, p, "http://127.0.0.1:"+closed+"/x.csv", FetchOptions{})
	if public(e1) != MsgNotAllowed || public(e2) != MsgNotAllowed {
		t.Errorf("open %q, closed %q", public(e1), public(e2))
	}
	if !strings.Contains(e1.Error(), "loopback") {
		t.Errorf("the log text does not name the cause: %v", e1)
	}
	for _, u := range []string{"file:///etc/passwd", "gopher://127.0.0.1/", "ftp://example.org/x.csv", "http:///x.csv"} {
		if _, err := get(t, p, u, FetchOptions{}); !errors.Is(err, ErrScheme) || public(err) != ErrScheme.Error() {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// An allowed server is fetched; a redirect from it to a server that is
// not allowed is refused at the connection, and redirects are capped.
func TestAllowListAndRedirects(t *testing.T) {
	inner := newServer(t, csv)
	var outer *server
	outer = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/x.csv":
			csv(w, r)
		case "/to-inner":
			http.Redirect(w, r, inner.URL+"/x.csv", http.StatusFound)
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+inner.port+"/x.csv", http.StatusMovedPermanently)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/self":
			http.Redirect(w, r, "/x.csv", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/missing":
			http.NotFound(w, r)
		}
	})
	p, err := New(Options{Allow: []string{"127.0.0.1:" + outer.port}, MaxRedirects: 3})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := get(t, p, outer.URL+"/x.csv", FetchOptions{}); err != nil || b != "a,b\n1,2\n" {
		t.Fatalf("allowed server: %q %v", b, err)
	}
	if b, err := get(t, p, outer.URL+"/self", FetchOptions{}); err != nil || b != "a,b\n1,2\n" {
		t.Fatalf("redirect on the allowed server: %q %v", b, err)
	}
	for _, path := range []string{"/to-inner", "/to-localhost"} {
		if _, err := get(t, p, outer.URL+path, FetchOptions{}); public(err) != MsgNotAllowed || !errors.Is(err, ErrNotAllowed) {
			t.Errorf("%s: %v", path, err)
		}
	}
	if n := inner.hits.Load(); n != 0 {
		t.Errorf("a redirect reached the server that is not allowed %d times", n)
	}
	if _, err := get(t, p, outer.URL+"/to-file", FetchOptions{}); !errors.Is(err, ErrScheme) {
		t.Errorf("redirect to file: %v", err)
	}
	before := outer.hits.Load()
	if _, err := get(t, p, outer.URL+"/loop", FetchOptions{}); err == nil || !strings.HasPrefix(public(err), MsgFailed) {
		t.Errorf("redirect loop: %v", err)
	}
	if n := outer.hits.Load() - before; n != 4 {
		t.Errorf("a redirect loop made %d requests, want 4 (1 + 3 redirects)", n)
	}
	if _, err := get(t, p, outer.URL+"/missing", FetchOptions{}); public(err) != MsgFailed+": the server answered HTTP 404" {
		t.Errorf("404: %q", public(err))
	}
	// the same server by name is allowed by the address entry
	if _, err := get(t, p, "http://localhost:"+outer.port+"/x.csv", FetchOptions{}); err != nil {
		t.Errorf("localhost to an allowed address: %v", err)
	}
	// a name entry allows the name, not the address
	byName, _ := New(Options{Allow: []string{"localhost:" + inner.port}})
	if _, err := get(t, byName, "http://localhost:"+inner.port+"/x.csv", FetchOptions{}); err != nil {
		t.Errorf("allowed name: %v", err)
	}
	if _, err := get(t, byName, inner.URL+"/x.csv", FetchOptions{}); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("address of an allowed name: %v", err)
	}
	u, _ := url.Parse(inner.URL)
	u.User = url.UserPassword("me", "secret")
	if _, err := get(t, p, u.String(), FetchOptions{}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("the password is in the error: %v", err)
	}
}

// A server that stops sending is cut off after the idle timeout; one that
// never completes, at the overall timeout.
func TestIdleAndOverallTimeouts(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/silent" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		_, _ = io.WriteString(w, "a,b\n1,2\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	p, _ := New(Options{Allow: []string{"127.0.0.1"}})
	b, err := get(t, p, s.URL+"/stall", FetchOptions{IdleTimeout: 100 * time.Millisecond})
	if b != "a,b\n1,2\n" || public(err) != MsgFailed || !strings.Contains(err.Error(), "no data for 100ms") {
		t.Errorf("stalled body: %q %v", b, err)
	}
	_, err = get(t, p, s.URL+"/silent", FetchOptions{IdleTimeout: 100 * time.Millisecond})
	if public(err) != MsgFailed || !strings.Contains(err.Error(), "no data for 100ms") {
		t.Errorf("no headers: %v", err)
	}
	b, err = get(t, p, s.URL+"/stall", FetchOptions{Timeout: 150 * time.Millisecond})
	if b != "a,b\n1,2\n" || public(err) != MsgFailed || !strings.Contains(err.Error(), "not complete within 150ms") {
		t.Errorf("overall timeout: %q %v", b, err)
	}
	// the caller's own cancellation stays a cancellation
	ctx, cancel := context.WithCancel(context.Background())
	body, err := Get(ctx, p.Client(0), s.URL+"/stall", FetchOptions{IdleTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if _, err := io.ReadFull(body, buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = body.Read(buf)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	body.Close()
}
