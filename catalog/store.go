package catalog

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Collection names in the toxgate database.
const (
	CollDatasets      = "datasets"
	CollOrganizations = "organizations"
	CollChanges       = "catalog_marker"
	CollChangeSeq     = "catalog_marker_seq"
	CollUsers         = "users"
)

// change kinds in the change marker.
const (
	kindDataset = "d"
	kindOrg     = "o"
)

// markerID is the _id of the one change marker document, alone in its
// collection so that reading it costs one row on any store.
const markerID = "catalog"

// markerKeep is how many recent changes the marker lists; a reader further
// behind reloads everything.
const markerKeep = 64

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

type collections struct {
	datasets, orgs, changes, changeSeq, users *mongo.Collection
}

func newCollections(db *mongo.Database) collections {
	return collections{
		datasets:  db.Collection(CollDatasets),
		orgs:      db.Collection(CollOrganizations),
		changes:   db.Collection(CollChanges),
		changeSeq: db.Collection(CollChangeSeq),
		users:     db.Collection(CollUsers),
	}
}

// ensureIndexes makes the unique name indexes (idempotent).
func (c collections) ensureIndexes(ctx context.Context) error {
	unique := options.Index().SetUnique(true)
	if _, err := c.datasets.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}, Options: unique}); err != nil {
		return fmt.Errorf("create index datasets.name: %w", err)
	}
	if _, err := c.orgs.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}, Options: unique}); err != nil {
		return fmt.Errorf("create index organizations.name: %w", err)
	}
	return nil
}

// readMarker reads the change marker (zero when none).
func (c collections) readMarker(ctx context.Context) (marker, error) {
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
func (c collections) readSeq(ctx context.Context) (seq int64, ok bool, err error) {
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
// goes down, whatever order writers finish in).
func (c collections) raiseSeq(ctx context.Context, seq int64) error {
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
// ok is false when another writer came first.
func (c collections) casMarker(ctx context.Context, old, next marker) (bool, error) {
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
	r, err := c.changes.ReplaceOne(ctx, bson.M{"_id": markerID, "seq": old.Seq}, doc)
	if err != nil {
		return false, fmt.Errorf("write change marker: %w", err)
	}
	return r.MatchedCount == 1, nil
}

// findDataset loads one dataset by id; nil when absent.
func (c collections) findDataset(ctx context.Context, id string) (*Dataset, error) {
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
func (c collections) findOrg(ctx context.Context, id string) (*Organization, error) {
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

// replaceDataset writes d if the stored revision is still prev; ok is false
// when another write came first.
func (c collections) replaceDataset(ctx context.Context, d *Dataset, prev int64) (bool, error) {
	r, err := c.datasets.ReplaceOne(ctx, bson.M{"_id": d.ID, "rev": prev}, d)
	if err != nil {
		return false, fmt.Errorf("write dataset %s: %w", d.ID, err)
	}
	return r.MatchedCount == 1, nil
}

// replaceOrg writes o if the stored revision is still prev.
func (c collections) replaceOrg(ctx context.Context, o *Organization, prev int64) (bool, error) {
	r, err := c.orgs.ReplaceOne(ctx, bson.M{"_id": o.ID, "rev": prev}, o)
	if err != nil {
		return false, fmt.Errorf("write organization %s: %w", o.ID, err)
	}
	return r.MatchedCount == 1, nil
}

// findUser resolves a user by id, then by name; nil when unknown.
func (c collections) findUser(ctx context.Context, idOrName string) (*User, error) {
	if idOrName == "" {
		return nil, nil
	}
	var u User
	err := c.users.FindOne(ctx, bson.M{"_id": idOrName}).Decode(&u)
	if errors.Is(err, mongo.ErrNoDocuments) {
		err = c.users.FindOne(ctx, bson.M{"name": idOrName}).Decode(&u)
	}
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load user %s: %w", idOrName, err)
	}
	return &u, nil
}

// findUsers loads users by id.
func (c collections) findUsers(ctx context.Context, ids []string) (map[string]*User, error) {
	out := make(map[string]*User, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cur, err := c.users.Find(ctx, bson.M{"_id": bson.M{"$in": ids}})
	if err != nil {
		return nil, fmt.Errorf("load users: %w", err)
	}
	var users []*User
	if err := cur.All(ctx, &users); err != nil {
		return nil, fmt.Errorf("load users: %w", err)
	}
	for _, u := range users {
		out[u.ID] = u
	}
	return out, nil
}
