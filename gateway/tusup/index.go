package tusup

import (
	"sync"
	"time"
)

// entry is what the gateway knows of one upload: enough to authorize a
// request and to apply the per-caller limits without reading the store.
type entry struct {
	owner    string
	size     int64
	created  time.Time
	finished bool
	claimed  bool // being attached to a resource
}

// expires is when the upload is removed, finished or not.
func (e entry) expires(ttl time.Duration) time.Time { return e.created.Add(ttl) }

// index holds the entries of every upload in the store, rebuilt from the
// store's upload records at start.
type index struct {
	mu sync.Mutex
	m  map[string]entry
}

func newIndex() *index { return &index{m: map[string]entry{}} }

func (x *index) get(id string) (entry, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, ok := x.m[id]
	return e, ok
}

func (x *index) put(id string, e entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.m[id] = e
}

func (x *index) remove(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.m, id)
}

func (x *index) finish(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e, ok := x.m[id]; ok {
		e.finished = true
		x.m[id] = e
	}
}

// claim marks a known upload as being attached; false when it is already.
func (x *index) claim(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, ok := x.m[id]
	if !ok || e.claimed {
		return false
	}
	e.claimed = true
	x.m[id] = e
	return true
}

// unclaim ends an attachment that did not consume the upload.
func (x *index) unclaim(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e, ok := x.m[id]; ok {
		e.claimed = false
		x.m[id] = e
	}
}

// reserve adds e under id if its owner stays within maxCount unfinished
// uploads and maxBytes declared bytes of unfinished uploads; it reports
// which limit refused it ("" when added).
func (x *index) reserve(id string, e entry, maxCount int, maxBytes int64) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	n, bytes := 0, int64(0)
	for _, o := range x.m {
		if o.owner == e.owner && !o.finished {
			n++
			bytes += o.size
		}
	}
	switch {
	case maxCount > 0 && n+1 > maxCount:
		return "count"
	case maxBytes > 0 && bytes+e.size > maxBytes:
		return "bytes"
	}
	x.m[id] = e
	return ""
}

// expired lists the ids whose uploads expired by now.
func (x *index) expired(now time.Time, ttl time.Duration) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var ids []string
	for id, e := range x.m {
		if !e.claimed && !now.Before(e.expires(ttl)) {
			ids = append(ids, id)
		}
	}
	return ids
}
