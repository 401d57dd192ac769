package catalog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"toxgate/catalog/internal/groupcommit"
)

// Group commit: concurrent writers of this process share store round
// trips. Each insert into a grouped collection (the records' creations,
// the claims, the activities) joins a queue (catalog/internal/groupcommit);
// one goroutine at a time takes everything queued and writes it with one
// unordered InsertMany, then tells each writer the outcome of its own
// document. A writer
// returns only once the InsertMany that held its document has been
// acknowledged by the store (durable there), and a duplicate _id or name
// is reported to the writer of that document alone, so the claim of a
// revision still succeeds for exactly one writer. While one batch is in
// flight the next one fills, so batches grow with the number of writers
// and no writer waits for a timer.

// groupMax bounds how many documents one grouped InsertMany writes.
const groupMax = 256

// groupTimeout bounds one grouped store write (it runs on behalf of many
// requests, so none of their deadlines is its own).
const groupTimeout = 30 * time.Second

// storeGroups holds the insert groups of one recordStore and the gate
// that keeps this process's grouped writes to one at a time.
type storeGroups struct {
	// gate runs grouped writes one at a time when exclusive (the
	// embedded store takes one writer at a time; concurrent writers there
	// only wait on each other). Without it they run in parallel.
	gate      sync.Mutex
	exclusive bool
	datasets  insertGroup
	orgs      insertGroup
	vocabs    insertGroup
	claims    insertGroup
	activity  insertGroup
	actData   insertGroup
}

// insertGroup combines concurrent inserts into one collection.
type insertGroup struct {
	coll *mongo.Collection
	gate *storeGroups
	q    groupcommit.Queue[any]
}

func newStoreGroups(c *recordStore, exclusive bool) *storeGroups {
	g := &storeGroups{exclusive: exclusive}
	for _, ig := range []struct {
		g    *insertGroup
		coll *mongo.Collection
	}{{&g.datasets, c.datasets}, {&g.orgs, c.orgs}, {&g.vocabs, c.vocabs}, {&g.claims, c.claims},
		{&g.activity, c.activity}, {&g.actData, c.activityDataColl}} {
		ig.g.coll, ig.g.gate = ig.coll, g
		ig.g.q = groupcommit.Queue[any]{Max: groupMax, Write: ig.g.write}
	}
	return g
}

// lockGate takes the gate when grouped writes run one at a time; the
// returned function releases it.
func (g *storeGroups) lockGate() func() {
	if !g.exclusive {
		return func() {}
	}
	g.gate.Lock()
	return g.gate.Unlock
}

// groupFor is the insert group of coll (nil: coll is not grouped).
func (c recordStore) groupFor(coll *mongo.Collection) *insertGroup {
	if c.groups == nil {
		return nil
	}
	for _, g := range []*insertGroup{&c.groups.datasets, &c.groups.orgs, &c.groups.vocabs, &c.groups.claims, &c.groups.activity, &c.groups.actData} {
		if g.coll == coll {
			return g
		}
	}
	return nil
}

// insertOne inserts doc into coll, sharing the round trip with the
// concurrent inserts of this process into the same collection. The error
// is this document's own (a duplicate key is one, as from InsertOne).
func (c recordStore) insertOne(ctx context.Context, coll *mongo.Collection, doc any) error {
	g := c.groupFor(coll)
	if g == nil {
		_, err := coll.InsertOne(ctx, doc)
		return err
	}
	return g.insert(ctx, doc)
}

// insert queues doc and waits for its batch to be written.
func (g *insertGroup) insert(ctx context.Context, doc any) error {
	err := g.q.Submit(ctx, doc)
	if err != nil && err == ctx.Err() {
		// the document may still be written; the write is not
		// acknowledged
		return fmt.Errorf("insert into %s: %w", g.coll.Name(), err)
	}
	return err
}

// write inserts one batch with one unordered InsertMany and answers each
// document's outcome.
func (g *insertGroup) write(ctx context.Context, docs []any) []error {
	ctx, cancel := context.WithTimeout(ctx, groupTimeout)
	defer cancel()
	release := g.gate.lockGate()
	_, err := g.coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	release()
	var bwe mongo.BulkWriteException
	if err == nil || !errors.As(err, &bwe) || bwe.WriteConcernError != nil {
		return groupcommit.All(len(docs), err)
	}
	errs := make([]error, len(docs))
	for _, we := range bwe.WriteErrors {
		if we.Index >= 0 && we.Index < len(errs) {
			errs[we.Index] = mongo.WriteException{WriteErrors: mongo.WriteErrors{we.WriteError}}
		}
	}
	return errs
}

// upsertNew writes doc under id, as a ReplaceOne with upsert would: as a
// grouped insert, and only when a document with id is already there (an
// activity of a revision whose writer died before its record was
// written) as a replace of it.
func (c recordStore) upsertNew(ctx context.Context, coll *mongo.Collection, id string, doc any) error {
	err := c.insertOne(ctx, coll, doc)
	if !mongo.IsDuplicateKeyError(err) {
		return err
	}
	_, err = coll.ReplaceOne(ctx, bson.M{"_id": id}, doc, options.Replace().SetUpsert(true))
	return err
}
