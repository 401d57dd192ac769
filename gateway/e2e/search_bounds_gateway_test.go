package e2e

import (
	"math"
	"net/url"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// Anonymous package_search requests built to exhaust the catalog's query
// parser (an 8 MB fq of dashes, a flood of parentheses) are answered 409
// "Search Error" by the real plugin process, which keeps serving: same
// process, package_show still answers.
func TestHostileSearchKeepsCatalogUp(t *testing.T) {
	g := harness.Start(t)
	admin := adminToken(t, g)
	if code, out := ckan(t, g, "organization_create", admin, map[string]any{"name": "bounds-org"}); code != 200 {
		t.Fatalf("organization_create: %d %v", code, out)
	}
	if code, out := ckan(t, g, "package_create", admin, map[string]any{"name": "bounds-set", "owner_org": "bounds-org"}); code != 200 {
		t.Fatalf("package_create: %d %v", code, out)
	}
	pid, up := pluginPID(t, g, admin)
	if !up || pid == 0 {
		t.Fatalf("catalog plugin not up: pid %d", pid)
	}
	dashes := strings.Repeat("-", 8_388_000) + "x"
	refused := []struct {
		name string
		data map[string]any
		msg  string
	}{
		{"8 MB fq of dashes", map[string]any{"fq": dashes}, "query is too long: 8388001 bytes, at most 65536"},
		{"the same again", map[string]any{"fq": dashes}, "query is too long"},
		{"8 MB q of dashes", map[string]any{"q": "name:" + dashes}, "query is too long"},
		{"a flood of parentheses", map[string]any{"fq": strings.Repeat("(", 65536)}, "query nests parentheses more than 32 deep"},
		{"too many terms", map[string]any{"fq": strings.Repeat("tags:x OR ", 2000) + "tags:x"}, "too many clauses"},
	}
	for _, c := range refused {
		code, out := ckan(t, g, "package_search", "", c.data)
		e, _ := out["error"].(map[string]any)
		if code != 409 || out["success"] != false || e["__type"] != "Search Error" || !strings.Contains(e["message"].(string), c.msg) {
			t.Fatalf("%s: %d %.300v, want 409 Search Error with %q", c.name, code, out, c.msg)
		}
	}
	// the query string path too
	code, body := getAction(t, g, "/api/3/action/package_search", url.Values{"fq": {strings.Repeat("-(", 40) + "x"}}, nil)
	if code != 409 || !strings.Contains(string(body), `"__type": "Search Error"`) || !strings.Contains(string(body), "more than 32 deep") {
		t.Fatalf("GET with deep parentheses: %d %.300s", code, body)
	}
	// within the bounds, odd but valid: answered
	for name, data := range map[string]map[string]any{
		"64 KB of dashes":   {"fq": strings.Repeat("-", 65535) + "x"},
		"chained fields":    {"fq": strings.Repeat("a: ", 21000) + "name:bounds-set"},
		"the largest start": {"start": math.MaxInt64},
	} {
		if code, out := ckan(t, g, "package_search", "", data); code != 200 {
			t.Fatalf("%s: %d %.300v", name, code, out)
		}
	}
	if now, up := pluginPID(t, g, admin); !up || now != pid {
		t.Fatalf("catalog plugin pid %d (up %v) after the hostile searches, was %d", now, up, pid)
	}
	code, body = getAction(t, g, "/api/3/action/package_show", url.Values{"id": {"bounds-set"}}, nil)
	if code != 200 || !strings.Contains(string(body), `"name": "bounds-set"`) {
		t.Fatalf("package_show after the hostile searches: %d %.300s", code, body)
	}
}
