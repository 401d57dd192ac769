package catalog

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"toxgate/catalog/ckan"
	"toxgate/plugins/contract"
)

// jsonRoundTrip decodes an action's result as its reply encodes it.
func jsonRoundTrip(res any, out any) error {
	raw, err := ckan.Marshal(res)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// showArrived is package_show of name on svc for a request the gateway
// took at arrived (contract.Monotonic), returning the title.
func showArrived(t *testing.T, svc *Service, name string, arrived int64) string {
	t.Helper()
	res, err := svc.Do(t.Context(), Request{Action: "package_show", Data: map[string]any{"id": name}, SiteURL: site, Arrived: arrived})
	if err != nil {
		t.Fatalf("package_show %s: %v", name, err)
	}
	var d map[string]any
	if err := jsonRoundTrip(res, &d); err != nil {
		t.Fatal(err)
	}
	title, _ := d["title"].(string)
	return title
}

// TestArrivedRequestSharesACheckStartedAfterIt: a request stamped with the
// instant the gateway took it is answered from a freshness check that
// started after that instant, even one that finished before the request
// reached the catalog (no read of its own), and never from one that
// started before it: a change another process completed before the stamp
// is always seen.
func TestArrivedRequestSharesACheckStartedAfterIt(t *testing.T) {
	if contract.Monotonic() == 0 {
		t.Skip("no machine-wide monotonic clock on this system")
	}
	f := newFixture(t)
	other := f.open(Options{})
	f.ok("editor", "package_create", map[string]any{"name": "stamped", "owner_org": "tox-lab", "title": "first"})

	// the gateway takes the request, then a check starts and finishes
	// (another request's) before this one reaches the catalog
	arrived := contract.Monotonic()
	if err := other.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.ok("editor", "package_patch", map[string]any{"id": "stamped", "title": "second"})
	// the patch completed after the request arrived: the finished check
	// answers it, as it would have had the request come first
	if got := showArrived(t, other, "stamped", arrived); got != "first" {
		t.Fatalf("a request older than a finished check made a read of its own: title %q", got)
	}
	// a request that arrives after the patch completed sees it
	if got := showArrived(t, other, "stamped", contract.Monotonic()); got != "second" {
		t.Fatalf("a change completed before the request arrived is not seen: title %q", got)
	}
	// and so does one without a stamp
	if got := showArrived(t, other, "stamped", 0); got != "second" {
		t.Fatalf("unstamped request: title %q", got)
	}
}

// TestArrivedRequestsSeeEveryEarlierChange: concurrent stamped readers on
// one instance while another instance patches; each read stamped after a
// patch completed sees that patch or a later one.
func TestArrivedRequestsSeeEveryEarlierChange(t *testing.T) {
	if contract.Monotonic() == 0 {
		t.Skip("no machine-wide monotonic clock on this system")
	}
	f := newFixture(t)
	other := f.open(Options{})
	f.ok("editor", "package_create", map[string]any{"name": "moving", "owner_org": "tox-lab", "title": "v0"})
	for v := 1; v <= 8; v++ {
		want := fmt.Sprintf("v%d", v)
		f.ok("editor", "package_patch", map[string]any{"id": "moving", "title": want})
		arrived := contract.Monotonic()
		var wg sync.WaitGroup
		errs := make(chan string, 8)
		for range 8 {
			wg.Go(func() {
				res, err := other.Do(t.Context(), Request{Action: "package_show", Data: map[string]any{"id": "moving"}, SiteURL: site, Arrived: arrived})
				if err != nil {
					errs <- err.Error()
					return
				}
				var d map[string]any
				if err := jsonRoundTrip(res, &d); err != nil {
					errs <- err.Error()
					return
				}
				if got, _ := d["title"].(string); got < want {
					errs <- "title " + got + ", want " + want + " or later"
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}
