package catalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"toxgate/plugins/contract"
)

// Collection names in the toxgate database.
const (
	CollDatasets      = "datasets"
	CollOrganizations = "organizations"
	CollChanges       = "catalog_marker"
	CollChangeSeq     = "catalog_marker_seq"
	CollClaims        = "catalog_claims"
	// CollVocabularies holds the tag vocabularies with their tags.
	CollVocabularies = "vocabularies"
	// CollMeta holds the catalog's identity (recordStore.storeID).
	CollMeta = "catalog_meta"
)

// change kinds in the change marker.
const (
	kindDataset = "d"
	kindOrg     = "o" // organizations and groups
	kindVocab   = "v"
	kindMarker  = "m" // claims of marker numbers only
	// kindVersionEnd names the claims that settle how a pending dataset
	// version ends (decideVersion).
	kindVersionEnd = "ve"
)

// markerID is the _id of the one change marker document, alone in its
// collection so that reading it costs one row on any store.
const markerID = "catalog"

// markerKeep is how many recent changes the marker lists; a reader further
// behind reloads everything.
const markerKeep = 16

// changeEntry is one recorded change.
type changeEntry struct {
	Seq  int64  `bson:"seq"`
	Kind string `bson:"k"`
	ID   string `bson:"id"`
}

// marker is the change marker: a sequence number raised by every write and
// the most recent changes.
type marker struct {
	Seq    int64         `bson:"seq"`
	Recent []changeEntry `bson:"recent"`
}

type recordStore struct {
	datasets, orgs, changes, changeSeq, claims *mongo.Collection
	vocabs                                     *mongo.Collection
	// meta holds the store's identity (storeID).
	meta *mongo.Collection
	// activity and activityDataColl are the activity stream (activity.go).
	activity, activityDataColl *mongo.Collection
	// users is the gateway's user directory (nil: no users are known).
	users contract.Users
	// groups shares store round trips among concurrent inserts
	// (store_group.go); nil: each insert is its own.
	groups *storeGroups
}

func newRecordStore(db *mongo.Database, users contract.Users) recordStore {
	return recordStore{
		users:     users,
		datasets:  db.Collection(CollDatasets),
		orgs:      db.Collection(CollOrganizations),
		changes:   db.Collection(CollChanges),
		changeSeq: db.Collection(CollChangeSeq),
		claims:    db.Collection(CollClaims),
		vocabs:    db.Collection(CollVocabularies),
		meta:      db.Collection(CollMeta),

		activity:         db.Collection(CollActivity),
		activityDataColl: db.Collection(CollActivityData),
	}
}

// ensureIndexes makes the unique name indexes (idempotent).
func (c recordStore) ensureIndexes(ctx context.Context) error {
	unique := options.Index().SetUnique(true)
	if _, err := c.datasets.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}, Options: unique}); err != nil {
		return fmt.Errorf("create index datasets.name: %w", err)
	}
	if _, err := c.orgs.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}, Options: unique}); err != nil {
		return fmt.Errorf("create index organizations.name: %w", err)
	}
	if _, err := c.vocabs.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}, Options: unique}); err != nil {
		return fmt.Errorf("create index vocabularies.name: %w", err)
	}
	return nil
}

// readMarker reads the change marker (zero when none).
func (c recordStore) readMarker(ctx context.Context) (marker, error) {
	var m marker
	err := c.changes.FindOne(ctx, bson.M{"_id": markerID}).Decode(&m)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return marker{}, nil
	}
	if err != nil {
		return marker{}, fmt.Errorf("read change marker: %w", err)
	}
	return m, nil
}

// readSeq reads the marker's sequence number from its own small document
// (the check before each action; the marker with its recent changes is
// read only when the number moved). ok is false when there is no such
// document yet: then only the marker tells.
func (c recordStore) readSeq(ctx context.Context) (seq int64, ok bool, err error) {
	var m struct {
		Seq int64 `bson:"seq"`
	}
	err = c.changeSeq.FindOne(ctx, bson.M{"_id": markerID}).Decode(&m)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read change sequence: %w", err)
	}
	return m.Seq, true, nil
}

