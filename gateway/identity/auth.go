package identity

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"toxgate/gateway/identity/oidc"
	"toxgate/plugins/contract"
)

// lastUsedEvery bounds how often a token's last use is written.
const lastUsedEvery = time.Minute

// Check authenticates one credential (API token, an access token of the
// gateway's own OpenID provider, or an external provider's OIDC JWT).
func (s *Service) Check(ctx context.Context, cred string) (Caller, error) {
	if strings.HasPrefix(cred, TokenPrefix) {
		return s.checkToken(ctx, cred)
	}
	if !oidc.LooksLikeJWT(cred) {
		return Caller{}, ErrBadCredentials
	}
	if p := s.providerTokens(); p != nil && p.Owns(cred) {
		return s.checkProviderToken(ctx, p, cred)
	}
	if s.oidc != nil {
		return s.checkJWT(ctx, cred)
	}
	return Caller{}, ErrBadCredentials
}

func (s *Service) checkToken(ctx context.Context, tok string) (Caller, error) {
	if !WellFormedToken(tok) {
		return Caller{}, ErrBadCredentials
	}
	h := TokenHash(tok)
	t := time.Now()
	e, err := s.cache.get(string(h[:]), t, func() (cacheEntry, error) { return s.loadToken(ctx, h) })
	if err != nil {
		s.log.Error("token check failed", "err", err)
		return Caller{}, ErrBadCredentials
	}
	if !e.ok || (e.expires != nil && !t.Before(*e.expires)) {
		return Caller{}, ErrBadCredentials
	}
	return e.caller, nil
}

// loadToken looks a token up by its id, compares the full hash in constant
// time, and checks its state and its user's.
func (s *Service) loadToken(ctx context.Context, h [32]byte) (cacheEntry, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rec, err := s.store.TokenByID(ctx, TokenID(h))
	if errors.Is(err, ErrNotFound) {
		return cacheEntry{}, nil
	}
	if err != nil {
		return cacheEntry{}, err
	}
	want := hex.EncodeToString(h[:])
	t := now()
	if subtle.ConstantTimeCompare([]byte(rec.Hash), []byte(want)) != 1 || !rec.Live(t) {
		return cacheEntry{}, nil
	}
	u, err := s.store.UserByID(ctx, rec.UserID)
	if errors.Is(err, ErrNotFound) {
		return cacheEntry{}, nil
	}
	if err != nil {
		return cacheEntry{}, err
	}
	if u.State != StateActive {
		return cacheEntry{}, nil
	}
	if s.touched.due(rec.ID, t) {
		go s.touchToken(rec.ID, t)
	}
	return cacheEntry{caller: u.Caller("token"), ok: true, expires: rec.ExpiresAt}, nil
}

func (s *Service) touchToken(id string, t time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.store.TouchToken(ctx, id, t); err != nil {
		s.log.Warn("record token use", "err", err)
	}
}

// checkJWT verifies an OIDC bearer token and maps it to a local user,
// provisioned on first sight (so the catalog can name its datasets' owners).
// Roles come from the token; an administrator can still disable the user.
func (s *Service) checkJWT(ctx context.Context, raw string) (Caller, error) {
	id, err := s.oidc.Verify(ctx, raw)
	if err != nil {
		s.log.Debug("jwt refused", "err", err)
		return Caller{}, ErrBadCredentials
	}
	e, err := s.subs.get(id.Subject, time.Now(), func() (cacheEntry, error) { return s.oidcUser(ctx, id) })
	if err != nil {
		s.log.Error("oidc user", "err", err)
		return Caller{}, ErrBadCredentials
	}
	if !e.ok {
		return Caller{}, ErrBadCredentials
	}
	c := e.caller
	c.Roles, c.Sysadmin = normalizeRoles(id.Roles, false)
	c.Via = "oidc"
	return c, nil
}

func (s *Service) oidcUser(ctx context.Context, id oidc.Identity) (cacheEntry, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	u, err := s.store.UserBySubject(ctx, id.Subject)
	if errors.Is(err, ErrNotFound) {
		u, err = s.provisionOIDC(ctx, id)
	}
	if err != nil {
		return cacheEntry{}, err
	}
	if u.State == StateDeleted {
		return cacheEntry{}, nil
	}
	return cacheEntry{caller: Caller{Identity: contract.Identity{UserID: u.ID, Name: u.Name}}, ok: true}, nil
}

func (s *Service) provisionOIDC(ctx context.Context, id oidc.Identity) (*User, error) {
	name := strings.ToLower(id.Username)
	if len(ValidateName(name)) > 0 {
		name = "oidc-" + hashHex(id.Subject)[:12]
	}
	email := id.Email
	if email == "" {
		email = name + "@oidc.invalid"
	}
	for attempt := 0; attempt < 2; attempt++ {
		u := &User{ID: newUUID(), Name: name, Email: email, EmailKey: "oidc:" + id.Subject,
			FirstName: id.FirstName, LastName: id.LastName, Fullname: fullName(id.FirstName, id.LastName),
			State: StateActive, Roles: []string{}, Created: now(), EmailVerified: true, Subject: id.Subject}
		err := s.store.InsertUser(ctx, u)
		if err == nil {
			s.log.Info("user provisioned from OIDC", "user", u.Name, "subject", id.Subject)
			return u, nil
		}
		if !errors.Is(err, ErrDuplicate) {
			return nil, err
		}
		if existing, err := s.store.UserBySubject(ctx, id.Subject); err == nil {
			return existing, nil // another gateway provisioned it
		}
		name = name + "-" + hashHex(id.Subject)[:6] // the name belongs to a local user
	}
	return nil, fmt.Errorf("provision OIDC user %q: name taken", id.Username)
}

