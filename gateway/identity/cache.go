package identity

import (
	"errors"
	"sync"
	"time"
)

// credCache remembers the outcome of a credential check for a short time
// (auth.token_cache_ttl), including failures, so that a busy client costs
// one store lookup per TTL instead of one per request. Concurrent misses for
// the same key wait for one lookup.
//
// A generation counter, raised by purge, keeps a change made on this
// gateway final: a lookup that was in flight when purge ran may have read
// the record before the change, so its answer is neither cached nor
// returned; its callers look the key up again.
type credCache struct {
	ttl time.Duration

	mu       sync.RWMutex
	gen      uint64 // raised by purge
	entries  map[string]cacheEntry
	inflight map[string]*flight
}

type cacheEntry struct {
	caller  Caller
	ok      bool
	expires *time.Time // the credential's own expiry, checked on every hit
	until   time.Time  // when this entry must be looked up again
}

type flight struct {
	done  chan struct{}
	gen   uint64 // the cache generation when the lookup started
	e     cacheEntry
	err   error
	stale bool // a purge ran during the lookup: its answer is not used
}

// maxCacheEntries bounds the cache; it is emptied when full.
const maxCacheEntries = 100000

// maxStaleRetries bounds how often one check looks a key up again because
// purges keep overtaking its lookups.
const maxStaleRetries = 16

// errCredentialChanging: purges overtook every lookup of one check.
var errCredentialChanging = errors.New("credential cache: purged during every lookup")

func newCredCache(ttl time.Duration) *credCache {
	return &credCache{ttl: ttl, entries: map[string]cacheEntry{}, inflight: map[string]*flight{}}
}

// get returns the entry for key, calling load on a miss. Store errors are
// not cached. The answer comes from a lookup that started after the last
// purge that finished before get was called.
func (c *credCache) get(key string, t time.Time, load func() (cacheEntry, error)) (cacheEntry, error) {
	if c.ttl > 0 {
		c.mu.RLock()
		e, ok := c.entries[key]
		c.mu.RUnlock()
		if ok && t.Before(e.until) {
			return e, nil
		}
	}
	for try := 0; try < maxStaleRetries; try++ {
		f := c.lookup(key, load)
		if !f.stale {
			return f.e, f.err
		}
	}
	return cacheEntry{}, errCredentialChanging
}

// lookup joins the lookup in flight for key, or starts one, and waits for it.
func (c *credCache) lookup(key string, load func() (cacheEntry, error)) *flight {
	c.mu.Lock()
	if f, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		<-f.done
		return f
	}
	f := &flight{done: make(chan struct{}), gen: c.gen}
	c.inflight[key] = f
	c.mu.Unlock()

	f.e, f.err = load()
	f.e.until = time.Now().Add(c.ttl)

	c.mu.Lock()
	if c.inflight[key] == f {
		delete(c.inflight, key)
	}
	f.stale = f.gen != c.gen
	if f.err == nil && !f.stale && c.ttl > 0 {
		if len(c.entries) >= maxCacheEntries {
			c.entries = map[string]cacheEntry{}
		}
		c.entries[key] = f.e
	}
	c.mu.Unlock()
	close(f.done)
	return f
}

// purge forgets every entry and disowns the lookups in flight: a check
// that starts after purge returns never sees an answer read before it.
func (c *credCache) purge() {
	c.mu.Lock()
	c.gen++
	c.entries = map[string]cacheEntry{}
	c.inflight = map[string]*flight{}
	c.mu.Unlock()
}
