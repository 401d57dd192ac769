// Package groupcommit combines the concurrent submissions of one process
// into batches: one goroutine at a time takes everything queued (up to a
// bound) and writes it with one call, then tells each submitter the
// outcome of its own item. While one batch is in flight the next one
// fills, so batches grow with the number of submitters and nobody waits
// for a timer.
package groupcommit

import (
	"context"
	"sync"
)

// Queue batches items of type T. The zero value is not usable; set Max and
// Write (or use New).
type Queue[T any] struct {
	// Max bounds how many items one Write receives.
	Max int
	// Write handles one batch and returns each item's error (nil: every
	// item succeeded; one error per item otherwise). It runs on its own
	// goroutine, with a context that carries the first submitter's values
	// but not its cancellation, one call at a time.
	Write func(ctx context.Context, batch []T) []error

	mu      sync.Mutex
	pending []*pending[T]
	running bool
}

// pending is one submitted item; err is set and done closed once its
// batch is written.
type pending[T any] struct {
	v    T
	err  error
	done chan struct{}
}

// New is a queue of batches of at most max items written by write.
func New[T any](max int, write func(ctx context.Context, batch []T) []error) *Queue[T] {
	return &Queue[T]{Max: max, Write: write}
}

// Submit queues v and waits until the batch holding it is written,
// returning v's own error, or until ctx ends (then v may still be
// written: the caller must treat the outcome as unknown).
func (q *Queue[T]) Submit(ctx context.Context, v T) error {
	p := &pending[T]{v: v, done: make(chan struct{})}
	q.mu.Lock()
	q.pending = append(q.pending, p)
	if !q.running {
		q.running = true
		go q.drain(context.WithoutCancel(ctx))
	}
	q.mu.Unlock()
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain writes the queued items, batch after batch, until none is left.
func (q *Queue[T]) drain(ctx context.Context) {
	for {
		q.mu.Lock()
		n := min(len(q.pending), max(q.Max, 1))
		if n == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		batch := q.pending[:n:n]
		q.pending = q.pending[n:]
		q.mu.Unlock()
		items := make([]T, n)
		for i, p := range batch {
			items[i] = p.v
		}
		errs := q.Write(ctx, items)
		for i, p := range batch {
			if i < len(errs) {
				p.err = errs[i]
			}
			close(p.done)
		}
	}
}

// All is the per-item result of a batch whose items share one outcome:
// nil when err is nil, else err for each of n items.
func All(n int, err error) []error {
	if err == nil {
		return nil
	}
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}
