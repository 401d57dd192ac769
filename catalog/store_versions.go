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

// CollVersions holds the dataset versions (versions.go), one document per
// version.
const CollVersions = "dataset_versions"

// Version states. A version is written pending (its record names the
// files and snapshot tables it will hold, so nothing frees them), its
// tables are copied, and only then is it marked active: readers see
// active versions alone, so a crash between the parts leaves no version,
// and the sweep removes what a pending one left.
const (
	VersionPending = "pending"
	VersionActive  = "active"
	VersionDeleted = "deleted"
	// versionAbandoned is a pending version the sweep took: its tables
	// are being dropped.
	versionAbandoned = "abandoned"
)

// Version is a dataset version: a named, immutable snapshot of a dataset's
// metadata (its package_show dict), its resources' files (by file id and
// SHA-256) and their DataStore tables (copied, see RATIONALE.md).
type Version struct {
	// ID is the version's id (a UUID).
	ID string `bson:"_id"`
	// DatasetID is the id of the dataset it is a version of.
	DatasetID string `bson:"dataset_id"`
	// Name is the version's name, unique among the dataset's versions.
	Name string `bson:"name"`
	// Description is free text.
	Description string `bson:"description"`
	// Created is when the version was made (UTC).
	Created time.Time `bson:"created"`
	// CreatorUserID is the id of the user who made it.
	CreatorUserID string `bson:"creator_user_id"`
	// DOI is the DOI registered for the version (gateway/citation), if any.
	DOI string `bson:"doi,omitempty"`
	// State is pending, active or deleted.
	State string `bson:"state"`
	// Touched is when a pending version's maker last reported progress
	// (the sweep removes pending versions untouched for the grace).
	Touched time.Time `bson:"touched"`
	// Package is the dataset's package_show dict as JSON when the version
	// was made: the frozen metadata.
	Package string `bson:"package"`
	// Resources are the dataset's active resources when the version was
	// made, in order.
	Resources []VersionResource `bson:"resources"`
	// Files and ResourceIDs list the file ids and resource ids of
	// Resources, for lookups by file and by resource.
	Files       []string `bson:"files"`
	ResourceIDs []string `bson:"resource_ids"`
}

// VersionResource is one resource as a version holds it.
type VersionResource struct {
	// ID is the resource's id.
	ID string `bson:"id"`
	// FileID is the uploaded file held (empty for a link).
	FileID string `bson:"file_id,omitempty"`
	// SHA256 is the file's hash (hex), empty without a file.
	SHA256 string `bson:"sha256,omitempty"`
	// Table is the snapshot table of its DataStore table (empty without
	// one).
	Table string `bson:"table,omitempty"`
}

// versionStore is the collection of versions.
type versionStore struct{ coll *mongo.Collection }

func newVersionStore(db *mongo.Database) versionStore {
	return versionStore{coll: db.Collection(CollVersions)}
}

// ensureIndexes makes the index by dataset. (Lookups by file scan the
// versions: they run only when a file is to be freed or swept.)
func (v versionStore) ensureIndexes(ctx context.Context) error {
	_, err := v.coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "dataset_id", Value: 1}}})
	if err != nil {
		return fmt.Errorf("versions: indexes: %w", err)
	}
	return nil
}

// withoutPackage leaves the frozen metadata out of list reads.
var withoutPackage = options.Find().SetProjection(bson.D{{Key: "package", Value: 0}})

// insert writes a new version record.
func (v versionStore) insert(ctx context.Context, rec *Version) error {
	if _, err := v.coll.InsertOne(ctx, rec); err != nil {
		return fmt.Errorf("versions: insert %s: %w", rec.ID, err)
	}
	return nil
}

// get reads version id; nil when there is none.
func (v versionStore) get(ctx context.Context, id string) (*Version, error) {
	var rec Version
	err := v.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&rec)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("versions: read %s: %w", id, err)
	}
	return &rec, nil
}

