package catalog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"toxgate/catalog/ckan"
	"toxgate/catalog/search"
	"toxgate/gateway/identity"
)

// package_search answers hostile q, fq, fq_list, sort and facet.field with
// CKAN's 409 "Search Error" naming the bound, and pages with any start.
func TestPackageSearchBounds(t *testing.T) {
	f := newFixture(t)
	f.ok("editor", "package_create", map[string]any{"name": "herg-set", "owner_org": "tox-lab", "title": "hERG blockers", "tags": []any{map[string]any{"name": "herg"}}})
	dashes := strings.Repeat("-", 8_388_000) + "x"
	many := func(n int, term string) string { return strings.TrimSuffix(strings.Repeat(term+" OR ", n), " OR ") }
	refused := map[string]struct {
		data map[string]any
		msg  string
	}{
		"fq of 8 MB of dashes":  {map[string]any{"fq": dashes}, "query is too long: 8388001 bytes, at most 65536"},
		"q of 8 MB of dashes":   {map[string]any{"q": "name:" + dashes}, "query is too long"},
		"free text of 8 MB":     {map[string]any{"q": strings.Repeat("herg ", 2<<20)}, "query is too long"},
		"deep parentheses":      {map[string]any{"fq": strings.Repeat("(", 40) + "x" + strings.Repeat(")", 40)}, "nests parentheses more than 32 deep"},
		"a parenthesis flood":   {map[string]any{"fq": strings.Repeat("(", search.MaxQueryBytes)}, "more than 32 deep"},
		"too many terms":        {map[string]any{"fq": many(search.MaxClauses+1, "tags:x")}, "too many clauses"},
		"terms over fq_list":    {map[string]any{"fq_list": []any{many(600, "tags:x"), many(600, "tags:y")}}, "too many clauses"},
		"terms over q and fq":   {map[string]any{"q": many(600, "name:x"), "fq": many(600, "tags:x")}, "too many clauses"},
		"free text tokens":      {map[string]any{"q": strings.Repeat("herg ", search.MaxClauses+1)}, "too many clauses"},
		"too many wildcards":    {map[string]any{"fq": many(search.MaxWildcards+1, "name:h*")}, "too many wildcard terms"},
		"a long sort":           {map[string]any{"sort": strings.Repeat("name asc, ", 10_000)}, "sort is too long"},
		"too many facet fields": {map[string]any{"facet.field": strings.Split(strings.Repeat("tags,", search.MaxFacetFields), ",")}, "too many facet fields"},
	}
	for name, c := range refused {
		e := f.fail("", "package_search", c.data, 409)
		if e.Type != "Search Error" || !strings.HasPrefix(e.Message, "Search error: ") || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: %s, want a Search Error with %q", name, errJSON(e), c.msg)
		}
		if len(e.Message) > 2*search.MaxQueryBytes {
			t.Errorf("%s: a message of %d bytes", name, len(e.Message))
		}
	}
	// within the bounds, and any start and rows
	for name, data := range map[string]map[string]any{
		"odd dashes":         {"fq": strings.Repeat("-", search.MaxQueryBytes-9) + "tags:x"},
		"repeated sort keys": {"sort": strings.Repeat("name asc, ", 100) + "title desc"},
		"the largest start":  {"start": math.MaxInt64, "rows": 1000},
		"repeated facets":    {"facet.field": `["tags","tags","tags"]`},
	} {
		res := f.ok("", "package_search", data)
		if res["count"].(float64) != 1 {
			t.Errorf("%s: %v", name, res)
		}
	}
	// fl: each result's cost does not grow with the list
	fl := make([]any, 200_000)
	for i := range fl {
		fl[i] = "no_such_field"
	}
	fl[len(fl)/2] = "name"
	res := f.ok("", "package_search", map[string]any{"fl": fl})
	results := res["results"].([]any)
	if len(results) != 1 || len(results[0].(map[string]any)) != 1 || results[0].(map[string]any)["name"] != "herg-set" {
		t.Errorf("fl: %v", results)
	}
}

// lockedBuffer is a bytes.Buffer written by the catalog's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
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

// A panic inside an action handler is that call's 500 "Internal Server
// Error", logged with its stack; the catalog keeps serving.
func TestActionPanicRecovered(t *testing.T) {
	f := newFixture(t)
	f.ok("editor", "package_create", map[string]any{"name": "still-here", "owner_org": "tox-lab"})
	register("test_panic", true, "Panics (this test only).", func(context.Context, *Service, *Request) (any, error) {
		var ds []*Dataset
		return ds[3].Name, nil // an index out of range, as a bug would raise
	})
	t.Cleanup(func() { delete(actions, "test_panic") })
	logs := &lockedBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, err := New(ctx, f.db, Options{Logger: slog.New(slog.NewJSONHandler(logs, nil)), Users: identity.NewStore(f.db)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Do(ctx, Request{Action: "test_panic", Data: map[string]any{}, SiteURL: site})
	var ce *ckan.Error
	if !errors.As(err, &ce) || ce.Status != 500 || ce.Type != ckan.TypeInternal || ce.Message != "Internal Server Error" {
		t.Fatalf("panicking action: %v, want CKAN's 500 Internal Server Error", err)
	}
	log := logs.String()
	if !strings.Contains(log, "catalog action panicked") || !strings.Contains(log, "index out of range") || !strings.Contains(log, "searchbounds_test.go") {
		t.Fatalf("log lacks the panic or its stack: %s", log)
	}
	got, cerr := callSvc(t, svc, Caller{}, "package_show", map[string]any{"id": "still-here"})
	if cerr != nil || got.(map[string]any)["name"] != "still-here" {
		t.Fatalf("package_show after the panic: %v %v", cerr, got)
	}
}
