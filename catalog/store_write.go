package catalog

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"toxgate/catalog/ckan"
)

// The write path of the store: one mutate, one insert and one purge for
// every kind of record (datasets, organizations and groups, vocabularies).
// Each takes this process's lock of the record (lockFor), writes the store
// with the claim protocol (store_claims.go), applies the result to the
// read model and raises the change marker. Actions write records only
// through these.

// maxAttempts bounds the optimistic-concurrency retries of one write.
const maxAttempts = 8

// writeWait is how long one write keeps retrying after maxAttempts while
// other writers hold the record's revisions: writers of other processes
// (other gateways, or the DataStore loader marking a resource) are not
// queued by this process's lock, and on a busy machine one of them may
// stay between its claim and its write for longer than maxAttempts
// short waits (settleClaim) last.
const writeWait = 10 * time.Second

// errConflict is returned when a dataset kept changing under a write.
var errConflict = ckan.ValidationMessage("The dataset was changed by another request at the same time; please retry")

// storedRecord is a record the write path stores: *Dataset,
// *Organization (organizations and groups) or *Vocabulary.
type storedRecord interface {
	comparable
	recordKey() (id string, rev int64)
	setRecordKey(id string, rev int64)
}

func (d *Dataset) recordKey() (string, int64)        { return d.ID, d.Rev }
func (d *Dataset) setRecordKey(id string, rev int64) { d.ID, d.Rev = id, rev }

func (o *Organization) recordKey() (string, int64)        { return o.ID, o.Rev }
func (o *Organization) setRecordKey(id string, rev int64) { o.ID, o.Rev = id, rev }

func (v *Vocabulary) recordKey() (string, int64)        { return v.ID, v.Rev }
func (v *Vocabulary) setRecordKey(id string, rev int64) { v.ID, v.Rev = id, rev }

// recordKind is what the write path needs to know of one kind of record.
// Hooks left nil do nothing.
type recordKind[R storedRecord] struct {
	// code names the kind in claims and in the change marker.
	code string
	// coll is the kind's collection.
	coll *mongo.Collection
	// cached is the read model's copy (zero when absent), find the
	// store's.
	cached func(id string) R
	find   func(ctx context.Context, id string) (R, error)
	// put and remove apply a committed write to the read model.
	put    func(R)
	remove func(id string)
	// activity records the activity of writing next over base (zero: a
	// creation), after the claim is won and before the record is written.
	activity func(ctx context.Context, base, next R) error
	// purged records the purge of base before its record is deleted.
	purged func(ctx context.Context, base R) error
	// beforeWrite runs before the claim (a dataset frees its new name).
	beforeWrite func(ctx context.Context, base, next R) error
	// afterWrite runs once a write is committed: base is zero for a
	// creation, next for a purge (a dataset frees the files it dropped).
	afterWrite func(ctx context.Context, base, next R)
	// notFound is the error for a record that does not exist.
	notFound func(id string) error
	// taken is the error for a duplicate key on insert (created) or
	// replace.
	taken func(ctx context.Context, next R, created bool) error
	// conflict is the error when the record kept changing.
	conflict error
}

// mutate applies change to the freshest copy of record id and writes the
// result as the next revision, only if no other writer took that revision
// first (each revision is claimed once, see recordStore.replace). When
// another writer came first it reads again and re-applies change, so no
// update is lost.
func mutate[R storedRecord](ctx context.Context, s *Service, k *recordKind[R], id string, change func(base R) (R, error)) (R, error) {
	var zero R
	// The wait counts from the write's arrival, not from when it got the
	// record's lock: writers queued behind one that waits out another
	// process's claim do not each wait writeWait again.
	give := time.Now().Add(writeWait)
	defer s.lockFor(id)()
	// The read model is current (requests sync first and this process's
	// writes to id are serialized); after a lost race, read the store.
	base := k.cached(id)
	for attempt := 0; attempt < maxAttempts || time.Now().Before(give); attempt++ {
		if attempt > 0 || base == zero {
			var err error
			if base, err = k.find(ctx, id); err != nil {
				return zero, err
			}
		}
		if base == zero {
			return zero, k.notFound(id)
		}
		next, err := change(base)
		if err != nil {
			return zero, err
		}
		baseID, baseRev := base.recordKey()
		next.setRecordKey(baseID, baseRev+1)
		if k.beforeWrite != nil {
			if err := k.beforeWrite(ctx, base, next); err != nil {
				return zero, err
			}
		}
		var hook func() error
		if k.activity != nil {
			hook = func() error { return k.activity(ctx, base, next) }
		}
		ok, err := s.c.replaceThen(ctx, k.coll, k.code, baseID, baseRev+1, next, hook)
		if mongo.IsDuplicateKeyError(err) {
			return zero, k.taken(ctx, next, false)
		}
		if err != nil {
			return zero, err
		}
		if ok {
			err := commit(ctx, s, k, next)
			if k.afterWrite != nil {
				k.afterWrite(ctx, base, next)
			}
			return next, err
		}
		s.log.Debug("record changed concurrently, retrying", "kind", k.code, "id", id, "attempt", attempt+1)
	}
	return zero, k.conflict
}

