package catalog

import (
	"fmt"
	"sync"
	"testing"
)

// TestGroupedWritesKeepPerRecordConflicts runs writers of two processes
// at once, so that each process's store writes are grouped: both create
// datasets under the same names (exactly one create of each name wins, the
// others get CKAN's "already in use"), create datasets of their own (all
// kept), and add resources to one shared dataset (the revision claims
// still let one writer have each revision: none is lost). A third process
// started afterwards reads everything back from the store.
func TestGroupedWritesKeepPerRecordConflicts(t *testing.T) {
	f := newFixture(t)
	other := f.open(Options{})
	f.ok("editor", "package_create", map[string]any{"name": "hub", "owner_org": "tox-lab"})
	svcs := []*Service{f.svc, other}
	const writers, rounds = 8, 6
	var (
		mu       sync.Mutex
		wins     = map[string]int{}
		own      []string
		resNames []string
		wg       sync.WaitGroup
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc := svcs[w%2]
			for i := range rounds {
				contested := fmt.Sprintf("same-%d", i)
				_, err := callSvc(t, svc, f.users["editor"], "package_create", map[string]any{"name": contested, "owner_org": "tox-lab"})
				mu.Lock()
				switch {
				case err == nil:
					wins[contested]++
				case err.Status != 409 || errJSON(err) != `{"__type":"Validation Error","name":["That URL is already in use."]}`:
					t.Errorf("contested create %s: %v", contested, errJSON(err))
				}
				mu.Unlock()
				name := fmt.Sprintf("own-%d-%d", w, i)
				if _, err := callSvc(t, svc, f.users["editor"], "package_create", map[string]any{"name": name, "owner_org": "tox-lab"}); err != nil {
					t.Errorf("create %s: %v", name, errJSON(err))
					continue
				}
				rn := fmt.Sprintf("r-%d-%d", w, i)
				_, err = callSvc(t, svc, f.users["editor"], "resource_create", map[string]any{"package_id": "hub", "name": rn})
				mu.Lock()
				own = append(own, name)
				if err == nil {
					resNames = append(resNames, rn)
				} else if err.Status != 409 {
					t.Errorf("resource_create: %v", errJSON(err))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i := range rounds {
		if n := wins[fmt.Sprintf("same-%d", i)]; n != 1 {
			t.Errorf("same-%d created %d times, want once", i, n)
		}
	}
	fresh := f.open(Options{})
	for _, name := range own {
		if _, err := callSvc(t, fresh, f.users["editor"], "package_show", map[string]any{"id": name}); err != nil {
			t.Errorf("%s lost: %v", name, errJSON(err))
		}
	}
	hub, err := callSvc(t, fresh, f.users["editor"], "package_show", map[string]any{"id": "hub"})
	if err != nil {
		t.Fatal(errJSON(err))
	}
	have := map[string]bool{}
	for _, r := range hub.(map[string]any)["resources"].([]any) {
		have[r.(map[string]any)["name"].(string)] = true
	}
	for _, rn := range resNames {
		if !have[rn] {
			t.Errorf("resource %s lost", rn)
		}
	}
	if len(resNames) < writers*rounds/2 {
		t.Errorf("only %d of %d resource writes succeeded", len(resNames), writers*rounds)
	}
}
