package modulehost

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// RejectCallerRunning is the rejection reason of a call that waited too long
// for one of its caller's running slots (see Config.CallerRunning).
const RejectCallerRunning = "caller_running"

// callerCaps bounds how many calls one caller runs at once across every
// module, so that a caller's calls (say, endless loops in one module) can
// take at most that many cores from everybody else's calls in other modules.
// Each caller gets a gate of its own (one slot per allowed call), made on
// first use and dropped when the caller has nothing running or waiting.
type callerCaps struct {
	slots, queue int
	wait         time.Duration

	mu    sync.Mutex
	gates map[string]*capGate
}

type capGate struct {
	g     *gate
	users int // calls holding or waiting for this gate
}

// newCallerCaps: slots <= 0 means half the CPUs, rounded up.
func newCallerCaps(slots, queue int, wait time.Duration) *callerCaps {
	if slots <= 0 {
		slots = (runtime.GOMAXPROCS(0) + 1) / 2
	}
	return &callerCaps{slots: slots, queue: queue, wait: wait, gates: map[string]*capGate{}}
}

// acquire waits for one of caller's running slots; release gives it back.
// A call that waits longer than wait, or finds queue calls of its caller
// already waiting, is refused with a *rejection.
func (c *callerCaps) acquire(ctx context.Context, caller string, wait time.Duration) (release func(), err error) {
	c.mu.Lock()
	cg := c.gates[caller]
	if cg == nil {
		cg = &capGate{g: newGate(c.slots, c.queue, c.queue, wait)}
		c.gates[caller] = cg
	}
	cg.users++
	c.mu.Unlock()
	done := func() {
		c.mu.Lock()
		if cg.users--; cg.users == 0 {
			delete(c.gates, caller)
		}
		c.mu.Unlock()
	}
	if err := cg.g.acquire(ctx, caller); err != nil {
		done()
		if r, ok := err.(*rejection); ok {
			r.reason = RejectCallerRunning
		}
		return nil, err
	}
	start := time.Now()
	return func() { cg.g.release(caller, time.Since(start)); done() }, nil
}
