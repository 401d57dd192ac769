package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Collection names in the toxgate database.
const (
	CollDatasets      = "datasets"
	CollOrganizations = "organizations"
	CollChanges       = "catalog_changes"
	CollUsers         = "users"
)

// change kinds in the change log.
const (
	kindDataset = "d"
	kindOrg     = "o"
)

// changeEntry is one record of the change log: _id is a gap-free sequence
// number claimed by a unique insert, which is atomic on MongoDB and on the
// embedded store alike.
type changeEntry struct {
	Seq  int64  `bson:"_id"`
	Kind string `bson:"k"`
	ID   string `bson:"id"`
	At   int64  `bson:"at"`
}

type collections struct {
	datasets, orgs, changes, users *mongo.Collection
}

func newCollections(db *mongo.Database) collections {
	return collections{
		datasets: db.Collection(CollDatasets),
		orgs:     db.Collection(CollOrganizations),
		changes:  db.Collection(CollChanges),
		users:    db.Collection(CollUsers),
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

// record appends a change of (kind, id) to the change log, after the change
// itself is written, trying sequence numbers from next up; it returns the
// number it claimed.
func (c collections) record(ctx context.Context, next int64, kind, id string) (int64, error) {
	for seq := max(next, 1); ; seq++ {
		_, err := c.changes.InsertOne(ctx, changeEntry{Seq: seq, Kind: kind, ID: id, At: time.Now().UnixMilli()})
		if err == nil {
			return seq, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return 0, fmt.Errorf("record change: %w", err)
		}
	}
}

// change reads change seq; nil when it does not exist (yet).
func (c collections) change(ctx context.Context, seq int64) (*changeEntry, error) {
	var e changeEntry
	err := c.changes.FindOne(ctx, bson.M{"_id": seq}).Decode(&e)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read change %d: %w", seq, err)
	}
	return &e, nil
}

// lastChange is the highest sequence number in the change log (0 if none).
func (c collections) lastChange(ctx context.Context) (int64, error) {
	var e changeEntry
	err := c.changes.FindOne(ctx, bson.M{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}})).Decode(&e)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read change log: %w", err)
	}
	return e.Seq, nil
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