// CreateToken makes a new API token for a user and returns the secret (shown
// once) and its record. ttl 0 means no expiry unless auth.token_max_ttl caps it.
func (s *Service) CreateToken(ctx context.Context, userID, name string, ttl time.Duration) (string, *Token, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", nil, &ValidationError{Fields: map[string][]string{"name": {"Missing value"}}}
	}
	if len(name) > 200 {
		return "", nil, &ValidationError{Fields: map[string][]string{"name": {"Name is longer than 200 characters"}}}
	}
	if ttl < 0 {
		return "", nil, &ValidationError{Fields: map[string][]string{"expires_in": {"Must be a natural number"}}}
	}
	secret, err := NewToken()
	if err != nil {
		return "", nil, err
	}
	h := TokenHash(secret)
	t := now()
	rec := &Token{ID: TokenID(h), Hash: hex.EncodeToString(h[:]), UserID: userID, Name: name, CreatedAt: t, ExpiresAt: s.expiry(t, ttl)}
	if err := s.store.InsertToken(ctx, rec); err != nil {
		return "", nil, err
	}
	s.log.Info("api token created", "user_id", userID, "token_id", rec.ID, "name", name)
	return secret, rec, nil
}

// expiry applies auth.token_max_ttl to a requested lifetime.
func (s *Service) expiry(t time.Time, ttl time.Duration) *time.Time {
	if max := s.cfg.TokenMaxTTL; max > 0 && (ttl == 0 || ttl > max) {
		ttl = max
	}
	if ttl == 0 {
		return nil
	}
	e := t.Add(ttl)
	return &e
}

// Tokens lists a user's live and expired (not revoked) tokens.
func (s *Service) Tokens(ctx context.Context, userID string) ([]*Token, error) {
	return s.store.TokensOf(ctx, userID)
}

// TokenFor loads a token that is not revoked and that caller may manage
// (its owner or a sysadmin); ErrNotFound otherwise.
func (s *Service) TokenFor(ctx context.Context, c Caller, tokenID string) (*Token, error) {
	t, err := s.store.TokenByID(ctx, tokenID)
	if err != nil {
		return nil, err
	}
	if t.RevokedAt != nil || (t.UserID != c.UserID && !c.Sysadmin) {
		return nil, ErrNotFound
	}
	return t, nil
}

// RenewToken gives a token a new expiry, ttl from now (0: none, within
// auth.token_max_ttl).
func (s *Service) RenewToken(ctx context.Context, c Caller, tokenID string, ttl time.Duration) (*Token, error) {
	t, err := s.TokenFor(ctx, c, tokenID)
	if err != nil {
		return nil, err
	}
	exp := s.expiry(now(), ttl)
	if err := s.store.UpdateToken(ctx, t.ID, bson.M{"expires_at": exp}); err != nil {
		return nil, err
	}
	// The store writes the whole record back: a revocation that landed
	// between this update's read and write was undone by it. A revocation
	// is recorded before it is written (RevokeToken), so it is seen here
	// and written again.
	revoked, err := s.store.happened(ctx, revokedKey(t.ID))
	if err != nil {
		return nil, err
	}
	if revoked {
		if err := s.store.SetTokenRevoked(ctx, t.ID, now()); err != nil {
			return nil, err
		}
		s.forget()
		return nil, ErrNotFound
	}
	t.ExpiresAt = exp
	s.forget()
	return t, nil
}

// RotateToken replaces a token by a new secret with the same name and the
// given lifetime; the old secret stops working at once.
func (s *Service) RotateToken(ctx context.Context, c Caller, tokenID string, ttl time.Duration) (string, *Token, error) {
	old, err := s.TokenFor(ctx, c, tokenID)
	if err != nil {
		return "", nil, err
	}
	secret, rec, err := s.CreateToken(ctx, old.UserID, old.Name, ttl)
	if err != nil {
		return "", nil, err
	}
	if err := s.RevokeToken(ctx, c, old.ID); err != nil {
		return "", nil, err
	}
	return secret, rec, nil
}

// RevokeToken revokes a token; it fails at once on this gateway and within
// auth.token_cache_ttl on every other gateway sharing the store.
func (s *Service) RevokeToken(ctx context.Context, c Caller, tokenID string) error {
	t, err := s.TokenFor(ctx, c, tokenID)
	if err != nil {
		return err
	}
	if _, err := s.store.once(ctx, revokedKey(t.ID), time.Time{}); err != nil {
		return err
	}
	if err := s.store.UpdateToken(ctx, t.ID, bson.M{"revoked_at": now()}); err != nil {
		return err
	}
	s.forget()
	s.log.Info("api token revoked", "token_id", t.ID, "by", c.Name)
	return nil
}

// touchLimiter remembers when this gateway last recorded each token's use.
type touchLimiter struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due reports whether id's use should be recorded at t (at most once per
// lastUsedEvery per gateway), and notes it.
func (l *touchLimiter) due(id string, t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil || len(l.last) > maxCacheEntries {
		l.last = map[string]time.Time{}
	}
	if at, ok := l.last[id]; ok && t.Sub(at) < lastUsedEvery {
		return false
	}
	l.last[id] = t
	return true
}

// revokedKey records (Store.once) that token id is revoked, before its
// record says so: a renewal writing the record back over the revocation
// finds it there and revokes the token again.
func revokedKey(id string) string { return "token-revoked:" + id }
