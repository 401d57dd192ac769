package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"toxgate/gateway/harness"
	"toxgate/internal/testenv"
)

// exampleModulesDir returns a directory holding only example-units.wasm (a
// copy of the one `make build` made, else one built now), so that the
// gateway does not compile every model module.
func exampleModulesDir(t *testing.T) string {
	t.Helper()
	bins := harness.Build(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "example-units.wasm")
	if b, err := os.ReadFile(filepath.Join(bins.Modules, "example-units.wasm")); err == nil {
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", dst, "./modules/example-units")
	cmd.Dir = harness.RepoRoot()
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build example-units.wasm: %v\n%s", err, out)
	}
	return dir
}

// chromiumPath is the browser of the browser tests (testenv: a skip
// without one, a failure under CI).
func chromiumPath(t *testing.T) string { return testenv.RequireTool(t, testenv.Chromium) }

// The seed's journey in a real headless browser: an admin provisions a
// user; the user logs in, verifies the e-mail address, changes the
// password, lands on the dashboard and creates a token; the token calls a
// model (200); revoked on the token page, the same call gets 401.
// Screenshots of each step go to the test's artifact directory
// (go test -artifacts -outputdir DIR keeps them).
func TestBrowserJourney(t *testing.T) {
	chrome := chromiumPath(t)
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+exampleModulesDir(t)))
	shots := t.ArtifactDir()

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1200, 900))...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 8*time.Minute)
	defer cancelT()
	// Start the browser under ctx: it lives as long as the context of the
	// first action, and each step below has a shorter context of its own.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}

	type C = chromedp.CSS
	step := 0
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			buf, err := chromedp.FullScreenshot(90)(ctx, tg)
			if err != nil {
				return err
			}
			step++
			return os.WriteFile(filepath.Join(shots, fmt.Sprintf("%02d-%s.jpg", step, name)), buf, 0o644)
		})
	}
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(stepCtx, actions...); err != nil {
			// Say where the browser is and what it shows, to tell a UI
			// fault from a slow machine.
			diagCtx, cancelDiag := context.WithTimeout(ctx, 10*time.Second)
			defer cancelDiag()
			loc, _ := chromedp.Run(diagCtx, chromedp.Location())
			body, _ := chromedp.Run(diagCtx, chromedp.Text(C("body")))
			t.Fatalf("%s: %v\nbrowser at %s showing:\n%.1500s", what, err, loc, body)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(C(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	// 1. The admin provisions a user with the models role.
	do("admin logs in",
		chromedp.Navigate(g.URL+"/login"), chromedp.WaitVisible(C("#username")),
		chromedp.SendKeys(C("#username"), "admin"), chromedp.SendKeys(C("#password"), adminPassword),
		shot("admin-login"), chromedp.Click(C("#login")), chromedp.WaitVisible(C("#profile")))
	do("admin provisions dana",
		chromedp.Navigate(g.URL+"/admin/users"), chromedp.WaitVisible(C("#create-user-form")),
		chromedp.SendKeys(C("#new-username"), "dana"), chromedp.SendKeys(C("#new-email"), "dana@example.org"),
		chromedp.SendKeys(C("#new-first"), "Dana"), chromedp.SendKeys(C("#new-last"), "Scully"),
		chromedp.SetValue(C("#new-password"), "dana-initial-1"), chromedp.Click(C("#new-role-models")),
		shot("admin-provisions"), chromedp.Click(C("#create-user")),
		chromedp.WaitVisible(C("#created-user")), shot("user-created"))
	if row := text(`tr[data-user="dana"]`); !strings.Contains(row, "pending") || !strings.Contains(row, "models") {
		t.Fatalf("users table row for dana: %q", row)
	}
	do("admin logs out", chromedp.Click(C("#logout")), chromedp.WaitVisible(C("#login-form")))

	// 2. The user's first login: e-mail verification, password change.
	do("dana logs in",
		chromedp.SendKeys(C("#username"), "dana"), chromedp.SendKeys(C("#password"), "dana-initial-1"),
		chromedp.Click(C("#login")), chromedp.WaitVisible(C("#step-email")), shot("first-login"))
	link := verificationLink(t, g, "dana@example.org")
	do("dana verifies the e-mail address",
		chromedp.Navigate(link), chromedp.WaitVisible(C("#confirm-email")), shot("verify-link"),
		chromedp.Click(C("#confirm-email")), chromedp.WaitVisible(C("#change-password")), shot("verified"))
	if s := text("#step-email"); !strings.Contains(s, "verified") {
		t.Fatalf("after verification the e-mail step says %q", s)
	}
	// Opening the form and filling it are idempotent, so they are tried
	// again when the browser drops a node it had just found (a navigation
	// finishing under a loaded machine); the submit is not.
	do("dana opens the password form",
		retryStale(chromedp.Click(C("#change-password")), chromedp.WaitVisible(C("#password-form")),
			chromedp.SetValue(C("#current_password"), "dana-initial-1"),
			chromedp.SetValue(C("#new_password"), "dana-chosen-pass"), chromedp.SetValue(C("#confirm"), "dana-chosen-pass")))
	do("dana changes the password",
		shot("password-change"), chromedp.Click(C("#save-password")),
		chromedp.WaitVisible(C("#profile")), shot("dashboard"))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasSuffix(loc, "/dashboard") {
		t.Fatalf("after the first login the browser is at %q (%v)", loc, err)
	}
	if roles := text("#roles"); !strings.Contains(roles, "models") {
		t.Fatalf("dashboard roles: %q", roles)
	}

	// 3. A token from the token page calls a model; revoked, it no longer does.
	do("dana creates a token",
		chromedp.Navigate(g.URL+"/tokens"), chromedp.WaitVisible(C("#token-form")),
		chromedp.SendKeys(C("#token-name"), "journey"), chromedp.Click(C("#create-token")),
		chromedp.WaitVisible(C("#new-token")), shot("token-created"))
	token := strings.TrimSpace(text("#new-token"))
	if !strings.HasPrefix(token, "tg_") {
		t.Fatalf("token page shows %q", token)
	}
	callModel := func() (int, string) {
		h := http.Header{"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"}, "Accept": {"application/json"}}
		resp, body, err := g.Do(context.Background(), http.MethodPost, "/example/units/convert", h,
			[]byte(`{"value":10,"from":"mg/L","to":"uM","molar_mass":543.52}`))
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}
	if code, body := callModel(); code != 200 {
		t.Fatalf("model call with the new token: %d %s", code, body)
	}
	// The revoke form is submitted as its button would submit it: a mouse
	// click right after a full-page screenshot can land before the layout
	// settles (seen under load), which made this step flaky.
	do("dana revokes the token",
		chromedp.WaitVisible(C(`tr[data-token-name="journey"] button.revoke`)),
		chromedp.Submit(C(`tr[data-token-name="journey"] form[action$="/revoke"]`)),
		chromedp.WaitVisible(C("#flash")), shot("token-revoked"))
	if s := text("#flash"); !strings.Contains(s, "revoked") {
		t.Fatalf("after revoking: %q", s)
	}
	if code, body := callModel(); code != 401 {
		t.Fatalf("model call with the revoked token: %d %s, want 401", code, body)
	}
}

// retryStale runs actions, again (up to three times in all) when the browser
// answers that a node it just found no longer exists: a document replaced
// between the lookup and the action. Only for idempotent actions.
func retryStale(actions ...chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var err error
		for range 3 {
			err = nil
			for _, a := range actions {
				if _, err = a(ctx, tg); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), "Could not find node with given id") {
				return err
			}
		}
		return err
	})
}
