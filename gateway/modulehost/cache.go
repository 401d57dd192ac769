package modulehost

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/prometheus/client_golang/prometheus"
)

// The response cache keeps recent answers of the models: an answer depends
// only on the module's bytes and the input, so it is keyed by the module's
// SHA-256, the route and the canonical input (canonicalJSON), bounded in
// bytes, least recently used first out. Batch routes keep one entry per
// item (see cachedBatch).

// cacheEntryOverhead is what an entry costs beside its answer: its key,
// the module's SHA-256 and the list element (an estimate, counted so that
// many small answers respect the bound too).
const cacheEntryOverhead = 160

// cacheKey is the SHA-256 of what an answer depends on.
type cacheKey [sha256.Size]byte

type cacheValue struct {
	module string // SHA-256 of the module that computed it
	answer []byte
}

// respCache is a least-recently-used map bounded in bytes.
type respCache struct {
	mu       sync.Mutex
	lru      *simplelru.LRU[cacheKey, cacheValue]
	size     int64 // bytes held (answers + cacheEntryOverhead each)
	maxBytes int64
	// maxEntry is the largest answer kept (an eighth of the bound): one
	// answer never empties the cache.
	maxEntry int

	evictions prometheus.Counter
	bytes     prometheus.Gauge
}

func newRespCache(maxBytes int64, m *metrics) *respCache {
	c := &respCache{maxBytes: maxBytes, maxEntry: int(min(maxBytes/8, math.MaxInt32)),
		evictions: m.cacheEvictions, bytes: m.cacheBytes}
	// The LRU's own bound is a count; the bytes are bounded in add.
	c.lru, _ = simplelru.NewLRU[cacheKey, cacheValue](math.MaxInt32, func(_ cacheKey, v cacheValue) {
		c.size -= int64(len(v.answer) + cacheEntryOverhead)
	})
	return c
}

// get returns the answer kept for k.
func (c *respCache) get(k cacheKey) ([]byte, bool) {
	c.mu.Lock()
	v, ok := c.lru.Get(k)
	c.mu.Unlock()
	return v.answer, ok
}

// add keeps answer for k, computed by module, evicting the least recently
// used answers beyond the bound. answer must not be modified afterwards.
func (c *respCache) add(k cacheKey, module string, answer []byte) {
	if len(answer) > c.maxEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.lru.Peek(k); ok {
		c.size -= int64(len(old.answer) + cacheEntryOverhead)
		c.size += int64(len(answer) + cacheEntryOverhead)
		c.lru.Add(k, cacheValue{module: module, answer: answer})
	} else {
		c.size += int64(len(answer) + cacheEntryOverhead)
		c.lru.Add(k, cacheValue{module: module, answer: answer})
	}
	for c.size > c.maxBytes {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			break
		}
		c.evictions.Inc()
	}
	c.bytes.Set(float64(c.size))
}

// dropModule removes every answer computed by the module of SHA-256 sha.
func (c *respCache) dropModule(sha string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.lru.Keys() {
		if v, ok := c.lru.Peek(k); ok && v.module == sha {
			c.lru.Remove(k)
		}
	}
	c.bytes.Set(float64(c.size))
}

// keyer hashes the parts of a cache key, each with its length, so that no
// two lists of parts make the same key.
type keyer struct{ h hash.Hash }

func newKeyer(module, path, kind string) keyer {
	k := keyer{h: sha256.New()}
	k.part([]byte(module))
	k.part([]byte(path))
	k.part([]byte(kind))
	return k
}

func (k keyer) part(b []byte) keyer {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	k.h.Write(n[:])
	k.h.Write(b)
	return k
}

func (k keyer) sum() (out cacheKey) {
	k.h.Sum(out[:0])
	return out
}
