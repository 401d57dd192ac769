package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"toxgate/plugins/contract"
)

// fetched is the stored state of the records catch-up reads.
type fetched struct {
	ds              []*Dataset
	os              []*Organization
	goneDS, goneOrg []string
	vs              []*Vocabulary
	goneVocab       []string
}

// fetch reads the records refs name (each once) by _id, a few at a time.
func (s *Service) fetch(ctx context.Context, refs []changeRef) (fetched, error) {
	var (
		out  fetched
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	seen := map[string]bool{}
	work := make(chan changeRef)
	for w := 0; w < fetchWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				var err error
				switch r.kind {
				case kindDataset:
					var d *Dataset
					if d, err = s.c.findDataset(ctx, r.id); err == nil {
						mu.Lock()
						if d == nil {
							out.goneDS = append(out.goneDS, r.id)
						} else {
							out.ds = append(out.ds, d)
						}
						mu.Unlock()
					}
				case kindVocab:
					var v *Vocabulary
					if v, err = s.c.findVocab(ctx, r.id); err == nil {
						mu.Lock()
						if v == nil {
							out.goneVocab = append(out.goneVocab, r.id)
						} else {
							out.vs = append(out.vs, v)
						}
						mu.Unlock()
					}
				case kindOrg:
					var o *Organization
					if o, err = s.c.findOrg(ctx, r.id); err == nil {
						mu.Lock()
						if o == nil {
							out.goneOrg = append(out.goneOrg, r.id)
						} else {
							out.os = append(out.os, o)
						}
						mu.Unlock()
					}
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, r := range refs {
		if seen[r.kind+r.id] {
			continue
		}
		seen[r.kind+r.id] = true
		select {
		case work <- r:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		return out, errs[0]
	}
	return out, ctx.Err()
}

// apply puts fetched records into the in-memory catalog and notes that it
// is current up to seq, as read from a marker read that started at readAt.
func (s *Service) apply(f fetched, seq int64, readAt time.Time) {
	s.st.applyFetched(f, seq, readAt)
}

// catchUp brings a process further behind than the change marker lists up
// to seq (read from a marker read that started at readAt): it re-reads the
// records claimed since it was last current, except those it holds at the
// claimed revision already. When the claims do not reach back that far, it
// reloads everything.
func (s *Service) catchUp(ctx context.Context, seq int64, readAt time.Time) error {
	start := time.Now()
	_, current := s.st.appliedMarker()
	refs, complete, err := s.c.changesSince(ctx, current.Add(-claimMargin), current)
	if err != nil {
		return err
	}
	if !complete {
		s.log.Info("catalog: the claims do not reach back to the last known state; reloading", "since", current)
		return s.reloadAll(ctx, seq, readAt)
	}
	need := s.st.notHeld(refs)
	f, err := s.fetch(ctx, need)
	if err != nil {
		return err
	}
	s.apply(f, seq, readAt)
	s.log.Info("catalog caught up from claims", "claims", len(refs), "read", len(need), "seq", seq, "took", time.Since(start))
	return nil
}

// syncer batches freshness checks: every request waits for one check of the
// change marker that started after it arrived; requests arriving while a
// check runs share the next one. A request whose arrival the gateway
// stamped (Request.Arrived) is also served by a check that started after
// that instant: the one running when the request reaches the plugin, or
// the last one done.
type syncer struct {
	mu      sync.Mutex
	waiting []chan error
	running bool
	// current are the requests served by the check running now, which
	// started at currentStart (contract.Monotonic; 0: none runs).
	current      []chan error
	currentStart int64
	// doneStart is when the last check that succeeded started: the
	// catalog holds every change committed before that instant.
	doneStart int64
}

// Sync brings the in-memory catalog up to date with every change committed
// to the store before the call, by whichever process. Actions call it
// first, so a dataset created or changed anywhere is found by the very next
// request.
func (s *Service) Sync(ctx context.Context) error { return s.SyncSince(ctx, 0) }

// SyncSince is Sync for a request that arrived at arrived (on the
// machine's monotonic clock, contract.Monotonic; 0: unknown, as Sync): it
// brings the catalog up to date with every change committed to the store
// before that instant, sharing a check of the change marker that started
// after it when there is one.
func (s *Service) SyncSince(ctx context.Context, arrived int64) error {
	s.sy.mu.Lock()
	if arrived > 0 && s.sy.doneStart >= arrived {
		s.sy.mu.Unlock()
		return nil
	}
	ch := make(chan error, 1)
	if arrived > 0 && s.sy.currentStart >= arrived {
		s.sy.current = append(s.sy.current, ch)
	} else {
		s.sy.waiting = append(s.sy.waiting, ch)
		if !s.sy.running {
			s.sy.running = true
			go s.syncLoop()
		}
	}
	s.sy.mu.Unlock()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return fmt.Errorf("catalog sync: %w", ctx.Err())
	}
}

func (s *Service) syncLoop() {
	for {
		s.sy.mu.Lock()
		if len(s.sy.waiting) == 0 {
			s.sy.running = false
			s.sy.mu.Unlock()
			return
		}
		// the check starts after every request in the batch arrived
		start := contract.Monotonic()
		s.sy.current, s.sy.waiting = s.sy.waiting, nil
		s.sy.currentStart = start
		s.sy.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := s.pull(ctx)
		cancel()
		s.sy.mu.Lock()
		batch := s.sy.current
		s.sy.current, s.sy.currentStart = nil, 0
		if err == nil && start > s.sy.doneStart {
			s.sy.doneStart = start
		}
		s.sy.mu.Unlock()
		for _, ch := range batch {
			ch <- err
		}
	}
}

// pull applies the changes recorded in the marker since the last pull.
func (s *Service) pull(ctx context.Context) error {
	readAt := time.Now()
	seq, ok, err := s.c.readSeq(ctx)
	if err != nil {
		return err
	}
	applied, _ := s.st.appliedMarker()
	if ok && seq == applied {
		return nil
	}
	m, err := s.c.readMarker(ctx)
	if err != nil {
		return err
	}
	if !ok {
		// a store written before the sequence document existed: make it,
		// so that later checks read only that
		if err := s.c.raiseSeq(ctx, m.Seq); err != nil {
			return err
		}
	}
	if m.Seq == applied {
		return nil
	}
	oldest := m.Seq - int64(len(m.Recent)) + 1
	if m.Seq < applied || (len(m.Recent) > 0 && m.Recent[len(m.Recent)-1].Seq != m.Seq) {
		s.log.Info("catalog: the change marker went back or is malformed; reloading", "marker_seq", m.Seq, "applied", applied)
		return s.reloadAll(ctx, m.Seq, readAt)
	}
	if applied+1 < oldest {
		return s.catchUp(ctx, m.Seq, readAt)
	}
	pending := m.Recent[len(m.Recent)-int(m.Seq-applied):]
	refs := make([]changeRef, 0, len(pending))
	for _, e := range pending {
		refs = append(refs, changeRef{kind: e.Kind, id: e.ID})
	}
	f, err := s.fetch(ctx, refs)
	if err != nil {
		return err
	}
	s.apply(f, m.Seq, readAt)
	return nil
}

// loadBatch is how many datasets one read of a full load returns: small
// batches keep the store's work (and its memory) in small steps, so that
// the requests it serves meanwhile wait less behind it.
const loadBatch = 256

// reloadAll rebuilds the in-memory catalog from the store; seq is the marker
// value read before loading, by a read that started at readAt.
func (s *Service) reloadAll(ctx context.Context, seq int64, readAt time.Time) error {
	return s.load(ctx, seq, readAt, false)
}

// load is reloadAll; gentle pauses after each batch of datasets for as
// long as the batch took (see Options.GentleLoad).
func (s *Service) load(ctx context.Context, seq int64, readAt time.Time, gentle bool) error {
	start := time.Now()
	fresh := newReadModel()
	fresh.deferIndex = true
	if err := s.loadContext(ctx, fresh); err != nil {
		return err
	}
	cur, err := s.c.allDatasets(ctx, loadBatch)
	if err != nil {
		return err
	}
	defer func() { _ = cur.Close(ctx) }()
	batchStart := time.Now()
	for n := 1; cur.Next(ctx); n++ {
		if gentle && n%loadBatch == 0 {
			took := time.Since(batchStart)
			select {
			case <-time.After(took):
			case <-ctx.Done():
				return fmt.Errorf("load datasets: %w", ctx.Err())
			}
			batchStart = time.Now()
		}
		d := new(Dataset)
		if err := cur.Decode(d); err != nil {
			return fmt.Errorf("decode dataset: %w", err)
		}
		fresh.putDataset(d)
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("load datasets: %w", err)
	}
	fresh.deferIndex = false
	// the index snapshot may have been written (by a running process)
	// after seq was read: it is checked against the marker as it is now
	idxSeq := seq
	if m, err := s.c.readMarker(ctx); err == nil && m.Seq > seq {
		idxSeq = m.Seq
	}
	s.indexLoaded(fresh, idxSeq)
	fresh.applied = seq
	s.st.replaceWith(fresh, seq, readAt)
	s.log.Info("catalog loaded", "datasets", len(fresh.datasets), "organizations", len(fresh.orgs), "seq", seq, "took", time.Since(start), "gentle", gentle)
	return nil
}

// loadContext reads the organizations, groups and vocabularies into
// fresh, a read model being loaded.
func (s *Service) loadContext(ctx context.Context, fresh *readModel) error {
	orgs, err := s.c.allOrgs(ctx)
	if err != nil {
		return err
	}
	for _, o := range orgs {
		fresh.putOrg(o)
	}
	return s.c.loadVocabs(ctx, fresh)
}

// indexLoaded builds the index of fresh, just loaded at marker seq: from
// the index snapshot (Options.IndexSnapshot) when it is usable, else from
// every dataset.
func (s *Service) indexLoaded(fresh *readModel, seq int64) {
	if path := s.opts.IndexSnapshot; path != "" {
		start := time.Now()
		n, err := fresh.restoreIndex(path, seq)
		if err == nil {
			s.log.Info("catalog index restored from its snapshot", "path", path, "reindexed", n, "took", time.Since(start))
			s.snapCurrent.Store(n <= snapshotStaleness(len(fresh.datasets)))
			return
		}
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("catalog index snapshot not used; indexing every dataset", "path", path, "err", err)
		}
	}
	fresh.indexAll()
}

// snapshotStaleness is how many documents a start may index again on top
// of its index snapshot before the snapshot is written again: 1% of the
// datasets, at least 100.
func snapshotStaleness(datasets int) int { return max(100, datasets/100) }

// firstSnapshot writes the index snapshot once the catalog is loaded,
// before it serves (writing holds the index, which then blocks nobody; a
// hot reload's old process serves meanwhile), unless the snapshot the load
// started from needed at most snapshotStaleness documents indexed again.
// It reports the marker number the snapshot on disk reflects (-1: none
// written).
func (s *Service) firstSnapshot() int64 {
	path := s.opts.IndexSnapshot
	defer close(s.snapFirst)
	removeStaleTemps(path, s.log)
	if s.snapCurrent.Load() {
		applied, _ := s.st.appliedMarker()
		s.log.Info("catalog index snapshot current enough; not written again", "path", path)
		return applied
	}
	return s.snapshotIfChanged(-1)
}

// snapshotIfChanged writes the index snapshot when the catalog changed
// since written (the marker number of the last one) and reports the
// marker number of the snapshot on disk.
func (s *Service) snapshotIfChanged(written int64) int64 {
	path := s.opts.IndexSnapshot
	applied, _ := s.st.appliedMarker()
	if applied == written {
		return written
	}
	start := time.Now()
	if err := s.st.writeSnapshot(path); err != nil {
		s.log.Warn("catalog index snapshot not written", "path", path, "err", err)
		return written
	}
	s.log.Info("catalog index snapshot written", "path", path, "seq", applied, "took", time.Since(start))
	return applied
}

// keepSnapshots writes the index snapshot every Options.IndexSnapshotEvery
// while the catalog changed (none when 0), until ctx ends; written is the
// marker number of the snapshot on disk.
func (s *Service) keepSnapshots(ctx context.Context, written int64) {
	every := s.opts.IndexSnapshotEvery
	if every <= 0 {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		written = s.snapshotIfChanged(written)
	}
}
