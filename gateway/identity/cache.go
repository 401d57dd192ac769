package identity

import (
	"sync"
	"time"
)

// credCache remembers the outcome of a credential check for a short time
// (auth.token_cache_ttl), including failures, so that a busy client costs
// one store lookup per TTL instead of one per request. Concurrent misses for
// the same key wait for one lookup.
type credCache struct {
	ttl time.Duration

	mu       sync.RWMutex
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
	done chan struct{}
	e    cacheEntry
	err  error
}

// maxCacheEntries bounds the cache; it is emptied when full.
const maxCacheEntries = 100000

func newCredCache(ttl time.Duration) *credCache {
	return &credCache{ttl: ttl, entries: map[string]cacheEntry{}, inflight: map[string]*flight{}}
}

// get returns the entry for key, calling load on a miss. Store errors are
// not cached.
func (c *credCache) get(key string, t time.Time, load func() (cacheEntry, error)) (cacheEntry, error) {
	if c.ttl > 0 {
		c.mu.RLock()
		e, ok := c.entries[key]
		c.mu.RUnlock()
		if ok && t.Before(e.until) {
			return e, nil
		}
	}
	c.mu.Lock()
	if f, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		<-f.done
		return f.e, f.err
	}
	f := &flight{done: make(chan struct{})}
	c.inflight[key] = f
	c.mu.Unlock()

	f.e, f.err = load()
	f.e.until = time.Now().Add(c.ttl)

	c.mu.Lock()
	delete(c.inflight, key)
	if f.err == nil && c.ttl > 0 {
		if len(c.entries) >= maxCacheEntries {
			c.entries = map[string]cacheEntry{}
		}
		c.entries[key] = f.e
	}
	c.mu.Unlock()
	close(f.done)
	return f.e, f.err
}

// purge forgets every entry.
func (c *credCache) purge() {
	c.mu.Lock()
	c.entries = map[string]cacheEntry{}
	c.mu.Unlock()
}
