package identity

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// ThrottledError is the answer to a login attempt that must wait; it
// matches ErrThrottled with errors.Is.
type ThrottledError struct {
	// RetryAfter is how long until the next attempt may be made.
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("%s (retry in %s)", ErrThrottled, e.RetryAfter.Round(time.Second))
}

// Is makes errors.Is(err, ErrThrottled) hold.
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

// RetryAfter is how long a throttled login must wait (0 for other errors).
func RetryAfter(err error) time.Duration {
	var te *ThrottledError
	if errors.As(err, &te) {
		return te.RetryAfter
	}
	return 0
}

// SourceKey is the part of a client address the login throttle counts by:
// an IPv4 address, or the /64 network of an IPv6 address (one host commonly
// holds a whole /64). An address that does not parse counts as itself.
func SourceKey(addr string) string {
	ip := net.ParseIP(addr)
	if ip == nil {
		return addr
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// pairThrottle slows down password guessing per (account, source address):
// the first free attempts go through at once, then each further attempt
// waits delay, 2×delay, 4×delay... up to maxDelay after the one before. An
// attempt is counted when it starts (so parallel attempts cannot exceed
// the budget) and a successful login forgets the pair. It lives in memory,
// bounded to size pairs (the least recently used are forgotten first), and
// forgets a pair idle for longer than idle.
type pairThrottle struct {
	free            int
	delay, maxDelay time.Duration
	idle            time.Duration

	mu    sync.Mutex
	pairs *simplelru.LRU[string, *pairState]
}

type pairState struct {
	attempts int       // attempts since the last success
	last     time.Time // when the last one started
	next     time.Time // the earliest start of the next one
}

func newPairThrottle(free int, delay, maxDelay, idle time.Duration, size int) *pairThrottle {
	if size <= 0 {
		size = 1
	}
	lru, _ := simplelru.NewLRU[string, *pairState](size, nil) // size > 0: no error
	return &pairThrottle{free: free, delay: delay, maxDelay: maxDelay, idle: idle, pairs: lru}
}

// begin counts an attempt of key at t, or answers how long it must wait.
func (p *pairThrottle) begin(key string, t time.Time) (wait time.Duration) {
	if p.free <= 0 {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pairs.Get(key)
	if !ok || (!t.Before(st.next) && t.Sub(st.last) > p.idle) {
		st = &pairState{}
		p.pairs.Add(key, st)
	}
	if t.Before(st.next) {
		return st.next.Sub(t)
	}
	st.attempts++
	st.last = t
	if over := st.attempts - p.free; over >= 0 {
		st.next = t.Add(p.backoff(over))
	}
	return 0
}

// backoff is the wait after the over-th attempt past the free ones:
// delay << over, capped at maxDelay.
func (p *pairThrottle) backoff(over int) time.Duration {
	d := p.delay
	for i := 0; i < over && d < p.maxDelay; i++ {
		d *= 2
	}
	return min(d, p.maxDelay)
}

// succeeded forgets key after a successful login.
func (p *pairThrottle) succeeded(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pairs.Remove(key)
}

// len is the number of pairs remembered.
func (p *pairThrottle) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pairs.Len()
}
