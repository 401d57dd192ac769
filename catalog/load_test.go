package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"toxgate/catalog/ckan"
	"toxgate/gateway/store"
)

// An opened catalog answers every action with a CKAN-shaped 503 until
// Load has finished, and then runs them.
func TestOpenAnswersLoadingUntilLoaded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Options{URI: testURI, Database: fmt.Sprintf("cat_loading_%d", dbSeq.Add(1))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	s, err := Open(ctx, st.DB(), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"package_list", "package_search", "package_show", "organization_create"} {
		_, err := s.Do(ctx, Request{Action: action, Caller: Caller{UserID: "u1", Name: "root", Sysadmin: true}})
		var ce *ckan.Error
		if !errors.As(err, &ce) || ce.Status != 503 || ce.Type != ckan.TypeUnavailable || ce.Message != "The catalog is loading; please retry" {
			t.Fatalf("%s while loading: %v", action, err)
		}
	}
	select {
	case <-s.Loaded():
		t.Fatal("Loaded closed before Load")
	default:
	}
	if err := s.Load(ctx); err != nil {
		t.Fatal(err)
	}
	<-s.Loaded()
	res, err := s.Do(ctx, Request{Action: "package_list"})
	if err != nil {
		t.Fatalf("package_list once loaded: %v", err)
	}
	if l, ok := res.([]string); !ok || len(l) != 0 {
		t.Fatalf("package_list once loaded: %#v", res)
	}
}
