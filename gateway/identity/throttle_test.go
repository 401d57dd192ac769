package identity

import (
	"errors"
	"testing"
	"time"
)

// The pair throttle lets the free attempts through, then doubles the wait
// up to its cap; other pairs are not affected, a success or a long idle
// time forgets the pair, and it keeps no more than its size.
func TestPairThrottleBacksOffPerPair(t *testing.T) {
	p := newPairThrottle(3, time.Second, 8*time.Second, 15*time.Minute, 2)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		if w := p.begin("a 1.2.3.4", t0); w != 0 {
			t.Fatalf("free attempt %d waits %s", i+1, w)
		}
	}
	if w := p.begin("a 1.2.3.4", t0); w != time.Second {
		t.Fatalf("attempt after the free ones: wait %s, want 1s", w)
	}
	if w := p.begin("a 5.6.7.8", t0); w != 0 {
		t.Fatalf("the same account from another address waits %s", w)
	}
	at := t0
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		at = at.Add(p.backoffWait("a 1.2.3.4", at))
		if w := p.begin("a 1.2.3.4", at.Add(-time.Millisecond)); w != time.Millisecond {
			t.Fatalf("just before the wait ends: %s", w)
		}
		if w := p.begin("a 1.2.3.4", at); w != 0 {
			t.Fatalf("when the wait of %s ends: still %s", want, w)
		}
		if got := p.backoffWait("a 1.2.3.4", at); got != min(2*want, 8*time.Second) {
			t.Fatalf("after a wait of %s the next is %s", want, got)
		}
	}
	p.succeeded("a 1.2.3.4")
	if w := p.begin("a 1.2.3.4", at); w != 0 {
		t.Fatalf("after a success: wait %s", w)
	}
	if w := p.begin("a 5.6.7.8", t0.Add(16*time.Minute)); w != 0 {
		t.Fatalf("after an idle time: wait %s", w)
	}
	p.begin("b 1.2.3.4", t0)
	p.begin("c 1.2.3.4", t0)
	if n := p.len(); n != 2 {
		t.Fatalf("remembers %d pairs, want at most 2", n)
	}
}

// backoffWait is how long key must wait at t (test helper).
func (p *pairThrottle) backoffWait(key string, t time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.pairs.Peek(key); ok && t.Before(st.next) {
		return st.next.Sub(t)
	}
	return 0
}

func TestSourceKeyAndThrottledError(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.2":            "127.0.0.2",
		"::ffff:10.0.0.1":      "10.0.0.1",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"not an address":       "not an address",
		"2001:db8:1:3::1":      "2001:db8:1:3::/64",
	} {
		if got := SourceKey(addr); got != want {
			t.Errorf("SourceKey(%q) = %q, want %q", addr, got, want)
		}
	}
	var err error = &ThrottledError{RetryAfter: 3 * time.Second}
	if !errors.Is(err, ErrThrottled) || RetryAfter(err) != 3*time.Second || RetryAfter(ErrBadLogin) != 0 {
		t.Fatalf("ThrottledError: %v", err)
	}
}
