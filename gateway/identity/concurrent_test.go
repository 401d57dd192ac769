package identity

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"toxgate/gateway/config"
	"toxgate/gateway/store"
)

// newStoreService is a Service on a new embedded store.
func newStoreService(t *testing.T) *Service {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := store.StartEmbedded(ctx, t.TempDir(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	st, err := store.Open(ctx, store.Options{URI: e.URI(), Database: "identity_test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	a := config.Default().Auth
	a.LoginAccountMaxFails = 6
	a.LoginMaxFails = 3
	a.TokenCacheTTL = 0
	s := NewService(NewStore(st.DB()), Options{Auth: a, Logger: quiet})
	if err := s.Store().EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// Guesses of one account from many addresses at the same moment all count
// towards the account's ceiling: the owner is then refused even with the
// right password.
func TestConcurrentGuessesReachTheAccountCeiling(t *testing.T) {
	s := newStoreService(t)
	ctx := context.Background()
	if _, err := s.CreateUser(ctx, NewUser{Name: "olga", Email: "olga@example.org", Password: "olga-password", Active: true}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Login(ctx, "olga", "guess", "10.0.0."+strconv.Itoa(i+1))
			if !errors.Is(err, ErrBadLogin) && !errors.Is(err, ErrThrottled) {
				t.Errorf("guess from 10.0.0.%d: %v", i+1, err)
			}
		}()
	}
	wg.Wait()
	if _, err := s.Login(ctx, "olga", "olga-password", "10.0.1.1"); !errors.Is(err, ErrThrottled) {
		t.Fatalf("the right password after 12 concurrent guesses (ceiling 6): %v, want throttled", err)
	}
	// two windows on, the failures are pruned and the owner logs in
	later := time.Now().Add(2 * s.cfg.LoginAccountWindow)
	if err := s.store.pruneFailures(ctx, later, s.cfg.LoginAccountWindow); err != nil {
		t.Fatal(err)
	}
	if n, err := s.store.failures.CountDocuments(ctx, bson.M{}); err != nil || n != 0 {
		t.Fatalf("failures left after pruning: %d %v", n, err)
	}
	if _, err := s.Login(ctx, "olga", "olga-password", "10.0.1.1"); err != nil {
		t.Fatalf("the right password once the failures are pruned: %v", err)
	}
}

// A token revoked while it is renewed stays revoked.
func TestTokenRevokedWhileRenewedStaysRevoked(t *testing.T) {
	s := newStoreService(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Name: "petr", Email: "petr@example.org", Password: "petr-password", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	owner := Caller{Roles: u.Roles}
	owner.UserID, owner.Name = u.ID, u.Name
	for round := range 5 {
		secret, tok, err := s.CreateToken(ctx, u.ID, "t"+strconv.Itoa(round), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, _ = s.RenewToken(ctx, owner, tok.ID, 2*time.Hour)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := s.RevokeToken(ctx, owner, tok.ID); err != nil {
				t.Errorf("revoke: %v", err)
			}
		}()
		close(start)
		wg.Wait()
		s.forget()
		if c, err := s.checkToken(ctx, secret); err == nil {
			t.Fatalf("round %d: a token revoked while renewed still authenticates %s", round, c.Name)
		}
	}
}

// A verification link used by many requests at the same moment works for
// one of them.
func TestVerificationUsedOnceAtOnce(t *testing.T) {
	s := newStoreService(t)
	ctx := context.Background()
	for round := range 3 {
		v := &Verification{ID: "v" + strconv.Itoa(round), UserID: "u", Email: "u@example.org", Created: time.Now(), Expires: time.Now().Add(time.Hour)}
		if err := s.Store().InsertVerification(ctx, v); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		used := 0
		start := make(chan struct{})
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := s.Store().UseVerification(ctx, v.ID, time.Now())
				switch {
				case err == nil:
					mu.Lock()
					used++
					mu.Unlock()
				case !errors.Is(err, ErrNotFound):
					t.Errorf("use: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if used != 1 {
			t.Fatalf("round %d: a verification link used %d times by 8 requests at once", round, used)
		}
	}
}
