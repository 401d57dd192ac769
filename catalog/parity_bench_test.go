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
// each call alternating with a package_search (q plus two facets) as the
// baseline: "x_search" is the action's time over package_search's.
func BenchmarkLookups(b *testing.B) {
	svc := benchCatalog(b)
	svc.st.allowCollaborators = true
	ctx := context.Background()
	user := Caller{UserID: "u-bench", Name: "bench"}
	if _, err := svc.c.users.InsertOne(ctx, map[string]any{"_id": user.UserID, "name": user.Name, "state": "active"}); err != nil {
		b.Fatal(err)
	}
	sys := Caller{UserID: "u-sys", Name: "sys", Sysadmin: true}
	call := func(b *testing.B, c Caller, action string, data map[string]any) time.Duration {
		start := time.Now()
		res, err := svc.Do(ctx, Request{Action: action, Caller: c, Data: data, SiteURL: site})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ckan.Marshal(res); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	search := map[string]any{"q": "herg assay", "facet.field": `["tags","organization"]`}
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
		// each call alternates with a package_search, so that both see the
		// same machine
		b.Run(c.name, func(b *testing.B) {
			var own, base time.Duration
			n := 0
			for b.Loop() {
				base += call(b, Caller{}, "package_search", search)
				own += call(b, c.caller, c.name, c.data)
				n++
			}
			b.ReportMetric(float64(own.Microseconds())/float64(n), "action_µs")
			b.ReportMetric(float64(base.Microseconds())/float64(n), "search_µs")
			b.ReportMetric(float64(own)/float64(base), "x_search")
		})
	}
}
