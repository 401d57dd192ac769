package modulehost

import (
	"toxgate/gateway/modulehost/modelapi"

	"context"
	"errors"
	"testing"
	"time"
)

// waitQueued polls until p has n calls waiting (bounded).
func waitQueued(t *testing.T, s *scheduler, p *pool, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.poolStats(p).Queued != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls waiting, want %d", s.poolStats(p).Queued, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func who(key string) Caller { return Caller{Key: key} }

// A freed instance goes to the waiting caller with the fewest calls
// running, not to the caller that queued first.
func TestSchedulerServesTheOtherCallerFirst(t *testing.T) {
	s := newScheduler(1, 0, 0.5)
	p := newPool(1, 16, 8, time.Minute, 0.5)
	first, err := s.acquire(context.Background(), who("a"), p, false)
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 8)
	start := func(caller string) {
		go func() {
			tk, err := s.acquire(context.Background(), who(caller), p, false)
			if err != nil {
				order <- "error " + err.Error()
				return
			}
			order <- caller
			s.release(caller, tk, time.Millisecond, 0)
		}()
	}
	for range 3 {
		start("a")
	}
	waitQueued(t, s, p, 3)
	start("b")
	waitQueued(t, s, p, 4)
	s.release("a", first, time.Millisecond, 0)
	if got := <-order; got != "b" {
		t.Fatalf("first served after a's call: %s, want b (a had 3 waiting before b came)", got)
	}
	for range 3 {
		if got := <-order; got != "a" {
			t.Fatalf("then %s, want a", got)
		}
	}
	if st := s.stats(); st != (schedStats{}) {
		t.Fatalf("scheduler not empty at the end: %+v", st)
	}
}

// Past the caller's share of the queue, past the module's queue and after
// waiting too long, calls are refused with a reason and a retry delay; a
// caller with nothing running or waiting on the module still gets a place.
func TestSchedulerRefusesPastItsBounds(t *testing.T) {
	s := newScheduler(1, 0, 0.5)
	p := newPool(1, 3, 2, time.Hour, 0.5)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := s.acquire(ctx, who("a"), p, false); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		go s.acquire(ctx, who("a"), p, false)
	}
	waitQueued(t, s, p, 2)
	var r *rejection
	if _, err := s.acquire(ctx, who("a"), p, false); !errors.As(err, &r) || r.reason != RejectCallerQueueFull || r.retryAfter < time.Second {
		t.Fatalf("a's third waiting call: %v, want %s with a retry delay", err, RejectCallerQueueFull)
	}
	go s.acquire(ctx, who("b"), p, false)
	waitQueued(t, s, p, 3)
	if _, err := s.acquire(ctx, who("b"), p, false); !errors.As(err, &r) || r.reason != RejectQueueFull {
		t.Fatalf("b's second call past the module's queue: %v, want %s", err, RejectQueueFull)
	}
	go s.acquire(ctx, who("c"), p, false) // c has nothing there yet: it gets a place
	waitQueued(t, s, p, 4)

	short := newPool(1, 3, 2, time.Millisecond, 0.5)
	s2 := newScheduler(1, 0, 0.5)
	if _, err := s2.acquire(ctx, who("a"), short, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.acquire(ctx, who("a"), short, false); !errors.As(err, &r) || r.reason != RejectWaitTimeout {
		t.Fatalf("a call that waited past the limit: %v, want %s", err, RejectWaitTimeout)
	}
}

