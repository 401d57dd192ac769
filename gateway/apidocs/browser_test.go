package apidocs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"toxgate/internal/testenv"

	"github.com/chromedp/chromedp"
)

// chromium finds a Chromium or Chrome binary (testenv: a skip without one,
// a failure under CI).
func chromium(t *testing.T) string { return testenv.RequireTool(t, testenv.Chromium) }

// In a real headless browser: /docs renders Swagger UI from the embedded
// assets, the bearer token goes into the Authorize dialog, and "Try it out"
// calls a model on the running server with that token.
func TestDocsPageInHeadlessBrowserCallsAModel(t *testing.T) {
	bin := chromium(t)
	s := start(t)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()

	const (
		authScheme = `//div[contains(@class,"auth-container")][.//h4[contains(., "bearerAuth")]]`
		operation  = `//div[contains(@class,"opblock-post")][.//*[@data-path="/example/units/convert"]]`
	)
	// step runs void actions and fails the test with what the page shows.
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel chromedp.Search) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return v
	}
	step("open /docs",
		chromedp.Navigate(s.base+"/docs"),
		chromedp.WaitVisible(chromedp.CSS(`.swagger-ui .info .title`)))
	title := text(`.swagger-ui .info .title`)
	step("authorize with the bearer token",
		chromedp.Click(chromedp.CSS(`.swagger-ui .auth-wrapper .authorize`)),
		chromedp.WaitVisible(chromedp.Search(authScheme+`//input`)),
		chromedp.SendKeys(chromedp.Search(authScheme+`//input`), token),
		chromedp.Click(chromedp.Search(authScheme+`//button[contains(@class,"authorize")]`)),
		chromedp.WaitVisible(chromedp.Search(authScheme+`//button[normalize-space(.)="Logout"]`)),
		chromedp.Click(chromedp.Search(authScheme+`//button[contains(@class,"btn-done")]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`.swagger-ui .dialog-ux`)))
	step("try the model out",
		chromedp.Click(chromedp.Search(operation+`//button[contains(@class,"opblock-summary-control")]`)),
		chromedp.WaitVisible(chromedp.Search(operation+`//button[contains(@class,"try-out__btn")]`)),
		chromedp.Click(chromedp.Search(operation+`//button[contains(@class,"try-out__btn")]`)),
		chromedp.WaitVisible(chromedp.Search(operation+`//button[contains(@class,"execute")]`)),
		chromedp.Click(chromedp.Search(operation+`//button[contains(@class,"execute")]`)),
		chromedp.WaitVisible(chromedp.Search(operation+`//table[contains(@class,"live-responses-table")]/tbody//td[contains(@class,"response-col_status")]`)))
	status := text(operation + `//table[contains(@class,"live-responses-table")]/tbody//td[contains(@class,"response-col_status")]`)
	body := text(operation + `//table[contains(@class,"live-responses-table")]/tbody//td[contains(@class,"response-col_description")]//pre`)
	if !strings.Contains(title, "toxgate test API") {
		t.Errorf("title = %q", title)
	}
	// 10 mg/L of a 543.52 g/mol compound is 18.398... µM.
	if !strings.HasPrefix(strings.TrimSpace(status), "200") || !strings.Contains(body, `"unit": "uM"`) || !strings.Contains(body, "18.398") {
		t.Fatalf("try it out answered %q: %s", status, body)
	}
}