// raiseSeq raises the small sequence document to at least seq (it never
// goes down, whatever order writers finish in). FerretDB applies $max as a
// read, a change in Go and a write: two processes raising it at once can
// both read n, and the one writing n+1 last undoes the other's n+2, after
// which readers at n+1 would not see the change. So each writer, after its
// write, reads the marker (written before any raise) and raises the
// document again while it is below the marker: the last writer's check
// sees the final state.
func (c recordStore) raiseSeq(ctx context.Context, seq int64) error {
	for try := 0; try < maxAttempts; try++ {
		if err := c.maxSeq(ctx, seq); err != nil {
			return err
		}
		stored, _, err := c.readSeq(ctx)
		if err != nil {
			return err
		}
		var m struct {
			Seq int64 `bson:"seq"`
		}
		err = c.changes.FindOne(ctx, bson.M{"_id": markerID}, options.FindOne().SetProjection(bson.M{"seq": 1})).Decode(&m)
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return fmt.Errorf("read change marker: %w", err)
		}
		if stored >= m.Seq && stored >= seq {
			return nil
		}
		seq = max(seq, m.Seq)
	}
	return fmt.Errorf("write change sequence: still below %d after %d tries", seq, maxAttempts)
}

// maxSeq is one $max write of the sequence document (made if missing).
func (c recordStore) maxSeq(ctx context.Context, seq int64) error {
	_, err := c.changeSeq.UpdateOne(ctx, bson.M{"_id": markerID}, bson.M{"$max": bson.M{"seq": seq}}, options.UpdateOne().SetUpsert(true))
	if isDup(err) { // two first writers raced to create it
		_, err = c.changeSeq.UpdateOne(ctx, bson.M{"_id": markerID}, bson.M{"$max": bson.M{"seq": seq}})
	}
	if err != nil {
		return fmt.Errorf("write change sequence: %w", err)
	}
	return nil
}

// casMarker replaces the marker if its sequence number is still old.Seq;
// ok is false when another writer came first. The new number is claimed
// first (as record revisions are, see replace), because FerretDB applies
// the {_id, seq} filter and the write as two steps that two processes can
// interleave; the filter still guards against a stale old.
func (c recordStore) casMarker(ctx context.Context, old, next marker) (bool, error) {
	doc := bson.M{"_id": markerID, "seq": next.Seq, "recent": next.Recent}
	if old.Seq == 0 {
		_, err := c.changes.InsertOne(ctx, doc)
		if mongo.IsDuplicateKeyError(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("write change marker: %w", err)
		}
		return true, nil
	}
	// the claim names the number that follows old, whatever the batch
	// raises it to, so that every writer starting from old claims the
	// same key and only one of them wins
	key := claimKey(kindMarker, markerID, old.Seq+1)
	claimed := time.Now()
	if err := c.insertClaim(ctx, key); err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return false, c.settleMarkerClaim(ctx, key, old.Seq+1)
		}
		return false, fmt.Errorf("claim %s: %w", key, err)
	}
	// fenced: the write is given up unless done well before another
	// writer may take the claim as stale (see claimFence)
	wctx, cancel := context.WithDeadline(ctx, claimed.Add(claimFence(markerClaimStale)))
	r, err := c.changes.ReplaceOne(wctx, bson.M{"_id": markerID, "seq": old.Seq}, doc)
	cancel()
	if err == nil && r.MatchedCount == 1 {
		return true, nil
	}
	if _, derr := c.claims.DeleteOne(ctx, bson.M{"_id": key}); derr != nil {
		return false, fmt.Errorf("give back claim %s: %w (after: %v)", key, derr, err)
	}
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		// fenced off: try again from the marker as it is now (when the
		// write landed after all, the changes are listed twice, which
		// readers take as once)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("write change marker: %w", err)
	}
	return false, nil
}

// markerClaimStale is how old the claim of a marker number must be before
// another writer may take the number (its writer died between the claim
// and the marker write, which are milliseconds apart on a quiet machine
// and seconds apart on a loaded one: a claim taken from a writer still at
// work would let two writers replace the marker from the same number, and
// one change would be lost to every other process).
const markerClaimStale = 10 * time.Second

// settleMarkerClaim runs after losing the claim of marker number seq: it
// waits a little while the number is claimed but not written, and removes
// a stale claim.
func (c recordStore) settleMarkerClaim(ctx context.Context, key string, seq int64) error {
	m, err := c.readMarker(ctx)
	if err != nil || m.Seq >= seq {
		return err
	}
	var cl struct {
		At time.Time `bson:"at"`
	}
	err = c.claims.FindOne(ctx, bson.M{"_id": key}).Decode(&cl)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read claim %s: %w", key, err)
	}
	if time.Since(cl.At) > markerClaimStale {
		if _, err := c.claims.DeleteOne(ctx, bson.M{"_id": key}); err != nil {
			return fmt.Errorf("drop stale claim %s: %w", key, err)
		}
		return nil
	}
	select {
	case <-time.After(5 * time.Millisecond):
	case <-ctx.Done():
	}
	return nil
}

