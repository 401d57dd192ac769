package catalog

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"toxgate/catalog/ckan"
)

// rawCall runs an action and returns the encoded result.
func rawCall(t *testing.T, svc *Service, c Caller, action string, data map[string]any, siteURL string) []byte {
	t.Helper()
	res, err := svc.Do(context.Background(), Request{Action: action, Caller: c, Data: data, SiteURL: siteURL})
	if err != nil {
		t.Fatalf("%s %v: %v", action, data, err)
	}
	b, err := ckan.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncodedRepliesEqualGeneric checks that package_search's directly
// encoded reply and package_show's cached encoding are byte for byte what
// encoding the maps and dicts gives, and that the cache follows changes.
func TestEncodedRepliesEqualGeneric(t *testing.T) {
	f := newFixture(t)
	// users who are not sysadmins create organizations here (ckan.auth.user_create_organizations)
	f.withOptions(Options{Auth: AuthOptions{UserCreateOrganizations: true}})
	f.ok("admin", "organization_create", map[string]any{"name": "heart-lab", "title": "Herz \"Labor\" — Zürich <b>&</b>"})
	mk := func(name, title, org string, res map[string]any, tags ...string) {
		var ts []any
		for _, tg := range tags {
			ts = append(ts, map[string]any{"name": tg})
		}
		f.ok("sysadmin", "package_create", map[string]any{"name": name, "title": title, "notes": "Notes on " + title, "owner_org": org, "tags": ts,
			"license_id": "cc-by", "resources": []any{res}, "extras": []any{map[string]any{"key": "ünit", "value": "µg/L \"x\""}}})
	}
	mk("herg-blockers", "hERG blockers ☢", "tox-lab", map[string]any{"url": "http://x.org/a.csv", "format": "CSV"}, "cardiotox", "herg")
	mk("liver-enzymes", "Liver \"enzymes\" \\ ß", "heart-lab", map[string]any{"url": "x.org/b", "description": "raw\tdata\n"}, "hépato tox", "herg")
	mk("uploaded", "Uploaded herg file", "heart-lab", map[string]any{"url": "file.csv", "url_type": "upload", "name": "up"}, "cardiotox", "𝔘nicode")
	f.ok("sysadmin", "package_create", map[string]any{"name": "private-herg", "owner_org": "tox-lab", "private": true})

	queries := []map[string]any{
		{"q": "herg", "facet.field": `["tags","organization","license_id","res_format","tags"]`},
		{"facet.field": `["organization"]`, "rows": 2, "start": 1},
		{"q": "nothing-matches-this", "facet.field": `["tags"]`},
		{"fq": "tags:cardiotox", "sort": "name asc", "facet.field": `["unknown_field","tags"]`, "facet.limit": 1},
		{},
	}
	for _, siteURL := range []string{site, "http://other.test/"} {
		for _, user := range []string{"", "sysadmin"} {
			for _, q := range queries {
				got := rawCall(t, f.svc, f.users[user], "package_search", q, siteURL)
				searchGeneric = true
				want := rawCall(t, f.svc, f.users[user], "package_search", q, siteURL)
				searchGeneric = false
				if !bytes.Equal(got, want) {
					t.Fatalf("package_search %v as %q:\n got %s\nwant %s", q, user, got, want)
				}
			}
		}
		for _, name := range []string{"herg-blockers", "liver-enzymes", "uploaded", "private-herg"} {
			for range 2 { // rendered, then cached
				got := rawCall(t, f.svc, f.users["sysadmin"], "package_show", map[string]any{"id": name}, siteURL)
				want, err := ckan.Marshal(viewed(f.svc.st, func() *DatasetDict { return f.svc.st.datasetDict(f.svc.st.dataset(name), siteURL) }))
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("package_show %s at %s:\n got %s\nwant %s", name, siteURL, got, want)
				}
			}
		}
	}
	// a changed organization or dataset shows at once
	f.ok("sysadmin", "organization_patch", map[string]any{"id": "heart-lab", "description": "new description"})
	if !bytes.Contains(rawCall(t, f.svc, Caller{}, "package_show", map[string]any{"id": "uploaded"}, site), []byte("new description")) {
		t.Fatal("organization change not shown")
	}
	f.ok("sysadmin", "package_patch", map[string]any{"id": "uploaded", "title": "Renamed"})
	if !bytes.Contains(rawCall(t, f.svc, Caller{}, "package_search", map[string]any{"q": "name:uploaded"}, site), []byte(`"title": "Renamed"`)) {
		t.Fatal("dataset change not shown")
	}
}

// TestConcurrentReadsAndWrites runs searches and shows (which fill the
// encoding cache and use pooled search memory) beside writes, for the race
// detector, and checks each write is seen by the next request.
func TestConcurrentReadsAndWrites(t *testing.T) {
	f := newFixture(t)
	for i := range 20 {
		f.ok("sysadmin", "package_create", map[string]any{"name": fmt.Sprintf("c-%d", i), "owner_org": "tox-lab", "title": "herg set", "tags": []any{map[string]any{"name": "herg"}}})
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				for _, r := range []Request{
					{Action: "package_search", Data: map[string]any{"q": "herg set", "facet.field": `["tags","organization"]`}, SiteURL: site},
					{Action: "package_show", Data: map[string]any{"id": fmt.Sprintf("c-%d", (g*7+i)%20)}, SiteURL: site},
				} {
					res, err := f.svc.Do(context.Background(), r)
					if err == nil {
						_, err = ckan.Marshal(res)
					}
					if err != nil {
						t.Error(r.Action, err)
					}
				}
			}
		}()
	}
	for i := range 10 {
		title := fmt.Sprintf("herg set v%d", i)
		f.ok("sysadmin", "package_patch", map[string]any{"id": fmt.Sprintf("c-%d", i), "title": title})
		if !bytes.Contains(rawCall(t, f.svc, Caller{}, "package_show", map[string]any{"id": fmt.Sprintf("c-%d", i)}, site), []byte(title)) {
			t.Errorf("write %d not seen", i)
		}
	}
	wg.Wait()
}

// TestEncodedRepliesSurviveEviction shows datasets through a catalog
// whose reply cache holds one reply, so that every other show encodes
// again: each reply equals the one of a catalog holding every reply, also
// after a change of the dataset.
func TestEncodedRepliesSurviveEviction(t *testing.T) {
	f := newFixture(t)
	names := []string{"evict-a", "evict-b", "evict-c"}
	for _, n := range names {
		f.ok("sysadmin", "package_create", map[string]any{"name": n, "owner_org": "tox-lab", "notes": "notes of " + n,
			"resources": []any{map[string]any{"url": "http://x.org/" + n + ".csv", "format": "CSV"}}})
	}
	small := f.open(Options{ReplyCacheEntries: 1})
	full := f.open(Options{})
	for round := range 3 {
		if round == 2 {
			f.ok("sysadmin", "package_patch", map[string]any{"id": "evict-b", "notes": "changed"})
		}
		for _, n := range names {
			got := rawCall(t, small, f.users[""], "package_show", map[string]any{"id": n}, site)
			want := rawCall(t, full, f.users[""], "package_show", map[string]any{"id": n}, site)
			if !bytes.Equal(got, want) {
				t.Fatalf("round %d, %s: evicting cache gives\n%s\nwant\n%s", round, n, got, want)
			}
		}
	}
	if got := rawCall(t, small, f.users[""], "package_show", map[string]any{"id": "evict-b"}, site); !bytes.Contains(got, []byte(`"notes": "changed"`)) {
		t.Fatalf("change not shown: %s", got)
	}
}
