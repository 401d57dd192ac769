package oidcprovider_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"toxgate/gateway/harness"
	"toxgate/internal/testenv"
)

// freePort returns a loopback port nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a process's output for the failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startOAuth2Proxy runs oauth2-proxy for client "tool" of the gateway in
// front of upstream and waits until it answers /ping.
func startOAuth2Proxy(t *testing.T, bin string, g *harness.Gateway, secret, upstream string, port int) (string, *lockedBuffer) {
	t.Helper()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	cookie := make([]byte, 32)
	_, _ = rand.Read(cookie)
	logs := &lockedBuffer{}
	cmd := exec.Command(bin,
		"--provider=oidc", "--oidc-issuer-url="+g.URL+"/oidc", "--client-id=tool", "--client-secret="+secret,
		"--redirect-url="+base+"/oauth2/callback", "--upstream="+upstream, fmt.Sprintf("--http-address=127.0.0.1:%d", port),
		"--cookie-secret="+base64.RawURLEncoding.EncodeToString(cookie), "--cookie-secure=false",
		"--email-domain=*", "--code-challenge-method=S256", "--scope=openid profile email",
		"--oidc-groups-claim=groups", "--allowed-group=notebooks",
		"--pass-user-headers=true", "--pass-access-token=true", "--skip-provider-button=true")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start oauth2-proxy: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base, logs
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("oauth2-proxy did not answer /ping within 60s; its log:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A real relying party: oauth2-proxy in front of a loopback upstream. A
// user with the notebooks role signs in through toxgate's login page in
// headless Chromium and reaches the upstream with her identity in the
// forwarded headers and an access token the gateway accepts; a user without
// the role is refused by toxgate; signing out of the proxy and of toxgate
// ends the session (the next visit asks for the login again). oauth2-proxy
// names the user by sub (X-Forwarded-User) and passes preferred_username,
// email and groups.
func TestOAuth2ProxyInChromium(t *testing.T) {
	chrome := testenv.RequireTool(t, testenv.Chromium)
	o2p := testenv.RequireTool(t, testenv.OAuth2Proxy)
	g := harness.Start(t)
	adm := adminToken(t, g)
	provision(t, g, adm, "alice", "alice-password", "notebooks", "models")
	provision(t, g, adm, "bob", "bob-password", "models")

	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<html><body><pre id=\"who\">user=%s\nemail=%s\ngroups=%s\nusername=%s\n</pre><pre id=\"token\">%s</pre></body></html>",
			r.Header.Get("X-Forwarded-User"), r.Header.Get("X-Forwarded-Email"), r.Header.Get("X-Forwarded-Groups"),
			r.Header.Get("X-Forwarded-Preferred-Username"), r.Header.Get("X-Forwarded-Access-Token"))
	}))
	defer upstream.Close()
	port := freePort(t)
	secret := registerClient(t, g, adm, map[string]any{"name": "tool", "roles": []string{"notebooks"},
		"redirect_uris": []string{fmt.Sprintf("http://127.0.0.1:%d/oauth2/callback", port)}})
	proxy, proxyLogs := startOAuth2Proxy(t, o2p, g, secret, upstream.URL, port)

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU)...)
	defer cancelAlloc()
	type C = chromedp.CSS
	browse := func(name string) (context.Context, func(string, ...chromedp.Action[chromedp.Void])) {
		ctx, cancel := chromedp.NewContext(alloc)
		t.Cleanup(cancel)
		ctx, cancelT := context.WithTimeout(ctx, 5*time.Minute)
		t.Cleanup(cancelT)
		if err := chromedp.Do(ctx); err != nil {
			t.Fatalf("start chromium: %v", err)
		}
		return ctx, func(what string, actions ...chromedp.Action[chromedp.Void]) {
			t.Helper()
			stepCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			if err := chromedp.Do(stepCtx, actions...); err != nil {
				diagCtx, cancelDiag := context.WithTimeout(ctx, 10*time.Second)
				defer cancelDiag()
				loc, _ := chromedp.Run(diagCtx, chromedp.Location())
				body, _ := chromedp.Run(diagCtx, chromedp.Text(C("body")))
				t.Fatalf("%s (%s): %v\nbrowser at %s showing:\n%.1500s\noauth2-proxy:\n%s", name, what, err, loc, body, proxyLogs.String())
			}
		}
	}
	text := func(ctx context.Context, sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(C(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	login := func(do func(string, ...chromedp.Action[chromedp.Void]), user, password string) {
		do("toxgate's login page", chromedp.Navigate(proxy+"/"), chromedp.WaitVisible(C("#username")))
		do("log in", chromedp.SendKeys(C("#username"), user), chromedp.SendKeys(C("#password"), password), chromedp.Click(C("#login")))
	}

	actx, alice := browse("alice")
	login(alice, "alice", "alice-password")
	alice("the upstream", chromedp.WaitVisible(C("#who")))
	who := text(actx, "#who")
	for _, want := range []string{"email=alice@example.org\n", "notebooks", "username=alice\n"} {
		if !strings.Contains(who, want) {
			t.Errorf("upstream saw %q, lacks %q", who, want)
		}
	}
	if code, h := checkBearer(t, g, strings.TrimSpace(text(actx, "#token"))); code != 200 || h.Get("X-Auth-User") != "alice" {
		t.Errorf("forwarded access token at the gateway: %d %v", code, h)
	}

	bctx, bob := browse("bob")
	login(bob, "bob", "bob-password")
	bob("refused", chromedp.WaitVisible(C("#provider-message")))
	if body := text(bctx, "#provider-message"); !strings.Contains(body, "admits only users with the role notebooks") {
		t.Errorf("bob without the role sees %.500s", body)
	}
	if loc, _ := chromedp.Run(bctx, chromedp.Location()); strings.HasPrefix(loc, proxy) {
		t.Errorf("bob reached the proxy: %s", loc)
	}

	// Log out of toxgate, then sign out of the proxy: the proxy's next
	// visit (where its sign-out leads) asks for the login again.
	alice("toxgate's dashboard", chromedp.Navigate(g.URL+"/dashboard"), chromedp.WaitVisible(C("#logout")))
	alice("log out of toxgate", chromedp.Click(C("#logout")), chromedp.WaitVisible(C("#login-form")))
	alice("sign out of the proxy", chromedp.Navigate(proxy+"/oauth2/sign_out"), chromedp.WaitVisible(C("#username")))
	if loc, _ := chromedp.Run(actx, chromedp.Location()); !strings.HasPrefix(loc, g.URL+"/login") {
		t.Errorf("after logout the proxy led to %s, want toxgate's login", loc)
	}
}
