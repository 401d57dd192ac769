package datastore

import (
	"fmt"
	"net/http"
	"sync"

	"toxgate/catalog/ckan"
)

// callLimiter bounds the datastore_search_sql calls running at once: per
// user, and for all anonymous callers together (the plugin is not told the
// client's address, so anonymous callers cannot be told apart). A call
// over the bound is refused at once, not queued.
type callLimiter struct {
	perUser, anonymous int
	mu                 sync.Mutex
	running            map[string]int // by user id; "" is every anonymous caller
}

func newCallLimiter(perUser, anonymous int) *callLimiter {
	return &callLimiter{perUser: perUser, anonymous: anonymous, running: map[string]int{}}
}

// acquire takes a place for a call of user ("" anonymous), or returns the
// 429 error; release gives the place back.
func (l *callLimiter) acquire(user string) (release func(), err error) {
	limit := l.perUser
	if user == "" {
		limit = l.anonymous
	}
	if limit <= 0 {
		return func() {}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[user] >= limit {
		return nil, tooManyCalls(user == "", limit)
	}
	l.running[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.running[user]--; l.running[user] <= 0 {
				delete(l.running, user)
			}
		})
	}, nil
}

func tooManyCalls(anonymous bool, limit int) *ckan.Error {
	msg := fmt.Sprintf("Too many datastore_search_sql calls at once: at most %d per user (datastore.sql_calls_per_user); retry when one has finished", limit)
	if anonymous {
		msg = fmt.Sprintf("Too many anonymous datastore_search_sql calls at once: at most %d for all anonymous callers together (datastore.sql_calls_anonymous); retry later or log in", limit)
	}
	// CKAN has no error type for it: a Validation Error with status 429, as
	// the loader's queue answers
	return &ckan.Error{Status: http.StatusTooManyRequests, Type: ckan.TypeValidation, Message: msg}
}