// A caller alone runs on every run slot; a second caller that comes while
// every slot is taken starts its first call at once (below its share),
// and its next ones as soon as the first caller is back at its share.
func TestSchedulerIsWorkConserving(t *testing.T) {
	s := newScheduler(2, 0, 0.5)
	p := newPool(8, 64, 64, time.Minute, 0.5)
	ctx := context.Background()
	var held []*ticket
	for range 2 {
		tk, err := s.acquire(ctx, who("a"), p, false)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, tk)
	}
	if st := s.callerStats("a"); st.Running != 2 {
		t.Fatalf("a alone runs %d calls, want both slots", st.Running)
	}
	go s.acquire(ctx, who("a"), p, false) // over its share: waits
	waitQueued(t, s, p, 1)
	b1, err := s.acquire(ctx, who("b"), p, false)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.stats(); st.Running != 3 {
		t.Fatalf("b's first call did not start at once: %+v", st)
	}
	granted := make(chan *ticket, 1)
	go func() {
		tk, err := s.acquire(ctx, who("b"), p, false)
		if err == nil {
			granted <- tk
		}
	}()
	waitQueued(t, s, p, 2)
	// a ends one call: 2 running again, a at 1, b at 1: both at their
	// share of 1, the slot stays with the one served least recently.
	s.release("a", held[0], time.Millisecond, 0)
	if st := s.stats(); st.Running != 2 || st.Queued != 2 {
		t.Fatalf("after a's release: %+v, want 2 running, 2 waiting", st)
	}
	s.release("a", held[1], time.Millisecond, 0)
	// a runs 0 now: its waiting call goes first (fewest running).
	if st := s.callerStats("a"); st.Running != 1 || st.Queued != 0 {
		t.Fatalf("a after its second release: %+v, want its waiting call running", st)
	}
	s.release("b", b1, time.Millisecond, 0)
	select {
	case <-granted:
	case <-time.After(10 * time.Second):
		t.Fatal("b's second call was not started when b's first ended")
	}
}

// A caller of weight 3 beside one of weight 1 runs three calls for the
// other's one when both keep the slots busy.
func TestSchedulerWeights(t *testing.T) {
	s := newScheduler(4, 0, 0.5)
	p := newPool(64, 512, 128, time.Minute, 0.5)
	ctx := context.Background()
	type grant struct {
		key string
		tk  *ticket
	}
	granted := make(chan grant, 16)
	running := map[string][]*ticket{}
	receive := func(want string) {
		t.Helper()
		g := <-granted
		if g.key != want {
			t.Fatalf("a call of %s started, want one of %s", g.key, want)
		}
		running[g.key] = append(running[g.key], g.tk)
	}
	arrive := func(c Caller, n int) {
		for range n {
			go func() {
				if tk, err := s.acquire(ctx, c, p, false); err == nil {
					granted <- grant{c.Key, tk}
				}
			}()
		}
	}
	arrive(Caller{Key: "light", Weight: 1}, 8)
	for range 4 { // alone: every slot
		receive("light")
	}
	waitQueued(t, s, p, 4)
	arrive(Caller{Key: "heavy", Weight: 3}, 8)
	for range 3 { // below its share of 3: at once
		receive("heavy")
	}
	waitQueued(t, s, p, 9)
	for range 3 { // light is over its share of 1: its ends start nothing
		tk := running["light"][0]
		running["light"] = running["light"][1:]
		s.release("light", tk, time.Millisecond, 0)
	}
	if st := s.stats(); st.Running != 4 || st.Queued != 9 {
		t.Fatalf("after light's calls ended: %+v, want 4 running, 9 waiting", st)
	}
	for range 4 { // each end starts a call of the same caller: 3 to 1 holds
		for _, key := range []string{"light", "heavy"} {
			tk := running[key][0]
			running[key] = running[key][1:]
			s.release(key, tk, time.Millisecond, 0)
			receive(key)
		}
		if h, l := s.callerStats("heavy").Running, s.callerStats("light").Running; h != 3 || l != 1 {
			t.Fatalf("weighted shares: heavy runs %d, light %d; want 3 and 1", h, l)
		}
	}
}

