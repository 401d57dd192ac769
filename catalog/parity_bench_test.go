package catalog

import (
	"context"
	"testing"
	"time"

	"toxgate/catalog/ckan"
)

// BenchmarkLookups runs, in process on 10,000 datasets, the actions that
// scan the datasets in memory (resource_search, the autocompletes,
// package_collaborator_list_for_user) and current_package_list_with_resources,
// each after package_search (q plus two facets) as the baseline of the same
// run: "x_search" is an action's time per call over package_search's.
func BenchmarkLookups(b *testing.B) {
	svc := benchCatalog(b)
	svc.st.allowCollaborators = true
	ctx := context.Background()
	user := Caller{UserID: "u-bench", Name: "bench"}
	if _, err := svc.c.users.InsertOne(ctx, map[string]any{"_id": user.UserID, "name": user.Name, "state": "active"}); err != nil {
		b.Fatal(err)
	}
	sys := Caller{UserID: "u-sys", Name: "sys", Sysadmin: true}
	run := func(b *testing.B, c Caller, action string, data map[string]any) time.Duration {
		start := time.Now()
		for b.Loop() {
			res, err := svc.Do(ctx, Request{Action: action, Caller: c, Data: data, SiteURL: site})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ckan.Marshal(res); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start) / time.Duration(b.N)
	}
	var baseline time.Duration
	b.Run("package_search", func(b *testing.B) {
		baseline = run(b, Caller{}, "package_search", map[string]any{"q": "herg assay", "facet.field": `["tags","organization"]`})
	})
	for _, c := range []struct {
		name   string
		caller Caller
		data   map[string]any
	}{
		{"resource_search", Caller{}, map[string]any{"query": "name:herg", "limit": 10}},
		{"package_autocomplete", Caller{}, map[string]any{"q": "herg"}},
		{"format_autocomplete", Caller{}, map[string]any{"q": "cs"}},
		{"organization_autocomplete", Caller{}, map[string]any{"q": "lab"}},
		{"package_collaborator_list_for_user", user, map[string]any{"id": "u-bench"}},
		{"current_package_list_with_resources", sys, map[string]any{"limit": 10}},
	} {
		b.Run(c.name, func(b *testing.B) {
			per := run(b, c.caller, c.name, c.data)
			if baseline > 0 {
				b.ReportMetric(float64(per)/float64(baseline), "x_search")
			}
		})
	}
}
