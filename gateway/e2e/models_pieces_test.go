package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// moduleCalls is the number of calls the module has run (GET /models/{name}).
func moduleCalls(t *testing.T, g *harness.Gateway, name string) int64 {
	t.Helper()
	_, body := get(t, g, "/models/"+name, nil)
	var mi struct {
		Stats struct{ Calls int64 } `json:"stats"`
	}
	if err := json.Unmarshal(body, &mi); err != nil {
		t.Fatalf("/models/%s: %v %s", name, err, body)
	}
	return mi.Stats.Calls
}

// A batch on an idle module runs as one piece per free run slot, at once
// (two slots: two calls); on a module whose last free instance it would
// take (a pool of one), it is cut into slices. Counted in module calls,
// not time.
func TestBatchIsCutOnlyWhenSomeoneCouldWait(t *testing.T) {
	batch := smilesBatch(200)
	run := func(t *testing.T, g *harness.Gateway) int64 {
		t.Helper()
		before := moduleCalls(t, g, "herg")
		code, _, body := postJSON(t, g, "/hERG/evaluate", batch, nil)
		if code != 200 || strings.Count(string(body), `"smiles":`) != 200 {
			t.Fatalf("batch of 200: %d %.300s", code, body)
		}
		return moduleCalls(t, g, "herg") - before
	}
	// The response cache is off: the batch repeats structures, which the
	// cache would compute once each (the module's calls are under test).
	env := []string{"TOXGATE_MODULES_DIR=" + modulesDir(t, "herg"), "TOXGATE_MODULES_REQUIRE_TOKEN=false", "TOXGATE_MODULES_BATCH_SLICE_ITEMS=50", "TOXGATE_MODULES_RUN_SLOTS=2",
		"TOXGATE_MODULES_RESPONSE_CACHE_BYTES=0"}
	t.Run("idle", func(t *testing.T) {
		g := harness.Start(t, harness.WithEnv(env...))
		// The first batch measures the time per item on a slice (not on
		// the first, which compiles the module), then runs the rest in
		// pieces that fit in half the deadline.
		if n := run(t, g); n < 2 || n > 5 {
			t.Fatalf("the first batch of 200 took %d calls, want 2 to 5", n)
		}
		if n := run(t, g); n != 2 {
			t.Fatalf("a batch of 200 on an idle module with 2 run slots took %d calls, want 2 (one per slot)", n)
		}
	})
	t.Run("last instance", func(t *testing.T) {
		g := harness.Start(t, harness.WithEnv(append(env, "TOXGATE_MODULES_POOL_SIZE=1")...))
		for range 2 {
			if n := run(t, g); n != 4 {
				t.Fatalf("a batch of 200 on a pool of one took %d calls, want 4 slices of 50", n)
			}
		}
	})
}