// Background callers run only on free slots, at most their share, and
// never ahead of an interactive caller; a batch slice waits behind a
// single call.
func TestSchedulerPriorities(t *testing.T) {
	s := newScheduler(2, 0, 0.5)
	p := newPool(2, 64, 64, time.Minute, 0.5)
	ctx := context.Background()
	j1, err := s.acquire(ctx, who(modelapi.BackgroundPrefix+"1"), p, false)
	if err != nil {
		t.Fatal(err)
	}
	bgWait := make(chan struct{})
	go func() {
		if _, err := s.acquire(ctx, who(modelapi.BackgroundPrefix+"1"), p, false); err == nil {
			close(bgWait)
		}
	}()
	waitQueued(t, s, p, 1) // past the background share of 1 slot
	a1, err := s.acquire(ctx, who("a"), p, false)
	if err != nil {
		t.Fatal(err)
	}
	type grant struct {
		what string
		tk   *ticket
	}
	order := make(chan grant, 2)
	go func() {
		if tk, err := s.acquire(ctx, who("a"), p, true); err == nil {
			order <- grant{"batch", tk}
		}
	}()
	waitQueued(t, s, p, 2)
	go func() {
		if tk, err := s.acquire(ctx, who("c"), p, false); err == nil {
			order <- grant{"single", tk}
		}
	}()
	waitQueued(t, s, p, 3)
	s.release(modelapi.BackgroundPrefix+"1", j1, time.Millisecond, 0)
	g := <-order
	if g.what != "single" {
		t.Fatalf("first after the job's slot came free: %s, want the single call", g.what)
	}
	s.release("c", g.tk, time.Millisecond, 0)
	if g = <-order; g.what != "batch" {
		t.Fatalf("then %s, want the batch slice", g.what)
	}
	select {
	case <-bgWait:
		t.Fatal("the job ran while interactive calls held the module")
	default:
	}
	s.release("a", g.tk, time.Millisecond, 50)
	s.release("a", a1, time.Millisecond, 0)
	select {
	case <-bgWait:
	case <-time.After(10 * time.Second):
		t.Fatal("the job's waiting call did not start on a free module")
	}
}

// A hard cap per caller holds a caller alone below the slots.
func TestSchedulerHardCap(t *testing.T) {
	s := newScheduler(4, 1, 0.5)
	p := newPool(4, 64, 64, time.Minute, 0.5)
	ctx := context.Background()
	if _, err := s.acquire(ctx, who("a"), p, false); err != nil {
		t.Fatal(err)
	}
	go s.acquire(ctx, who("a"), p, false)
	waitQueued(t, s, p, 1)
	if st := s.callerStats("a"); st.Running != 1 {
		t.Fatalf("a runs %d calls past its cap of 1", st.Running)
	}
}

// A batch takes spare run slots only while they are free, nobody waits and
// its module keeps a free instance.
func TestSchedulerSpareSlotsForABatch(t *testing.T) {
	s := newScheduler(3, 0, 0.5)
	p := newPool(3, 64, 64, time.Minute, 0.5)
	ctx := context.Background()
	first, err := s.acquire(ctx, who("a"), p, true)
	if err != nil || !first.spare {
		t.Fatalf("a batch on an idle module: %v, spare %v", err, first != nil && first.spare)
	}
	second := s.tryAcquireSpare(who("a"), p)
	if second == nil {
		t.Fatal("no spare slot for a batch on an idle server")
	}
	if x := s.tryAcquireSpare(who("a"), p); x != nil {
		t.Fatal("a spare piece took the module's last free instance")
	}
	s.release("a", second, time.Millisecond, 10)
	q := newPool(1, 64, 64, time.Minute, 0.5)
	other, err := s.acquire(ctx, who("b"), q, false)
	if err != nil {
		t.Fatal(err)
	}
	go s.acquire(ctx, who("c"), q, false) // waits for q's one instance
	waitQueued(t, s, q, 1)
	if x := s.tryAcquireSpare(who("a"), p); x != nil {
		t.Fatal("a spare piece started while a call waits")
	}
	s.release("b", other, time.Millisecond, 0)
	s.release("a", first, time.Millisecond, 10)
}