// find lists the versions matching filter, without their frozen metadata
// unless full.
func (v versionStore) find(ctx context.Context, filter bson.D, full bool) ([]*Version, error) {
	opts := withoutPackage
	if full {
		opts = options.Find()
	}
	cur, err := v.coll.Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("versions: find: %w", err)
	}
	var out []*Version
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("versions: find: %w", err)
	}
	return out, nil
}

// ofDataset lists the versions of a dataset in state (any state when "").
func (v versionStore) ofDataset(ctx context.Context, datasetID, state string) ([]*Version, error) {
	f := bson.D{{Key: "dataset_id", Value: datasetID}}
	if state != "" {
		f = append(f, bson.E{Key: "state", Value: state})
	}
	return v.find(ctx, f, false)
}

// setFields sets fields of version id.
func (v versionStore) setFields(ctx context.Context, id string, set bson.D) error {
	if _, err := v.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: set}}); err != nil {
		return fmt.Errorf("versions: update %s: %w", id, err)
	}
	return nil
}

// activate marks pending version id active with its resources, once its
// maker won the version's end (decideVersion); false when its record is
// gone (its dataset was purged meanwhile). The write is fenced like a
// record's (claimFence).
func (v versionStore) activate(ctx context.Context, id string, res []VersionResource) (bool, error) {
	wctx, cancel := context.WithTimeout(ctx, claimFence(claimStale))
	defer cancel()
	r, err := v.coll.UpdateOne(wctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: VersionActive}, {Key: "resources", Value: res}}}})
	if err != nil {
		return false, fmt.Errorf("versions: activate %s: %w", id, err)
	}
	return r.MatchedCount == 1, nil
}

// abandon marks pending version id abandoned, once a sweep won the
// version's end (decideVersion).
func (v versionStore) abandon(ctx context.Context, id string) error {
	_, err := v.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "state", Value: VersionPending}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: versionAbandoned}}}})
	if err != nil {
		return fmt.Errorf("versions: abandon %s: %w", id, err)
	}
	return nil
}

// touch records that pending version id's maker is at work.
func (v versionStore) touch(ctx context.Context, id string, at time.Time) error {
	_, err := v.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "state", Value: VersionPending}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "touched", Value: at}}}})
	if err != nil {
		return fmt.Errorf("versions: touch %s: %w", id, err)
	}
	return nil
}

// remove deletes version id's record.
func (v versionStore) remove(ctx context.Context, id string) error {
	if _, err := v.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		return fmt.Errorf("versions: delete %s: %w", id, err)
	}
	return nil
}

// holdsFile reports whether a version (in any state) holds file id.
func (v versionStore) holdsFile(ctx context.Context, id string) (bool, error) {
	n, err := v.coll.CountDocuments(ctx, bson.D{{Key: "files", Value: id}}, options.Count().SetLimit(1))
	if err != nil {
		return false, fmt.Errorf("versions: files: %w", err)
	}
	return n > 0, nil
}

// heldFiles lists every file and snapshot table a version holds, and the
// pending versions.
func (v versionStore) held(ctx context.Context) (files, tables map[string]bool, pending []*Version, err error) {
	cur, err := v.coll.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "files", Value: 1}, {Key: "resources", Value: 1}, {Key: "state", Value: 1}, {Key: "touched", Value: 1}}))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("versions: list: %w", err)
	}
	var all []*Version
	if err := cur.All(ctx, &all); err != nil {
		return nil, nil, nil, fmt.Errorf("versions: list: %w", err)
	}
	files, tables = map[string]bool{}, map[string]bool{}
	for _, rec := range all {
		for _, f := range rec.Files {
			files[f] = true
		}
		for _, r := range rec.Resources {
			if r.Table != "" {
				tables[r.Table] = true
			}
		}
		if rec.State == VersionPending || rec.State == versionAbandoned {
			pending = append(pending, rec)
		}
	}
	return files, tables, pending, nil
}