// insert stores a new record as revision 1.
func insert[R storedRecord](ctx context.Context, s *Service, k *recordKind[R], r R) error {
	var zero R
	id, _ := r.recordKey()
	r.setRecordKey(id, 1)
	if k.beforeWrite != nil {
		if err := k.beforeWrite(ctx, zero, r); err != nil {
			return err
		}
	}
	// the note of the creation and the activity go to the store together
	// (each in its own group, see store_group.go), both before the
	// record: a note of a creation that then fails only makes a reader
	// far behind look the id up
	noted := make(chan error, 1)
	go func() { noted <- s.c.note(ctx, k.code, id) }()
	var err error
	if k.activity != nil {
		err = k.activity(ctx, zero, r)
	}
	if nerr := <-noted; err == nil {
		err = nerr
	}
	if err != nil {
		return err
	}
	if err := s.c.insertOne(ctx, k.coll, r); err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return k.taken(ctx, r, true)
		}
		return fmt.Errorf("insert %s %s: %w", k.coll.Name(), id, err)
	}
	return commit(ctx, s, k, r)
}

// purge deletes record id for good, under the same lock as every other
// write of the record, so that no write in flight puts it back into the
// read model. A record the read model does not hold is deleted from the
// store all the same, without its purge mark.
func purge[R storedRecord](ctx context.Context, s *Service, k *recordKind[R], id string) error {
	var zero R
	defer s.lockFor(id)()
	base := k.cached(id)
	if base != zero && k.purged != nil {
		if err := k.purged(ctx, base); err != nil {
			return err
		}
	}
	if _, err := k.coll.DeleteOne(ctx, bson.M{"_id": id}); err != nil {
		return fmt.Errorf("purge %s %s: %w", k.coll.Name(), id, err)
	}
	if err := s.c.note(ctx, k.code, id); err != nil {
		return err
	}
	if k.afterWrite != nil && base != zero {
		defer k.afterWrite(ctx, base, zero)
	}
	k.remove(id)
	return s.record(ctx, k.code, id)
}

// commit applies a write to the read model and records it in the change
// marker.
func commit[R storedRecord](ctx context.Context, s *Service, k *recordKind[R], r R) error {
	k.put(r)
	id, _ := r.recordKey()
	return s.record(ctx, k.code, id)
}
func isDup(err error) bool { return mongo.IsDuplicateKeyError(err) }

// record raises the change marker for a change already written to the
// store and applied to the in-memory catalog, and returns once the marker
// (and its sequence document) say so. Concurrent callers share one raise:
// the changes queued while one is being written are recorded together by
// the next, as one compare-and-set that raises the number by their count.
func (s *Service) record(ctx context.Context, kind, id string) error {
	if err := s.marks.Submit(ctx, changeEntry{Kind: kind, ID: id}); err != nil {
		return fmt.Errorf("record change of %s: %w", id, err)
	}
	return nil
}

// recordAll raises the marker once for changes (at most markerKeep), their
// numbers following the marker's in order. When no other process wrote in
// between, this process's catalog is known to be current up to the new
// sequence number and needs no reload. Only the marks queue calls it, one
// call at a time.
func (s *Service) recordAll(ctx context.Context, changes []changeEntry) error {
	// longer than a dead writer's claim of the next number blocks it
	give := time.Now().Add(markerClaimStale + 10*time.Second)
	for attempt := 0; attempt < 50 || time.Now().Before(give); attempt++ {
		// the marker this process wrote last is still the stored one
		// unless another process wrote since: then the CAS fails and the
		// next attempt reads it
		m := s.lastMarker
		if attempt > 0 || m == nil {
			read, err := s.c.readMarker(ctx)
			if err != nil {
				return err
			}
			m = &read
		}
		recent := make([]changeEntry, 0, len(m.Recent)+len(changes))
		recent = append(recent, m.Recent...)
		for i, e := range changes {
			recent = append(recent, changeEntry{Seq: m.Seq + 1 + int64(i), Kind: e.Kind, ID: e.ID})
		}
		if len(recent) > markerKeep {
			recent = recent[len(recent)-markerKeep:]
		}
		next := marker{Seq: m.Seq + int64(len(changes)), Recent: recent}
		ok, err := s.c.casMarker(ctx, *m, next)
		s.lastMarker = nil
		if err != nil {
			return err
		}
		if ok {
			s.lastMarker = &next
			s.st.advance(m.Seq, next.Seq)
			for range changes {
				s.pruneClaims()
			}
			// readers check this small document first; it is raised
			// before the write returns, so the next request sees it
			return s.c.raiseSeq(ctx, next.Seq)
		}
	}
	return fmt.Errorf("record changes: the change marker kept moving")
}

// lockFor serializes this process's writes to one record (the embedded
// store does not apply a filtered update atomically, so the revision check
// alone protects only against other processes on a real MongoDB). The
// returned function releases it.
func (s *Service) lockFor(id string) func() {
	s.lockMu.Lock()
	l := s.locks[id]
	if l == nil {
		l = &keyLock{}
		s.locks[id] = l
	}
	l.refs++
	s.lockMu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.lockMu.Lock()
		if l.refs--; l.refs == 0 {
			delete(s.locks, id)
		}
		s.lockMu.Unlock()
	}
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}
