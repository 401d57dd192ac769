package modulehost

import (
	"toxgate/gateway/modulehost/modelapi"

	"context"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Reasons a call is refused before it runs (the reason label of
// toxgate_model_rejected_total).
const (
	RejectQueueFull       = "queue_full"        // the module's wait queue is full
	RejectCallerQueueFull = "caller_queue_full" // the caller already has its share of the queue waiting
	RejectWaitTimeout     = "wait_timeout"      // no instance came free for the caller in time
	// RejectCallerRunning: the call waited too long while its caller ran
	// as many calls as Config.CallerRunning allows.
	RejectCallerRunning = "caller_running"
)

// Caller is who a model call is made for: the key of its fair share (a
// user, a client address, a scoring job: see CallerKey) and the weight of
// that share (1 when zero).
type Caller struct {
	Key    string
	Weight float64
}

// scheduler admits model calls to the host's run slots and to each
// module's instances, fairly between the callers that contend and without
// holding back a caller alone (work-conserving):
//
//   - a call runs at once if its module has a free instance and either a
//     run slot is free or its caller runs fewer calls than its fair share
//     (slots × weight / the weights of every active caller, rounded up);
//   - otherwise it waits in its caller's FIFO; whenever a call ends, the
//     waiting calls that may run are started in order of: interactive before
//     background, single calls before batch slices, fewest running calls per
//     unit of weight, least recently served;
//   - background callers (scoring jobs) have no share: they run on free
//     slots, at most BackgroundShare of them, and one background call at a
//     time always may run.
//
// A caller alone therefore uses every slot and every instance; a second
// caller that arrives runs its first call at once (a run slot may be
// briefly oversubscribed: calls are not preempted, the Go scheduler shares
// the cores between them), and from then on each freed slot goes to the
// caller furthest below its share. The README tells the whole design.
type scheduler struct {
	slots   int // run slots: calls running at once when nobody is below its share
	hardCap int // most calls one caller runs at once (0: none)
	bgCap   int // most calls background callers run at once, host-wide
	mu      sync.Mutex
	running int // calls running
	bgRun   int // of which background
	// activeWeight is the sum of the weights of the interactive callers
	// with a call running or waiting.
	activeWeight float64
	seq          uint64 // grants so far; orders callers by when they were last served
	callers      map[string]*schedCaller
}

// pool is the admission state of one module's instances.
type pool struct {
	slots, maxQueue, maxPerCaller int
	maxWait                       time.Duration
	bgCap                         int

	// Fields below are guarded by the scheduler's mu.
	running, bgRunning, queued int
	// avgRun is a moving average of how long an instance is held
	// (seconds), for Retry-After; perItem one of the seconds per item of
	// a batch piece, to size the pieces of a batch run on an idle module.
	avgRun, perItem float64
}

type schedCaller struct {
	key        string
	weight     float64
	bg         bool
	running    int
	waiting    []*ticket
	queuedIn   map[*pool]int // waiting calls per module
	lastServed uint64
}

// ticket is one call waiting for, or holding, an instance and a run slot.
type ticket struct {
	pool    *pool
	batch   bool
	ready   chan struct{}
	granted bool
	// spare is set at grant: after it the module still had a free
	// instance and nobody waiting for one.
	spare bool
}

// rejection is a call refused by the scheduler.
type rejection struct {
	reason     string
	retryAfter time.Duration
}

func (r *rejection) Error() string { return "model call refused: " + r.reason }

// newScheduler: slots <= 0 means one per CPU (GOMAXPROCS); hardCap <= 0
// means no cap per caller; bgShare is the fraction of the slots background
// callers may hold (at least one).
func newScheduler(slots, hardCap int, bgShare float64) *scheduler {
	if slots <= 0 {
		slots = runtime.GOMAXPROCS(0)
	}
	return &scheduler{slots: slots, hardCap: max(0, hardCap), bgCap: max(1, int(math.Round(float64(slots)*bgShare))),
		callers: map[string]*schedCaller{}}
}

func newPool(slots, maxQueue, maxPerCaller int, maxWait time.Duration, bgShare float64) *pool {
	slots = max(1, slots)
	return &pool{slots: slots, maxQueue: maxQueue, maxPerCaller: max(1, maxPerCaller), maxWait: maxWait,
		bgCap: max(1, int(float64(slots)*bgShare))}
}

// callerLocked returns the state of caller c, creating it.
func (s *scheduler) callerLocked(c Caller) *schedCaller {
	w := c.Weight
	if w <= 0 {
		w = 1
	}
	sc := s.callers[c.Key]
	if sc == nil {
		sc = &schedCaller{key: c.Key, weight: w, bg: strings.HasPrefix(c.Key, modelapi.BackgroundPrefix), queuedIn: map[*pool]int{}}
		s.callers[c.Key] = sc
		if !sc.bg {
			s.activeWeight += w
		}
	} else if sc.weight != w && !sc.bg {
		s.activeWeight += w - sc.weight
		sc.weight = w
	}
	return sc
}

// forgetLocked drops the state of a caller with nothing running or waiting.
func (s *scheduler) forgetLocked(sc *schedCaller) {
	if sc.running == 0 && len(sc.waiting) == 0 {
		delete(s.callers, sc.key)
		if !sc.bg {
			s.activeWeight -= sc.weight
			if len(s.callers) == 0 {
				s.activeWeight = 0 // no drift from float sums
			}
		}
	}
}

// share is how many calls sc may run while every slot is taken.
func (s *scheduler) share(sc *schedCaller) int {
	if s.activeWeight <= 0 {
		return s.slots
	}
	return max(1, int(math.Ceil(float64(s.slots)*sc.weight/s.activeWeight-1e-9)))
}

// mayRunLocked reports whether sc's call on p may start now.
func (s *scheduler) mayRunLocked(sc *schedCaller, p *pool) bool {
	if p.running >= p.slots || s.hardCap > 0 && sc.running >= s.hardCap {
		return false
	}
	if sc.bg {
		// Background work runs on free slots, and one background call at
		// a time always may: jobs progress beside a busy caller.
		return p.bgRunning < p.bgCap && s.bgRun < s.bgCap && (s.running < s.slots || s.bgRun == 0)
	}
	return s.running < s.slots || sc.running < s.share(sc)
}

func (s *scheduler) grantLocked(sc *schedCaller, t *ticket) {
	p := t.pool
	s.running++
	p.running++
	sc.running++
	if sc.bg {
		s.bgRun++
		p.bgRunning++
	}
	s.seq++
	sc.lastServed = s.seq
	t.granted = true
	t.spare = p.running < p.slots && p.queued == 0
}

// acquire waits until caller may run a call on p; batch marks a slice of a
// batch request (it yields to single calls). On success the caller must
// call release. It fails with a *rejection, or with ctx's error when ctx
// ends first.
func (s *scheduler) acquire(ctx context.Context, caller Caller, p *pool, batch bool) (*ticket, error) {
	s.mu.Lock()
	sc := s.callerLocked(caller)
	t := &ticket{pool: p, batch: batch}
	if s.mayRunLocked(sc, p) {
		s.grantLocked(sc, t)
		s.mu.Unlock()
		return t, nil
	}
	// The bounds of the queue; a caller with nothing running or waiting on
	// this module always gets a place, so that a full queue refuses those
	// who filled it, not a newcomer.
	if !sc.bg {
		switch {
		case sc.queuedIn[p] >= p.maxPerCaller:
			return nil, s.rejectLocked(sc, p, RejectCallerQueueFull)
		case p.queued >= p.maxQueue && (sc.queuedIn[p] > 0 || sc.running > 0):
			return nil, s.rejectLocked(sc, p, RejectQueueFull)
		}
	}
	t.ready = make(chan struct{})
	sc.waiting = append(sc.waiting, t)
	sc.queuedIn[p]++
	p.queued++
	s.mu.Unlock()

	var expired <-chan time.Time
	if !sc.bg {
		timer := time.NewTimer(p.maxWait)
		defer timer.Stop()
		expired = timer.C
	}
	var err error
	select {
	case <-t.ready:
		return t, nil
	case <-expired:
		err = &rejection{reason: RejectWaitTimeout}
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	if t.granted { // granted while giving up: pass the slot on
		s.mu.Unlock()
		s.release(caller.Key, t, 0, 0)
		return nil, err
	}
	s.unqueueLocked(sc, t)
	if r, ok := err.(*rejection); ok {
		if s.hardCap > 0 && sc.running >= s.hardCap {
			r.reason = RejectCallerRunning
		}
		r.retryAfter = p.retryAfter()
	}
	s.forgetLocked(sc)
	// A caller that leaves raises the others' shares.
	s.dispatchLocked()
	s.mu.Unlock()
	return nil, err
}

func (s *scheduler) unqueueLocked(sc *schedCaller, t *ticket) {
	for i, x := range sc.waiting {
		if x == t {
			sc.waiting = append(sc.waiting[:i], sc.waiting[i+1:]...)
			break
		}
	}
	if sc.queuedIn[t.pool]--; sc.queuedIn[t.pool] <= 0 {
		delete(sc.queuedIn, t.pool)
	}
	t.pool.queued--
}

func (s *scheduler) rejectLocked(sc *schedCaller, p *pool, reason string) error {
	r := &rejection{reason: reason, retryAfter: p.retryAfter()}
	s.forgetLocked(sc)
	s.mu.Unlock()
	return r
}

// tryAcquireSpare grants caller a batch piece on p at once if a run slot
// is free (not by the share's oversubscription), nobody waits anywhere, and
// p keeps a free instance after it; nil otherwise. A caller alone thus
// spreads its batch over the idle cores.
func (s *scheduler) tryAcquireSpare(caller Caller, p *pool) *ticket {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.callerLocked(caller)
	if sc.bg || s.running >= s.slots || p.running+1 >= p.slots || s.hardCap > 0 && sc.running >= s.hardCap || s.anyWaitingLocked() {
		s.forgetLocked(sc)
		return nil
	}
	t := &ticket{pool: p, batch: true}
	s.grantLocked(sc, t)
	return t
}

func (s *scheduler) anyWaitingLocked() bool {
	for _, sc := range s.callers {
		if len(sc.waiting) > 0 {
			return true
		}
	}
	return false
}

// release ends caller's call that held t for held; items is the number of
// batch items it evaluated (0 for a single call), for sizing later pieces.
func (s *scheduler) release(caller string, t *ticket, held time.Duration, items int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := t.pool
	if held > 0 {
		const alpha = 0.2
		p.avgRun = ewma(p.avgRun, held.Seconds(), alpha)
		if items > 0 {
			p.perItem = ewma(p.perItem, held.Seconds()/float64(items), alpha)
		}
	}
	sc := s.callers[caller]
	s.running--
	p.running--
	sc.running--
	if sc.bg {
		s.bgRun--
		p.bgRunning--
	}
	s.forgetLocked(sc)
	s.dispatchLocked()
}

func ewma(avg, x, alpha float64) float64 {
	if avg == 0 {
		return x
	}
	return avg + alpha*(x-avg)
}

// dispatchLocked starts every waiting call that may run, best first.
func (s *scheduler) dispatchLocked() {
	for {
		var best *ticket
		var bestC *schedCaller
		for _, sc := range s.callers {
			if len(sc.waiting) == 0 {
				continue
			}
			var t *ticket
			for _, x := range sc.waiting {
				if s.mayRunLocked(sc, x.pool) {
					t = x
					break
				}
			}
			if t != nil && (best == nil || before(sc, t, bestC, best)) {
				best, bestC = t, sc
			}
		}
		if best == nil {
			return
		}
		s.unqueueLocked(bestC, best)
		s.grantLocked(bestC, best)
		close(best.ready)
	}
}

// before orders two callers' next calls: interactive before background,
// single calls before batch slices, fewer running calls per unit of weight,
// then the one served least recently.
func before(a *schedCaller, ta *ticket, b *schedCaller, tb *ticket) bool {
	if a.bg != b.bg {
		return !a.bg
	}
	if ta.batch != tb.batch {
		return !ta.batch
	}
	la, lb := float64(a.running)/a.weight, float64(b.running)/b.weight
	if la != lb {
		return la < lb
	}
	return a.lastServed < b.lastServed
}

// retryAfter estimates when an instance of p may be had: the calls
// waiting ahead, shared over its instances, at the average time a call
// holds one (at least 1 s). Callers hold the scheduler's mu.
func (p *pool) retryAfter() time.Duration {
	est := p.avgRun * float64(p.queued+1) / float64(p.slots)
	return time.Duration(max(1, math.Ceil(est))) * time.Second
}

// perItem is the moving average of seconds per batch item on p (0: none yet).
func (s *scheduler) perItem(p *pool) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return p.perItem
}

// schedStats are counters of the scheduler, or of one module, at one moment.
type schedStats struct{ Running, Queued, Callers int }

func (s *scheduler) stats() schedStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := 0
	for _, sc := range s.callers {
		q += len(sc.waiting)
	}
	return schedStats{Running: s.running, Queued: q, Callers: len(s.callers)}
}

// callerStats returns what one caller runs and has waiting.
func (s *scheduler) callerStats(key string) schedStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.callers[key]
	if sc == nil {
		return schedStats{}
	}
	return schedStats{Running: sc.running, Queued: len(sc.waiting), Callers: 1}
}

func (s *scheduler) poolStats(p *pool) schedStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sc := range s.callers {
		if sc.queuedIn[p] > 0 {
			n++
		}
	}
	return schedStats{Running: p.running, Queued: p.queued, Callers: n}
}
