package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The claims collection (catalog_claims) is capped (on MongoDB it keeps at
// most claimsCapDocs claims; the embedded store does not trim it, so
// pruneClaims does) and the claims made in the last claimKeep serve as
// the list of recent changes for a process too far behind for the change
// marker (see catchUp).
const (
	claimsCapDocs  = 20000
	claimsCapBytes = 16 << 20
	// claimMargin is how long before its record is written (and the marker
	// raised) a write's claim may be made; catchUp reads claims from that
	// far back.
	claimMargin = time.Minute
	// fetchWorkers is how many records catch-up reads at once.
	fetchWorkers = 4
	// claimKeep is how long claims are kept; a process behind by more
	// reloads everything. The embedded store does not trim capped
	// collections by itself, so writers delete older claims every
	// pruneEvery writes (see pruneClaims).
	claimKeep  = 3 * time.Minute
	pruneEvery = 1024
)

// genesisClaim marks when the claims collection was made: a process whose
// last known state is older than the oldest claim cannot catch up from
// the claims (they were dropped, or written before they existed).
const genesisClaim = "genesis"

// ensureClaims makes the capped claims collection (idempotent).
func (c recordStore) ensureClaims(ctx context.Context) error {
	err := c.claims.Database().CreateCollection(ctx, CollClaims,
		options.CreateCollection().SetCapped(true).SetSizeInBytes(claimsCapBytes).SetMaxDocuments(claimsCapDocs))
	var ce mongo.CommandError
	if errors.As(err, &ce) && ce.Code == 48 { // NamespaceExists
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", CollClaims, err)
	}
	if _, err := c.claims.InsertOne(ctx, bson.M{"_id": genesisClaim, "at": time.Now().UTC()}); err != nil && !isDup(err) {
		return fmt.Errorf("create %s: %w", CollClaims, err)
	}
	return nil
}

// note records in the claims that record id of kind was created or purged
// (writes that replace a record claim their revision instead).
func (c recordStore) note(ctx context.Context, kind, id string) error {
	key := kind + ":" + id + "@n" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := c.claims.InsertOne(ctx, bson.M{"_id": key, "at": time.Now().UTC()}); err != nil && !isDup(err) {
		return fmt.Errorf("note change of %s: %w", id, err)
	}
	return nil
}

// changeRef is one record named by a claim: rev is the claimed revision,
// 0 for a creation or purge.
type changeRef struct {
	kind, id string
	rev      int64
}

// changesSince lists the records claimed at or after since, for a process
// that was current at current (since is current less claimMargin).
// complete is false when the claims do not reach back that far: the oldest
// is younger than since, unless it is the genesis claim made before current
// (then no claim has been dropped, and none is missing).
func (c recordStore) changesSince(ctx context.Context, since, current time.Time) (refs []changeRef, complete bool, err error) {
	type claim struct {
		ID string    `bson:"_id"`
		At time.Time `bson:"at"`
	}
	var oldest claim
	err = c.claims.FindOne(ctx, bson.M{}).Decode(&oldest) // capped: the oldest first
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read claims: %w", err)
	}
	if oldest.At.After(since) && (oldest.ID != genesisClaim || oldest.At.After(current)) {
		return nil, false, nil
	}
	cur, err := c.claims.Find(ctx, bson.M{"at": bson.M{"$gte": since}})
	if err != nil {
		return nil, false, fmt.Errorf("read claims: %w", err)
	}
	var claims []claim
	if err := cur.All(ctx, &claims); err != nil {
		return nil, false, fmt.Errorf("read claims: %w", err)
	}
	for _, cl := range claims {
		kind, rest, ok := strings.Cut(cl.ID, ":")
		at := strings.LastIndexByte(rest, '@')
		if !ok || at < 0 {
			continue
		}
		rev, _ := strconv.ParseInt(rest[at+1:], 10, 64) // 0 for notes
		refs = append(refs, changeRef{kind: kind, id: rest[:at], rev: rev})
	}
	return refs, true, nil
}

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
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	for _, o := range f.os {
		s.st.putOrg(o)
	}
	for _, id := range f.goneOrg {
		s.st.removeOrg(id)
	}
	for _, v := range f.vs {
		s.st.putVocab(v)
	}
	for _, id := range f.goneVocab {
		s.st.removeVocab(id)
	}
	for _, d := range f.ds {
		s.st.putDataset(d)
	}
	for _, id := range f.goneDS {
		s.st.removeDataset(id)
	}
	if seq > s.st.applied {
		s.st.applied = seq
		s.st.appliedAt = readAt
	}
}

// catchUp brings a process further behind than the change marker lists up
// to seq (read from a marker read that started at readAt): it re-reads the
// records claimed since it was last current, except those it holds at the
// claimed revision already. When the claims do not reach back that far, it
// reloads everything.
func (s *Service) catchUp(ctx context.Context, seq int64, readAt time.Time) error {
	start := time.Now()
	s.st.mu.RLock()
	current := s.st.appliedAt
	s.st.mu.RUnlock()
	refs, complete, err := s.c.changesSince(ctx, current.Add(-claimMargin), current)
	if err != nil {
		return err
	}
	if !complete {
		s.log.Info("catalog: the claims do not reach back to the last known state; reloading", "since", current)
		return s.reloadAll(ctx, seq, readAt)
	}
	s.st.mu.RLock()
	need := refs[:0]
	for _, r := range refs {
		switch {
		case r.rev > 0 && r.kind == kindDataset && s.st.datasets[r.id] != nil && s.st.datasets[r.id].Rev >= r.rev:
		case r.rev > 0 && r.kind == kindOrg && s.st.anyGroup(r.id) != nil && s.st.anyGroup(r.id).Rev >= r.rev:
		case r.rev > 0 && r.kind == kindVocab && s.st.vocabs[r.id] != nil && s.st.vocabs[r.id].Rev >= r.rev:
		default:
			need = append(need, r)
		}
	}
	s.st.mu.RUnlock()
	f, err := s.fetch(ctx, need)
	if err != nil {
		return err
	}
	s.apply(f, seq, readAt)
	s.log.Info("catalog caught up from claims", "claims", len(refs), "read", len(need), "seq", seq, "took", time.Since(start))
	return nil
}

// pruneClaims deletes, in the background, the claims older than claimKeep
// once every pruneEvery writes of this process (one at a time).
func (s *Service) pruneClaims() {
	if s.writes.Add(1)%pruneEvery != 0 || !s.pruning.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.pruning.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cut := time.Now().UTC().Add(-claimKeep)
		if _, err := s.c.claims.DeleteMany(ctx, bson.M{"at": bson.M{"$lt": cut}}); err != nil {
			s.log.Warn("catalog: old claims not deleted", "err", err)
		}
	}()
}
