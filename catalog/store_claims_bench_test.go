package catalog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// BenchmarkChangesSince lists the claims of the last minute among 20,000
// older ones (a catalog written to for minutes, whose old claims are not
// pruned yet), newest first as catch-up reads them, beside the same list
// read with a filter on the claims' time, which the embedded store
// applies to every claim, in the same run.
//
//	go test -run '^$' -bench ChangesSince -benchtime 20x ./catalog/
func BenchmarkChangesSince(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	c := f.svc.c
	// the claims in the order a running catalog makes them: old ones first
	if _, err := c.claims.DeleteMany(ctx, bson.M{}); err != nil {
		b.Fatal(err)
	}
	old := time.Now().UTC().Add(-10 * time.Minute)
	docs := make([]any, 0, 1000)
	for i := range 20000 {
		docs = append(docs, bson.M{"_id": fmt.Sprintf("d:old-%d@1", i), "at": old})
		if len(docs) == cap(docs) {
			if _, err := c.claims.InsertMany(ctx, docs); err != nil {
				b.Fatal(err)
			}
			docs = docs[:0]
		}
	}
	for i := range 10 {
		if err := c.insertClaim(ctx, fmt.Sprintf("d:new-%d@1", i)); err != nil {
			b.Fatal(err)
		}
	}
	since := time.Now().Add(-time.Minute)
	b.Run("newest-first", func(b *testing.B) {
		for b.Loop() {
			refs, complete, err := c.changesSince(ctx, since, time.Now())
			if err != nil || !complete || len(refs) != 10 {
				b.Fatalf("%d refs, complete %v, %v", len(refs), complete, err)
			}
		}
	})
	b.Run("filter-on-time", func(b *testing.B) {
		for b.Loop() {
			cur, err := c.claims.Find(ctx, bson.M{"at": bson.M{"$gte": since}})
			if err != nil {
				b.Fatal(err)
			}
			var got []bson.M
			if err := cur.All(ctx, &got); err != nil || len(got) != 10 {
				b.Fatalf("%d claims, %v", len(got), err)
			}
		}
	})
}
