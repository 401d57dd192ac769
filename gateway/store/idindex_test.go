package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Finds, updates and deletes by _id on the embedded store use an index,
// also on a collection made after the store started: SQLite's query plan
// (through FerretDB's explain) names the index instead of a scan, and the
// operations find the right documents.
func TestEmbeddedLooksUpByIDThroughAnIndex(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Open(ctx, Options{DataDir: t.TempDir(), Database: "toxgate_test"})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close(ctx)
	c := s.DB().Collection("later")
	docs := make([]any, 500)
	for i := range docs {
		docs[i] = bson.M{"_id": fmt.Sprintf("doc-%04d", i), "n": i}
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	plan := func() string {
		// a statement that reads the table first, so that the pooled
		// connection notices the schema changed (EXPLAIN alone does not)
		_ = c.FindOne(ctx, bson.M{"_id": "doc-0001"}).Err()
		var out bson.M
		err := s.DB().RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "later"}, {Key: "filter", Value: bson.M{"_id": "doc-0499"}}}}}).Decode(&out)
		if err != nil {
			t.Fatalf("explain: %v", err)
		}
		return fmt.Sprint(out["queryPlanner"])
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(plan(), "USING INDEX") {
		if time.Now().After(deadline) {
			t.Fatalf("a find by _id still scans the table: %s", plan())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r, err := c.ReplaceOne(ctx, bson.M{"_id": "doc-0499"}, bson.M{"n": -1}); err != nil || r.MatchedCount != 1 {
		t.Fatalf("replace by _id: %v %v", r, err)
	}
	var got struct {
		N int `bson:"n"`
	}
	if err := c.FindOne(ctx, bson.M{"_id": "doc-0499"}).Decode(&got); err != nil || got.N != -1 {
		t.Fatalf("find after replace: %v %v", got, err)
	}
	if r, err := c.DeleteOne(ctx, bson.M{"_id": "doc-0250"}); err != nil || r.DeletedCount != 1 {
		t.Fatalf("delete by _id: %v %v", r, err)
	}
	if n, err := c.CountDocuments(ctx, bson.M{}); err != nil || n != 499 {
		t.Fatalf("count after delete: %d %v", n, err)
	}
}
