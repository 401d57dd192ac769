package modulehost

import (
	"context"
	"math"
	"strings"
	"sync"
	"time"

	"toxgate/gateway/modulehost/modelapi"
	"toxgate/gateway/modulehost/wasmrt"
)

// Reasons a call is refused before it runs (the reason label of
// toxgate_model_rejected_total).
const (
	RejectQueueFull       = "queue_full"        // the module's wait queue is full
	RejectCallerQueueFull = "caller_queue_full" // the caller already has its share of the queue waiting
	RejectWaitTimeout     = "wait_timeout"      // no instance came free for the caller in time
)

// gate admits the calls of one module to its instances fairly between
// callers. At most slots calls run at once. A call that finds every slot
// taken waits in its caller's FIFO; a slot that comes free goes to the
// waiting caller with the fewest calls running (ties: the one served least
// recently), so each caller holding calls converges to an equal share of the
// pool, and a caller alone may use all of it. The queue is bounded per module
// and per caller; past the bounds, or after waiting maxWait, a call is refused.
//
// Background callers (names starting with BackgroundPrefix: scoring jobs) have
// low priority: a free slot goes to an interactive caller first, they hold at
// most bgCap slots at once, and they wait without the queue's bounds or
// maxWait (their number is bounded by the job workers).
type gate struct {
	slots, maxQueue, maxPerCaller int
	maxWait                       time.Duration
	bgCap                         int
	bgRunning                     int

	mu      sync.Mutex
	running int
	queued  int
	seq     uint64 // grants so far; orders callers by when they were last served
	callers map[string]*callerState
	// avgRun is a moving average of how long a slot is held (seconds), for Retry-After.
	avgRun float64
}

type callerState struct {
	bg         bool
	running    int
	waiting    []*waiter
	lastServed uint64
}

type waiter struct {
	ready   chan struct{}
	granted bool
}

// rejection is a call refused by the gate.
type rejection struct {
	reason     string
	retryAfter time.Duration
}

func (r *rejection) Error() string { return "model call refused: " + r.reason }

func newGate(slots, maxQueue, maxPerCaller int, maxWait time.Duration) *gate {
	return &gate{slots: max(1, slots), maxQueue: maxQueue, maxPerCaller: max(1, maxPerCaller),
		maxWait: maxWait, bgCap: max(1, slots), callers: map[string]*callerState{}}
}

// acquire waits for a slot for caller. On success the caller must call
// release with the time it held the slot. It fails with a *rejection, or with
// ctx's error when ctx ends first.
func (g *gate) acquire(ctx context.Context, caller string) error {
	g.mu.Lock()
	c := g.callers[caller]
	if c == nil {
		c = &callerState{bg: strings.HasPrefix(caller, modelapi.BackgroundPrefix)}
		g.callers[caller] = c
	}
	// Whenever a slot is free, whoever still waits is a background caller
	// held by bgCap (release hands free slots out at once).
	if g.running < g.slots && (!c.bg || g.bgRunning < g.bgCap && g.queued == 0) {
		g.grantLocked(c)
		g.mu.Unlock()
		return nil
	}
	switch {
	case c.bg:
	case len(c.waiting) >= g.maxPerCaller:
		return g.rejectLocked(caller, c, RejectCallerQueueFull)
	case g.queued >= g.maxQueue:
		return g.rejectLocked(caller, c, RejectQueueFull)
	}
	w := &waiter{ready: make(chan struct{})}
	c.waiting = append(c.waiting, w)
	g.queued++
	g.mu.Unlock()

	var expired <-chan time.Time
	if !c.bg {
		timer := time.NewTimer(g.maxWait)
		defer timer.Stop()
		expired = timer.C
	}
	var err error
	select {
	case <-w.ready:
		return nil
	case <-expired:
		err = &rejection{reason: RejectWaitTimeout}
	case <-ctx.Done():
		err = ctx.Err()
	}
	g.mu.Lock()
	if w.granted { // granted while giving up: pass the slot on
		g.mu.Unlock()
		g.release(caller, 0)
		return err
	}
	for i, x := range c.waiting {
		if x == w {
			c.waiting = append(c.waiting[:i], c.waiting[i+1:]...)
			break
		}
	}
	g.queued--
	if r, ok := err.(*rejection); ok {
		r.retryAfter = g.retryAfterLocked()
	}
	g.forgetLocked(caller, c)
	g.mu.Unlock()
	return err
}

func (g *gate) rejectLocked(caller string, c *callerState, reason string) error {
	r := &rejection{reason: reason, retryAfter: g.retryAfterLocked()}
	g.forgetLocked(caller, c)
	g.mu.Unlock()
	return r
}

// release gives back caller's slot; held is how long the call ran.
func (g *gate) release(caller string, held time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if held > 0 {
		const alpha = 0.2
		if g.avgRun == 0 {
			g.avgRun = held.Seconds()
		} else {
			g.avgRun += alpha * (held.Seconds() - g.avgRun)
		}
	}
	c := g.callers[caller]
	g.running--
	c.running--
	if c.bg {
		g.bgRunning--
	}
	g.forgetLocked(caller, c)
	for g.running < g.slots && g.queued > 0 {
		var next *callerState
		for _, x := range g.callers {
			if len(x.waiting) == 0 || x.bg && g.bgRunning >= g.bgCap {
				continue
			}
			if next == nil || next.bg && !x.bg ||
				next.bg == x.bg && (x.running < next.running || x.running == next.running && x.lastServed < next.lastServed) {
				next = x
			}
		}
		if next == nil {
			break // only background callers wait, at their cap
		}
		w := next.waiting[0]
		next.waiting = next.waiting[1:]
		g.queued--
		w.granted = true
		g.grantLocked(next)
		close(w.ready)
	}
}

func (g *gate) grantLocked(c *callerState) {
	if c.bg {
		g.bgRunning++
	}
	g.running++
	c.running++
	g.seq++
	c.lastServed = g.seq
}

// forgetLocked drops the state of a caller with nothing running or waiting.
func (g *gate) forgetLocked(caller string, c *callerState) {
	if c.running == 0 && len(c.waiting) == 0 {
		delete(g.callers, caller)
	}
}

// retryAfterLocked estimates when a slot may be had: the calls waiting ahead,
// shared over the slots, at the average time a call holds one (at least 1 s).
func (g *gate) retryAfterLocked() time.Duration {
	est := g.avgRun * float64(g.queued+1) / float64(g.slots)
	return time.Duration(max(1, math.Ceil(est))) * time.Second
}

// gateStats are a gate's counters at one moment.
type gateStats struct{ Running, Queued, Callers int }

func (g *gate) stats() gateStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return gateStats{Running: g.running, Queued: g.queued, Callers: len(g.callers)}
}

// newGate makes the gate of a module: one slot per instance of its pool.
func (h *Host) newGate(mod *wasmrt.Module) *gate {
	l := mod.Limits()
	wait := h.cfg.QueueTimeout
	if wait == 0 {
		wait = time.Duration(l.TimeoutMS) * time.Millisecond
	}
	g := newGate(l.PoolSize, h.cfg.QueueSize, h.cfg.CallerQueue, wait)
	g.bgCap = max(1, int(float64(g.slots)*h.cfg.BackgroundShare))
	return g
}
