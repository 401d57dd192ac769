package modulehost

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitQueued polls until the gate has n calls waiting (bounded).
func waitQueued(t *testing.T, g *gate, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for g.stats().Queued != n {
		if time.Now().After(deadline) {
			t.Fatalf("gate has %d waiting, want %d", g.stats().Queued, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A freed slot goes to the waiting caller with the fewest calls running,
// not to the caller that queued first.
func TestGateServesTheOtherCallerFirst(t *testing.T) {
	g := newGate(1, 16, 8, time.Minute)
	if err := g.acquire(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 8)
	start := func(caller string) {
		go func() {
			if err := g.acquire(context.Background(), caller); err != nil {
				order <- "error " + err.Error()
				return
			}
			order <- caller
			g.release(caller, time.Millisecond)
		}()
	}
	for range 3 {
		start("a")
	}
	waitQueued(t, g, 3)
	start("b")
	waitQueued(t, g, 4)
	g.release("a", time.Millisecond)
	if got := <-order; got != "b" {
		t.Fatalf("first served after a's call: %s, want b (a had 3 waiting before b came)", got)
	}
	for range 3 {
		if got := <-order; got != "a" {
			t.Fatalf("then %s, want a", got)
		}
	}
	if s := g.stats(); s != (gateStats{}) {
		t.Fatalf("gate not empty at the end: %+v", s)
	}
}

// Past the caller's share of the queue, past the module's queue and after
// waiting too long, calls are refused with a reason and a retry delay.
func TestGateRefusesPastItsBounds(t *testing.T) {
	g := newGate(1, 3, 2, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := g.acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		go g.acquire(ctx, "a")
	}
	waitQueued(t, g, 2)
	var r *rejection
	if err := g.acquire(ctx, "a"); !errors.As(err, &r) || r.reason != RejectCallerQueueFull || r.retryAfter < time.Second {
		t.Fatalf("a's third waiting call: %v, want %s with a retry delay", err, RejectCallerQueueFull)
	}
	go g.acquire(ctx, "b")
	waitQueued(t, g, 3)
	if err := g.acquire(ctx, "c"); !errors.As(err, &r) || r.reason != RejectQueueFull {
		t.Fatalf("a call past the module's queue: %v, want %s", err, RejectQueueFull)
	}
	short := newGate(1, 3, 2, time.Millisecond)
	if err := short.acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := short.acquire(ctx, "b"); !errors.As(err, &r) || r.reason != RejectWaitTimeout {
		t.Fatalf("a call that waited past the limit: %v, want %s", err, RejectWaitTimeout)
	}
}
