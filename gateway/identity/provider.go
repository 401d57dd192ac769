package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"
)

// ProviderTokens verifies the access tokens that toxgate's own OpenID
// Connect provider (gateway/oidcprovider) issues, so that a relying party
// (a notebook, a web tool) can call the gateway with the user's token.
type ProviderTokens interface {
	// Owns reports, without verifying anything, whether cred claims to be
	// one of the provider's tokens (its issuer is the provider's).
	Owns(cred string) bool
	// Verify checks the token (signature, expiry, not revoked) and returns
	// the id of the user it was issued to and when it expires.
	Verify(ctx context.Context, cred string) (userID string, expires time.Time, err error)
}

// SetProviderTokens makes Check accept the access tokens of p. It is called
// once while the gateway is assembled, before it serves.
func (s *Service) SetProviderTokens(p ProviderTokens) { s.provider.Store(&p) }

// providerTokens is the installed ProviderTokens, or nil.
func (s *Service) providerTokens() ProviderTokens {
	if p := s.provider.Load(); p != nil {
		return *p
	}
	return nil
}

// checkProviderToken authenticates an access token of the gateway's own
// provider: the user's current roles apply, and a user who is disabled or
// has not finished the first login is refused. The outcome is cached like an
// API token's (auth.token_cache_ttl), so a revocation reaches every gateway
// within that time.
func (s *Service) checkProviderToken(ctx context.Context, p ProviderTokens, raw string) (Caller, error) {
	h := sha256.Sum256([]byte(raw))
	t := time.Now()
	e, err := s.cache.get("provider:"+string(h[:]), t, func() (cacheEntry, error) {
		uid, exp, err := p.Verify(ctx, raw)
		if err != nil {
			s.log.Debug("provider token refused", "err", err)
			return cacheEntry{}, nil
		}
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		u, err := s.store.UserByID(lctx, uid)
		if errors.Is(err, ErrNotFound) {
			return cacheEntry{}, nil
		}
		if err != nil {
			return cacheEntry{}, err
		}
		if u.State != StateActive || !u.FirstLoginDone() {
			return cacheEntry{}, nil
		}
		return cacheEntry{caller: u.Caller("provider"), ok: true, expires: &exp}, nil
	})
	if err != nil {
		s.log.Error("provider token check failed", "err", err)
		return Caller{}, ErrBadCredentials
	}
	if !e.ok || (e.expires != nil && !t.Before(*e.expires)) {
		return Caller{}, ErrBadCredentials
	}
	return e.caller, nil
}

// ForgetCredentials drops this gateway's cached credential checks, so that
// a revocation made elsewhere in the gateway (the provider's tokens)
// applies here at once; other gateways see it within auth.token_cache_ttl.
func (s *Service) ForgetCredentials() { s.forget() }
