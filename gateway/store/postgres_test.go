package store

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"toxgate/catalog/datastore/pgtest"
)

// TestPostgresBackendIsShared opens two stores on one PostgreSQL database,
// as two gateways with store.backend postgresql do: what one writes the
// other reads, a unique _id holds across both, and the data outlives both.
func TestPostgresBackendIsShared(t *testing.T) {
	pg := pgtest.Start(t)
	url, err := pg.NewDatabase("shared")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	open := func() *Store {
		s, err := Open(ctx, Options{Backend: BackendPostgreSQL, PostgresURL: url, Database: "toxgate"})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		if s.Backend() != BackendPostgreSQL || !s.Shared() || !s.Embedded() {
			t.Fatalf("backend %q shared %v embedded %v, want postgresql, shared, embedded", s.Backend(), s.Shared(), s.Embedded())
		}
		return s
	}
	a, b := open(), open()
	if _, err := a.DB().Collection("things").InsertOne(ctx, bson.M{"_id": "x", "n": 1}); err != nil {
		t.Fatal(err)
	}
	_, err = b.DB().Collection("things").InsertOne(ctx, bson.M{"_id": "x", "n": 2})
	if !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("second insert of _id x through the other store: %v, want a duplicate-key error", err)
	}
	var got struct {
		N int `bson:"n"`
	}
	if err := b.DB().Collection("things").FindOne(ctx, bson.M{"_id": "x"}).Decode(&got); err != nil || got.N != 1 {
		t.Fatalf("read through the other store: n=%d err=%v, want 1", got.N, err)
	}
	_ = a.Close(ctx)
	_ = b.Close(ctx)
	c := open()
	defer c.Close(ctx)
	if err := c.DB().Collection("things").FindOne(ctx, bson.M{"_id": "x"}).Decode(&got); err != nil || got.N != 1 {
		t.Fatalf("read after both closed: n=%d err=%v", got.N, err)
	}
}

// TestPostgresBackendNeedsURL refuses backend postgresql without a URL and
// an unknown backend, before starting anything.
func TestPostgresBackendNeedsURL(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, Options{Backend: BackendPostgreSQL, Database: "x"}); err == nil {
		t.Fatal("postgresql without a URL opened")
	}
	if _, err := Open(ctx, Options{Backend: "oracle", Database: "x", DataDir: t.TempDir()}); err == nil {
		t.Fatal("unknown backend opened")
	}
}
