package store

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestEmbeddedKeepsDataAcrossRestarts starts the embedded store, writes a
// document, stops it cleanly, starts it again on the same directory and finds
// the document.
func TestEmbeddedKeepsDataAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	s, err := Open(ctx, Options{DataDir: dir, Database: "toxgate_test"})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if !s.Embedded() {
		t.Fatal("store without URI should be embedded")
	}
	if _, err := s.DB().Collection("things").InsertOne(ctx, bson.M{"_id": "a", "n": 42}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := s.Ping(ctx); err == nil {
		t.Fatal("ping after close should fail")
	}

	s2, err := Open(ctx, Options{DataDir: dir, Database: "toxgate_test"})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close(ctx)
	var got struct {
		N int `bson:"n"`
	}
	if err := s2.DB().Collection("things").FindOne(ctx, bson.M{"_id": "a"}).Decode(&got); err != nil {
		t.Fatalf("find after restart: %v", err)
	}
	if got.N != 42 {
		t.Fatalf("n = %d, want 42", got.N)
	}
}

// TestOpenWithURIStartsNothingEmbedded connects to an existing server by URI.
func TestOpenWithURIStartsNothingEmbedded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := StartEmbedded(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatalf("start embedded: %v", err)
	}
	defer e.Close(ctx)
	s, err := Open(ctx, Options{URI: e.URI(), Database: "x"})
	if err != nil {
		t.Fatalf("open by uri: %v", err)
	}
	defer s.Close(ctx)
	if s.Embedded() {
		t.Fatal("store opened by URI must not start an embedded server")
	}
	if s.URI() != e.URI() {
		t.Fatalf("uri = %q, want %q", s.URI(), e.URI())
	}
}

// TestOpenUnreachableURIFails reports a clear error for a server that does not answer.
func TestOpenUnreachableURIFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Open(ctx, Options{URI: "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300", Database: "x"})
	if err == nil {
		t.Fatal("expected an error for an unreachable server")
	}
}
