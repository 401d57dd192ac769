package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// JSONP: a callback of identifier characters wraps the reply, with
// nosniff; anything else is refused with CKAN's bare 400 and never echoed.
// Both the plugin's actions and the core's (users) behave alike.
func TestJSONPCallbackFilteredAndNoSniff(t *testing.T) {
	// anonymous user_list below (catalog.auth.public_user_details)
	g := harness.Start(t, harness.WithEnv("TOXGATE_CATALOG_AUTH_PUBLIC_USER_DETAILS=true"))
	for _, action := range []string{"package_list", "status_show", "user_list"} {
		resp, body := get(t, g, "/api/3/action/"+action+"?callback=jQuery_1.cb$", nil)
		if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "jQuery_1.cb$(") || !strings.HasSuffix(string(body), ");") ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/javascript") {
			t.Errorf("%s with a good callback: %d %s %.200s", action, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s JSONP reply without nosniff: %v", action, resp.Header)
		}
		for _, cb := range []string{"alert(document.domain)//", "<script>x</script>", "a-b", "cb;evil"} {
			resp, body := get(t, g, "/api/3/action/"+action+"?callback="+url.QueryEscape(cb), nil)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Invalid callback") {
				t.Errorf("%s callback %q: %d %.200s, want 400", action, cb, resp.StatusCode, body)
			}
			if strings.Contains(string(body), cb) || strings.HasPrefix(resp.Header.Get("Content-Type"), "application/javascript") {
				t.Errorf("%s callback %q echoed or served as script: %s %s", action, cb, resp.Header.Get("Content-Type"), body)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s refusal without nosniff", action)
			}
		}
	}
	// A plain JSON reply carries nosniff too.
	if resp, _ := get(t, g, "/api/3/action/package_list", nil); resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("JSON reply without nosniff: %v", resp.Header)
	}
}
