package oidcprovider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// maxTokenBytes bounds a bearer token the gateway looks into.
const maxTokenBytes = 8 << 10

// keySet verifies signatures against the store's published keys; a key id
// this gateway does not know yet (made by another gateway) reloads them.
type keySet struct{ r *keyring }

// VerifySignature implements oidc.KeySet.
func (k keySet) VerifySignature(ctx context.Context, jws *jose.JSONWebSignature) ([]byte, error) {
	if len(jws.Signatures) != 1 {
		return nil, errors.New("want exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	if jws.Signatures[0].Header.Algorithm != string(jose.RS256) {
		return nil, fmt.Errorf("algorithm %q is not RS256", jws.Signatures[0].Header.Algorithm)
	}
	for _, force := range []bool{false, true} {
		keys, err := k.r.snapshot(ctx, force)
		if err != nil {
			return nil, err
		}
		t := time.Now()
		for _, key := range keys {
			if key.doc.ID == kid && key.published(t) {
				return jws.Verify(&key.priv.PublicKey)
			}
		}
	}
	return nil, fmt.Errorf("unknown key id %q", kid)
}

// Owns reports whether raw is a JWT whose (unverified) issuer is this
// provider's (identity.ProviderTokens).
func (p *Provider) Owns(raw string) bool {
	if len(raw) > maxTokenBytes {
		return false
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var c struct {
		Iss string `json:"iss"`
	}
	return json.Unmarshal(payload, &c) == nil && c.Iss == p.issuer
}

// Verify checks an access token of this provider: signature by a published
// key, issuer, expiry, and its record (not revoked), and returns its user
// (identity.ProviderTokens).
func (p *Provider) Verify(ctx context.Context, raw string) (string, time.Time, error) {
	if len(raw) > maxTokenBytes {
		return "", time.Time{}, errors.New("token too long")
	}
	v := op.NewAccessTokenVerifier(p.issuer, keySet{p.st.keys})
	claims, err := op.VerifyAccessToken[*oidc.AccessTokenClaims](ctx, raw, v)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("access token: %w", err)
	}
	at, err := p.st.liveAccess(ctx, claims.JWTID)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("access token %s: revoked, expired or unknown: %w", claims.JWTID, err)
	}
	if at.UserID != claims.Subject {
		return "", time.Time{}, errors.New("access token: subject does not match its record")
	}
	return at.UserID, at.Expires, nil
}
