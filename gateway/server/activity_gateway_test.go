package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"toxgate/gateway/harness"
)

// activityTypes calls an activity list and returns its activity types
// (nil and the status when it fails).
func activityTypes(t *testing.T, g *harness.Gateway, action, token string, data map[string]any) ([]string, int) {
	t.Helper()
	code, out := ckan(t, g, action, token, data)
	if code != 200 {
		return nil, code
	}
	var types []string
	for _, a := range out["result"].([]any) {
		types = append(types, a.(map[string]any)["activity_type"].(string))
	}
	return types, code
}

// Activity through the real gateway and plugin: private datasets' activity
// only for who may read them, and all of it still there after a restart.
func TestActivityVisibilityAndRestart(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+t.TempDir()))
	admin := adminToken(t, g)
	provision(t, g, admin, "mia", "mia-password-1", true)
	provision(t, g, admin, "otto", "otto-password-1", true)
	member, outsider := tokenFor(t, g, admin, "mia", nil), tokenFor(t, g, admin, "otto", nil)
	must := func(action string, data map[string]any) {
		t.Helper()
		if code, out := ckan(t, g, action, admin, data); code != 200 {
			t.Fatalf("%s: %d %v", action, code, out)
		}
	}
	must("organization_create", map[string]any{"name": "tox-lab"})
	must("organization_member_create", map[string]any{"id": "tox-lab", "username": "mia", "role": "member"})
	must("package_create", map[string]any{"name": "herg-private", "owner_org": "tox-lab", "private": true})
	must("package_patch", map[string]any{"id": "herg-private", "notes": "internal"})
	must("package_create", map[string]any{"name": "herg-public", "owner_org": "tox-lab"})
	must("resource_create", map[string]any{"package_id": "herg-public", "url": "http://example.org/ic50.csv"})

	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			who, token, action string
			data               map[string]any
			want               []string
			code               int
		}{
			{"anonymous", "", "package_activity_list", map[string]any{"id": "herg-private"}, nil, 403},
			{"outsider", outsider, "package_activity_list", map[string]any{"id": "herg-private"}, nil, 403},
			{"member", member, "package_activity_list", map[string]any{"id": "herg-private"}, []string{"changed package", "new package"}, 200},
			{"anonymous", "", "package_activity_list", map[string]any{"id": "herg-public"}, []string{"changed package", "new package"}, 200},
			{"anonymous", "", "recently_changed_packages_activity_list", nil, []string{"changed package", "new package"}, 200},
			{"member", member, "recently_changed_packages_activity_list", nil,
				[]string{"changed package", "new package", "changed package", "new package"}, 200},
			{"outsider", outsider, "user_activity_list", map[string]any{"id": "admin"},
				[]string{"changed package", "new package", "new organization"}, 200},
			{"member", member, "dashboard_activity_list", nil,
				[]string{"changed package", "new package", "changed package", "new package", "new organization"}, 200},
			{"anonymous", "", "dashboard_activity_list", nil, nil, 403},
		} {
			got, code := activityTypes(t, g, c.action, c.token, c.data)
			if code != c.code || !slices.Equal(got, c.want) {
				t.Errorf("%s: %s %s %v: %d %q, want %d %q", when, c.who, c.action, c.data, code, got, c.code, c.want)
			}
		}
	}
	check("before the restart")
	g.Restart()
	check("after a restart")

	// the dataset's page lists its activity: who, what, when
	b := newBrowser(t)
	tb := b.tab(g, "anonymous")
	tb.open("/dataset/herg-public")
	items := eval[[]string](tb, `Array.from(document.querySelectorAll("#activity .activity-item")).map(e => e.textContent.replace(/\s+/g, " ").trim())`)
	if len(items) != 2 || !strings.HasPrefix(items[0], "admin updated the dataset ") || !strings.HasPrefix(items[1], "admin created the dataset ") ||
		!strings.HasSuffix(items[1], " UTC") {
		t.Errorf("dataset page activity: %q", items)
	}
	tb.shot("dataset-activity", 1280)
	tb.do("phone width", chromedp.EmulateViewport(390, 844))
	if !tb.fitsPhone() {
		t.Errorf("the dataset page with its activity is wider than a phone: %v", tb.overflowing())
	}
	// a private dataset's page shows its activity to a member
	mt := b.tab(g, "member")
	mt.login("mia", "mia-password-1")
	mt.open("/dataset/herg-private")
	if n := eval[int](mt, `document.querySelectorAll("#activity .activity-item").length`); n != 2 {
		t.Errorf("member sees %d activities on the private dataset's page: %s", n, mt.text("main"))
	}
}
