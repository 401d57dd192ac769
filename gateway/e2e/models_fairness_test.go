package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

var batchSMILES = []string{
	"C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C", "CCO", "c1ccccc1O", "CC(=O)Oc1ccccc1C(=O)O",
	"CN1CCC[C@H]1c1cccnc1", "CC(C)Cc1ccc(cc1)C(C)C(=O)O", "O=C(O)c1ccccc1O", "CCN(CC)CCOC(=O)c1ccc(N)cc1",
}

func smilesBatch(n int) string {
	list := make([]string, n)
	for i := range list {
		list[i] = batchSMILES[i%len(batchSMILES)]
	}
	b, _ := json.Marshal(map[string]any{"smiles": list})
	return string(b)
}

// One caller floods hERG with concurrent 1000-SMILES batches on a pool of
// one instance; another caller's single calls still complete, each served
// within a slice or two of the flood (counted in batches the flood
// completes meanwhile, not in time); the flood's calls past its share of
// the queue get 429 with Retry-After, counted in the metrics.
func TestModelFairShareUnderABatchFlood(t *testing.T) {
	g := harness.Start(t, harness.WithEnv(
		"TOXGATE_MODULES_DIR="+modulesDir(t, "herg"),
		"TOXGATE_MODULES_POOL_SIZE=1",
		"TOXGATE_MODULES_CALLER_QUEUE=3",
		// The module's own queue is under test, not the cap across modules.
		"TOXGATE_MODULES_CALLER_RUNNING=8",
		// The flood repeats one batch: with the response cache it would
		// cost the module nothing after the first (see TestModelResponseCache).
		"TOXGATE_MODULES_RESPONSE_CACHE_BYTES=0",
	))
	admin := adminToken(t, g)
	provision(t, g, admin, "flooder", "flooder-password-1", true, "models")
	provision(t, g, admin, "bystander", "bystander-password-1", true, "models")
	flooder := http.Header{"Authorization": {"Bearer " + tokenFor(t, g, admin, "flooder", nil)}}
	bystander := http.Header{"Authorization": {"Bearer " + tokenFor(t, g, admin, "bystander", nil)}}
	batch := smilesBatch(1000)
	if code, _, body := postJSON(t, g, "/hERG/evaluate", batch, flooder.Clone()); code != 200 {
		t.Fatalf("one batch alone: %d %.300s", code, body)
	} else if n := strings.Count(string(body), `"smiles":`); n != 1000 {
		t.Fatalf("one batch alone answered %d rows, want 1000", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var batchesDone, rejected atomic.Int64
	var rejectedBody atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				h := flooder.Clone()
				h.Set("Content-Type", "application/json")
				resp, body, err := g.Do(ctx, http.MethodPost, "/hERG/evaluate", h, []byte(batch))
				if err != nil {
					return
				}
				switch resp.StatusCode {
				case 200:
					batchesDone.Add(1)
				case 429:
					if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 {
						t.Errorf("429 without a Retry-After of at least 1 s: %q", resp.Header.Get("Retry-After"))
					}
					rejected.Add(1)
					rejectedBody.Store(string(body))
					time.Sleep(20 * time.Millisecond) // a pause instead of spinning (not an assertion)
				default:
					t.Errorf("flood batch: %d %.300s", resp.StatusCode, body)
					return
				}
			}
		}()
	}
	// Wait until the flood holds the instance and a queue (completions, not time).
	for batchesDone.Load() < 2 {
		if ctx.Err() != nil {
			t.Fatal("the flood completed no batch")
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := batchesDone.Load()
	const calls = 5
	for i := range calls {
		code, _, body := postJSON(t, g, "/hERG/evaluate", `{"smiles":"CCN(CC)CCOC(=O)c1ccc(N)cc1"}`, bystander.Clone())
		if code != 200 || !strings.Contains(string(body), `"results":[{`) {
			t.Fatalf("bystander call %d during the flood: %d %.300s", i, code, body)
		}
	}
	during := batchesDone.Load() - before
	close(stop)
	cancel()
	wg.Wait()
	// Each batch is 20 slices; the bystander waits for one slice per call, so
	// the flood finishes at most a batch or two meanwhile (FIFO: one batch
	// per queued flood call, per bystander call).
	if during > 3 {
		t.Errorf("the flood completed %d batches while the bystander made %d calls; want at most 3", during, calls)
	}
	if rejected.Load() == 0 {
		t.Fatal("6 concurrent batches with a caller queue of 3 and one instance: no 429")
	}
	var eb struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(rejectedBody.Load().(string)), &eb); err != nil || eb.Error.Code != "too_many_requests" || !strings.Contains(eb.Error.Message, "retry in") {
		t.Errorf("429 body: %v %s", err, rejectedBody.Load())
	}
	_, mbody := get(t, g, "/metrics", nil)
	m := regexp.MustCompile(`toxgate_model_rejected_total\{model="herg",reason="caller_queue_full"\} (\d+)`).FindSubmatch(mbody)
	if m == nil {
		t.Fatalf("no toxgate_model_rejected_total for herg in /metrics")
	}
	if n, _ := strconv.Atoi(string(m[1])); int64(n) < rejected.Load() {
		t.Errorf("metric counts %d rejections, the flood saw %d", n, rejected.Load())
	}
	t.Logf("flood: %d batches before, %d during the bystander's %d calls, %d refused", before, during, calls, rejected.Load())
}
