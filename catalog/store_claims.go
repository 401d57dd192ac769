package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// claimStale is how old a claim whose revision was never written must be
// before another writer may take the revision (its writer died between
// the claim and the write).
const claimStale = 30 * time.Second

// claimFence is how long a writer holding a claim that others take as
// stale after stale may take to write: half of it. Its write runs under
// that deadline, so that it fails rather than lands after another writer
// took the claim (the two writes would both succeed, and one be lost).
func claimFence(stale time.Duration) time.Duration { return stale / 2 }

// claimKey is the _id of the claim of revision rev of record id.
func claimKey(kind, id string, rev int64) string {
	return kind + ":" + id + "@" + strconv.FormatInt(rev, 10)
}

// replace is the optimistic write of one record: it first claims revision
// rev by inserting {_id: "<kind>:<id>@<rev>"} into catalog_claims (a unique
// _id, so exactly one writer of any process gets each revision), then
// replaces the record by its _id alone. On FerretDB's SQLite backend only a
// lone _id filter reaches SQL (and its index, see gateway/store): a filter
// of {_id, rev} would decode every document of the collection until the
// match. ok is false when another writer claimed rev first; a claim whose
// write failed is given back.
func (c recordStore) replace(ctx context.Context, coll *mongo.Collection, kind, id string, rev int64, doc any) (bool, error) {
	return c.replaceThen(ctx, coll, kind, id, rev, doc, nil)
}

// replaceThen is replace that runs before (when not nil) once the claim is
// won, just before the record is written; an error from before gives the
// claim back and fails the write. The activity hook runs there.
func (c recordStore) replaceThen(ctx context.Context, coll *mongo.Collection, kind, id string, rev int64, doc any, before func() error) (bool, error) {
	key := claimKey(kind, id, rev)
	claimed := time.Now()
	if err := c.insertClaim(ctx, key); err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return false, c.settleClaim(ctx, coll, key, id, rev)
		}
		return false, fmt.Errorf("claim %s: %w", key, err)
	}
	var r *mongo.UpdateResult
	err := error(nil)
	if before != nil {
		err = before()
	}
	if err == nil {
		wctx, cancel := context.WithDeadline(ctx, claimed.Add(claimFence(claimStale)))
		r, err = coll.ReplaceOne(wctx, bson.M{"_id": id}, doc)
		cancel()
	}
	if err == nil && r.MatchedCount == 1 {
		return true, nil
	}
	if _, derr := c.claims.DeleteOne(ctx, bson.M{"_id": key}); derr != nil {
		return false, fmt.Errorf("give back claim %s: %w (after: %v)", key, derr, err)
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", key, err)
	}
	return false, nil // the record is gone (purged)
}

// phantomTries bounds the retries of a claim insert refused as a duplicate
// while no claim of its _id exists (see insertClaim).
const phantomTries = 16

// insertClaim inserts the claim key into catalog_claims. A duplicate-key
// error means another writer holds key, with one exception it rules out:
// FerretDB numbers the rows of a capped collection <unix second> << 32 |
// <a counter of its own process>, and that number is the table's primary
// key, so two gateways whose embedded stores share one PostgreSQL database
// can number an insert alike within the same second; PostgreSQL then
// refuses it, and FerretDB reports the refusal as a duplicate _id. An
// insert refused while no claim of key exists is retried (the counter has
// moved on), so a duplicate-key error from here always means key is held.
func (c recordStore) insertClaim(ctx context.Context, key string) error {
	var err error
	for try := 0; try < phantomTries; try++ {
		if err = c.insertOne(ctx, c.claims, bson.M{"_id": key, "at": time.Now().UTC()}); err == nil || !mongo.IsDuplicateKeyError(err) {
			return err
		}
		n, cerr := c.claims.CountDocuments(ctx, bson.M{"_id": key})
		if cerr != nil {
			return fmt.Errorf("claim %s: %w (after: %v)", key, cerr, err)
		}
		if n > 0 {
			return err // held by another writer
		}
	}
	return fmt.Errorf("claim %s: refused %d times with no such claim: %w", key, phantomTries, err)
}

