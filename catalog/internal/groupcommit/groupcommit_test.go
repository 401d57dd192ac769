package groupcommit

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// Concurrent submitters each get their own item's outcome, every item is
// written exactly once, and no batch exceeds Max.
func TestQueueBatchesAndAnswersEachItem(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]int{}
	largest := 0
	odd := errors.New("odd")
	q := New(8, func(_ context.Context, batch []int) []error {
		mu.Lock()
		defer mu.Unlock()
		largest = max(largest, len(batch))
		errs := make([]error, len(batch))
		for i, v := range batch {
			seen[v]++
			if v%2 == 1 {
				errs[i] = odd
			}
		}
		return errs
	})
	var wg sync.WaitGroup
	for v := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := q.Submit(context.Background(), v)
			if (v%2 == 1) != errors.Is(err, odd) {
				t.Errorf("item %d: %v", v, err)
			}
		}()
	}
	wg.Wait()
	if len(seen) != 200 {
		t.Fatalf("%d items written, want 200", len(seen))
	}
	for v, n := range seen {
		if n != 1 {
			t.Errorf("item %d written %d times", v, n)
		}
	}
	if largest > 8 {
		t.Errorf("a batch of %d, Max 8", largest)
	}
}

// A shared outcome reaches every item of the batch.
func TestAllSharesOneError(t *testing.T) {
	boom := errors.New("boom")
	q := New(4, func(_ context.Context, batch []string) []error { return All(len(batch), boom) })
	if err := q.Submit(context.Background(), "a"); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if All(3, nil) != nil {
		t.Fatal("All(n, nil) must be nil")
	}
}

// A submitter whose context ends stops waiting with its context's error.
func TestSubmitStopsWithItsContext(t *testing.T) {
	release := make(chan struct{})
	q := New(1, func(context.Context, []int) []error { <-release; return nil })
	go func() { _ = q.Submit(context.Background(), 1) }() // holds the writer
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Submit(ctx, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	close(release)
}