// findDataset loads one dataset by id; nil when absent.
func (c recordStore) findDataset(ctx context.Context, id string) (*Dataset, error) {
	var d Dataset
	err := c.datasets.FindOne(ctx, bson.M{"_id": id}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load dataset %s: %w", id, err)
	}
	return &d, nil
}

// findOrg loads one organization by id; nil when absent.
func (c recordStore) findOrg(ctx context.Context, id string) (*Organization, error) {
	var o Organization
	err := c.orgs.FindOne(ctx, bson.M{"_id": id}).Decode(&o)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load organization %s: %w", id, err)
	}
	return &o, nil
}

// findUser resolves a user by id, then by name; nil when unknown.
func (c recordStore) findUser(ctx context.Context, idOrName string) (*User, error) {
	if idOrName == "" || c.users == nil {
		return nil, nil
	}
	users, err := c.users.LookupUsers(ctx, []string{idOrName})
	if err != nil {
		return nil, fmt.Errorf("load user %s: %w", idOrName, err)
	}
	for i := range users { // an id match comes before a name match
		if users[i].ID == idOrName {
			return &users[i], nil
		}
	}
	if len(users) == 0 {
		return nil, nil
	}
	return &users[0], nil
}

// findUsers loads users by id.
func (c recordStore) findUsers(ctx context.Context, ids []string) (map[string]*User, error) {
	out := make(map[string]*User, len(ids))
	if len(ids) == 0 || c.users == nil {
		return out, nil
	}
	users, err := c.users.LookupUsers(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("load users: %w", err)
	}
	for i := range users {
		out[users[i].ID] = &users[i]
	}
	return out, nil
}

// findVocab loads one vocabulary by id; nil when absent.
func (c recordStore) findVocab(ctx context.Context, id string) (*Vocabulary, error) {
	var v Vocabulary
	err := c.vocabs.FindOne(ctx, bson.M{"_id": id}).Decode(&v)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load vocabulary %s: %w", id, err)
	}
	return &v, nil
}

// loadVocabs reads every vocabulary into st.
func (c recordStore) loadVocabs(ctx context.Context, st *readModel) error {
	cur, err := c.vocabs.Find(ctx, bson.M{})
	if err != nil {
		return fmt.Errorf("load vocabularies: %w", err)
	}
	var vs []*Vocabulary
	if err := cur.All(ctx, &vs); err != nil {
		return fmt.Errorf("load vocabularies: %w", err)
	}
	for _, v := range vs {
		st.putVocab(v)
	}
	return nil
}

// allOrgs reads every organization and group (a full load).
func (c recordStore) allOrgs(ctx context.Context) ([]*Organization, error) {
	cur, err := c.orgs.Find(ctx, bson.M{})
	if err != nil {
		return nil, fmt.Errorf("load organizations: %w", err)
	}
	var orgs []*Organization
	if err := cur.All(ctx, &orgs); err != nil {
		return nil, fmt.Errorf("load organizations: %w", err)
	}
	return orgs, nil
}

// allDatasets opens a cursor over every dataset, read batch at a time (a
// full load).
func (c recordStore) allDatasets(ctx context.Context, batch int32) (*mongo.Cursor, error) {
	cur, err := c.datasets.Find(ctx, bson.M{}, options.Find().SetBatchSize(batch))
	if err != nil {
		return nil, fmt.Errorf("load datasets: %w", err)
	}
	return cur, nil
}

// identityID is the _id of the store's identity document.
const identityID = "identity"

// storeID is the identity of the catalog's store: a random id written
// with the first call on a store (once, whichever process wins) and read
// ever after. A records file names the store it was read from, so that a
// file is never taken for another store's.
func (c recordStore) storeID(ctx context.Context) (string, error) {
	var doc struct {
		ID string `bson:"id"`
	}
	for try := 0; try < 2; try++ {
		err := c.meta.FindOne(ctx, bson.M{"_id": identityID}).Decode(&doc)
		if err == nil && doc.ID != "" {
			return doc.ID, nil
		}
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return "", fmt.Errorf("read store identity: %w", err)
		}
		var b [16]byte
		_, _ = rand.Read(b[:])
		_, err = c.meta.InsertOne(ctx, bson.M{"_id": identityID, "id": hex.EncodeToString(b[:]), "created": time.Now().UTC()})
		if err != nil && !isDup(err) {
			return "", fmt.Errorf("write store identity: %w", err)
		}
	}
	return "", errors.New("store identity: written but not read back")
}