// settleClaim runs after losing the claim of revision rev: when the
// revision is not written yet, it waits a little for its writer, or, when
// the claim is stale, removes it so that the next attempt can take it.
func (c recordStore) settleClaim(ctx context.Context, coll *mongo.Collection, key, id string, rev int64) error {
	var cur struct {
		Rev int64 `bson:"rev"`
	}
	err := coll.FindOne(ctx, bson.M{"_id": id}).Decode(&cur)
	if errors.Is(err, mongo.ErrNoDocuments) || (err == nil && cur.Rev >= rev) {
		return nil // written (or purged): the caller reads it again
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", id, err)
	}
	var cl struct {
		At time.Time `bson:"at"`
	}
	err = c.claims.FindOne(ctx, bson.M{"_id": key}).Decode(&cl)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil // given back meanwhile
	}
	if err != nil {
		return fmt.Errorf("read claim %s: %w", key, err)
	}
	if time.Since(cl.At) > claimStale {
		if _, err := c.claims.DeleteOne(ctx, bson.M{"_id": key}); err != nil {
			return fmt.Errorf("drop stale claim %s: %w", key, err)
		}
		return nil
	}
	select { // its writer is between the claim and the write
	case <-time.After(20 * time.Millisecond):
	case <-ctx.Done():
	}
	return nil
}

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
	if err := c.insertClaim(ctx, genesisClaim); err != nil && !isDup(err) {
		return fmt.Errorf("create %s: %w", CollClaims, err)
	}
	return nil
}

// note records in the claims that record id of kind was created or purged
// (writes that replace a record claim their revision instead).
func (c recordStore) note(ctx context.Context, kind, id string) error {
	key := kind + ":" + id + "@n" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := c.insertClaim(ctx, key); err != nil && !isDup(err) {
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

// claimsOrderSlack is how far out of time order claims may be inserted
// (a claim waits in a group's queue, at most groupTimeout, before its
// insert): changesSince reads the claims newest first and stops that far
// past since.
const claimsOrderSlack = time.Minute

// changesSince lists the records claimed at or after since, for a process
// that was current at current (since is current less claimMargin). It
// reads the claims newest first (the capped collection's natural order,
// reversed; the embedded store pushes that order down to SQL), so its cost
// follows the claims made since, not all those kept. complete is false
// when the claims do not reach back that far: the oldest is younger than
// since, unless it is the genesis claim made before current (then no claim
// has been dropped, and none is missing).
func (c recordStore) changesSince(ctx context.Context, since, current time.Time) (refs []changeRef, complete bool, err error) {
	type claim struct {
		ID string    `bson:"_id"`
		At time.Time `bson:"at"`
	}
	cur, err := c.claims.Find(ctx, bson.M{}, options.Find().SetSort(bson.D{{Key: "$natural", Value: -1}}).SetBatchSize(512))
	if err != nil {
		return nil, false, fmt.Errorf("read claims: %w", err)
	}
	defer func() { _ = cur.Close(ctx) }()
	var (
		oldest claim
		seen   bool
	)
	for cur.Next(ctx) {
		var cl claim
		if err := cur.Decode(&cl); err != nil {
			return nil, false, fmt.Errorf("read claims: %w", err)
		}
		if cl.At.Before(since.Add(-claimsOrderSlack)) {
			return refs, true, nil // every claim at or after since is read
		}
		oldest, seen = cl, true
		if cl.At.Before(since) {
			continue
		}
		kind, rest, ok := strings.Cut(cl.ID, ":")
		at := strings.LastIndexByte(rest, '@')
		if !ok || at < 0 {
			continue
		}
		rev, _ := strconv.ParseInt(rest[at+1:], 10, 64) // 0 for notes
		refs = append(refs, changeRef{kind: kind, id: rest[:at], rev: rev})
	}
	if err := cur.Err(); err != nil {
		return nil, false, fmt.Errorf("read claims: %w", err)
	}
	// every claim kept was read: complete when the oldest reaches back
	if !seen || (oldest.At.After(since) && (oldest.ID != genesisClaim || oldest.At.After(current))) {
		return nil, false, nil
	}
	return refs, true, nil
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

// decide settles, once across processes, how the thing named key ends:
// the first writer to insert the claim key with its outcome to wins (an
// insert with a unique _id is the store's one atomic step, see
// insertClaim). won reports whether the caller's claim is the one; the
// winning outcome and when it was claimed are reported either way.
func (c recordStore) decide(ctx context.Context, key, to string) (won bool, winner string, at time.Time, err error) {
	for try := 0; try < phantomTries; try++ {
		at = time.Now().UTC()
		err = c.insertOne(ctx, c.claims, bson.M{"_id": key, "at": at, "to": to})
		if err == nil {
			return true, to, at, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return false, "", time.Time{}, fmt.Errorf("claim %s: %w", key, err)
		}
		var held struct {
			At time.Time `bson:"at"`
			To string    `bson:"to"`
		}
		ferr := c.claims.FindOne(ctx, bson.M{"_id": key}).Decode(&held)
		if ferr == nil {
			return false, held.To, held.At, nil
		}
		if !errors.Is(ferr, mongo.ErrNoDocuments) {
			return false, "", time.Time{}, fmt.Errorf("claim %s: %w (after: %v)", key, ferr, err)
		}
		// refused with no such claim: PostgreSQL's phantom duplicate
		// (see insertClaim); the next try is numbered anew
	}
	return false, "", time.Time{}, fmt.Errorf("claim %s: refused %d times with no such claim: %w", key, phantomTries, err)
}
