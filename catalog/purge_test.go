package catalog

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"toxgate/catalog/ckan"
)

// TestPurgesRaceWrites purges groups and an organization while other
// requests patch them and read the catalog (run it with -race). Every
// purge goes through the write path's purge, under the record's lock, so
// no write in flight puts a purged record back into the read model:
// afterwards the process that purged answers as a catalog freshly loaded
// from the store does.
func TestPurgesRaceWrites(t *testing.T) {
	f := newFixture(t)
	sys := f.users["sysadmin"]
	const n = 6
	var ids []string
	for i := range n {
		g := f.ok("sysadmin", "group_create", map[string]any{"name": fmt.Sprintf("race-%d", i)})
		ids = append(ids, g["id"].(string))
	}
	o := f.ok("sysadmin", "organization_create", map[string]any{"name": "race-org"})
	ids = append(ids, o["id"].(string))
	f.ok("sysadmin", "package_create", map[string]any{"name": "raced", "owner_org": "tox-lab", "groups": []any{map[string]any{"name": "race-0"}}})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	do := func(action string, data map[string]any) error {
		_, err := f.svc.Do(ctx, Request{Action: action, Caller: sys, Data: data, SiteURL: site})
		if err != nil && ckan.AsError(err).Type == ckan.TypeInternal {
			return fmt.Errorf("%s: %w", action, err)
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(ids)+8)
	for i, id := range ids {
		patch, purge := "group_patch", "group_purge"
		if i == n {
			patch, purge = "organization_patch", "organization_purge"
		}
		wg.Add(3)
		go func() { // a writer
			defer wg.Done()
			for j := range 4 {
				if err := do(patch, map[string]any{"id": id, "title": fmt.Sprintf("t%d", j)}); err != nil {
					errs <- err
				}
			}
		}()
		go func() { // readers
			defer wg.Done()
			for range 4 {
				for _, a := range []string{"group_list", "organization_list", "package_search"} {
					if err := do(a, map[string]any{"all_fields": true}); err != nil {
						errs <- err
					}
				}
			}
		}()
		go func() { // the purge
			defer wg.Done()
			if err := do(purge, map[string]any{"id": id}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, id := range ids {
		show := "group_show"
		if i == n {
			show = "organization_show"
		}
		f.fail("sysadmin", show, map[string]any{"id": id}, 404)
	}
	fresh := f.open(Options{})
	for _, a := range []string{"group_list", "organization_list"} {
		got, _ := callSvc(t, f.svc, sys, a, nil)
		want, _ := callSvc(t, fresh, sys, a, nil)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: the purging process has %v, the store %v", a, got, want)
		}
	}
	d := f.ok("sysadmin", "package_show", map[string]any{"id": "raced"})
	if g := groupNames(d); len(g) != 0 {
		sort.Strings(g)
		t.Errorf("the dataset is still in purged groups %v", g)
	}
}

// TestPurgeWaitsForTheRecordLock holds a record's write lock, as a write of
// the record in flight does, and purges the record: every purge (dataset,
// organization, group, vocabulary) must wait at that lock, and finish once
// it is released.
func TestPurgeWaitsForTheRecordLock(t *testing.T) {
	f := newFixture(t)
	g := f.ok("sysadmin", "group_create", map[string]any{"name": "locked-group"})
	o := f.ok("sysadmin", "organization_create", map[string]any{"name": "locked-org"})
	d := f.ok("sysadmin", "package_create", map[string]any{"name": "locked-dataset", "owner_org": "tox-lab"})
	v := f.ok("sysadmin", "vocabulary_create", map[string]any{"name": "locked-vocab", "tags": []any{map[string]any{"name": "xx"}}})
	for _, c := range []struct{ action, id string }{
		{"group_purge", g["id"].(string)},
		{"organization_purge", o["id"].(string)},
		{"dataset_purge", d["id"].(string)},
		{"vocabulary_delete", v["id"].(string)},
	} {
		unlock := f.svc.lockFor(c.id)
		done := make(chan error, 1)
		go func() {
			_, err := f.svc.Do(context.Background(), Request{Action: c.action, Caller: f.users["sysadmin"], Data: map[string]any{"id": c.id}, SiteURL: site})
			done <- err
		}()
		for waiting := false; !waiting; {
			select {
			case err := <-done:
				unlock()
				t.Fatalf("%s finished (%v) while the record's lock was held", c.action, err)
			default:
			}
			f.svc.lockMu.Lock()
			waiting = f.svc.locks[c.id].refs == 2
			f.svc.lockMu.Unlock()
			runtime.Gosched()
		}
		unlock()
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", c.action, err)
		}
	}
	f.fail("sysadmin", "group_show", map[string]any{"id": "locked-group"}, 404)
	f.fail("sysadmin", "organization_show", map[string]any{"id": "locked-org"}, 404)
	f.fail("sysadmin", "package_show", map[string]any{"id": "locked-dataset"}, 404)
	f.fail("sysadmin", "vocabulary_show", map[string]any{"id": "locked-vocab"}, 404)
}
