package catalog

import (
	"context"
	"testing"
	"time"
)

// TestGenerate fills a catalog with the generator and checks what the
// actions then answer: every dataset there (private ones to sysadmins
// only), valid as package_create makes them, tags with a long tail, and
// the same catalog after a reload from the store; a second run with the
// same seed adds nothing.
func TestGenerate(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 120
	st, err := f.svc.Generate(ctx, GenerateOptions{Datasets: n, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if st.Datasets != n || st.Organizations != 3 || st.Private == 0 || st.Private == n {
		t.Fatalf("stats: %+v", st)
	}
	count := func(user string) int {
		res := f.ok(user, "package_search", map[string]any{"rows": 0, "include_private": true, "q": "name:gen-*"})
		return int(res["count"].(float64))
	}
	if got := count("sysadmin"); got != n {
		t.Fatalf("sysadmin sees %d datasets, want %d", got, n)
	}
	if got := count(""); got != n-st.Private {
		t.Fatalf("anonymous sees %d datasets, want %d", got, n-st.Private)
	}
	d := f.ok("sysadmin", "package_show", map[string]any{"id": "gen-0000001"})
	if len(d["tags"].([]any)) != 3 || len(d["extras"].([]any)) != 2 || len(d["resources"].([]any)) != 2 || d["organization"] == nil {
		t.Fatalf("package_show: %v", d)
	}
	// the most common tag is on many datasets, most tags on few
	res := f.ok("sysadmin", "package_search", map[string]any{"rows": 0, "include_private": true,
		"facet.field": `["tags"]`, "facet.limit": -1})
	tags := res["search_facets"].(map[string]any)["tags"].(map[string]any)["items"].([]any)
	top, once := 0, 0
	for _, it := range tags {
		c := int(it.(map[string]any)["count"].(float64))
		top = max(top, c)
		if c == 1 {
			once++
		}
	}
	if top < n/5 || once < len(tags)/3 {
		t.Fatalf("tags are not long-tailed: top %d, %d of %d on one dataset", top, once, len(tags))
	}
	again, err := f.svc.Generate(ctx, GenerateOptions{Datasets: n, Seed: 7})
	if err != nil || again.Datasets != 0 || again.Existing != n || again.Organizations != 0 {
		t.Fatalf("second run: %+v %v", again, err)
	}
	fresh := f.open(Options{})
	if got, _ := callSvc(t, fresh, f.users["sysadmin"], "package_search", map[string]any{"rows": 0, "include_private": true, "q": "name:gen-*"}); int(got.(map[string]any)["count"].(float64)) != n {
		t.Fatalf("after a reload: %v", got)
	}
	if _, err := f.svc.Generate(ctx, GenerateOptions{Datasets: MaxGenerateDatasets + 1}); err == nil {
		t.Fatal("no bound on the number of datasets")
	}
}
