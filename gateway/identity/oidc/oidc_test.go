package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// idp is a loopback identity provider serving a JWKS.
type idp struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []map[string]string
	fetches atomic.Int32
}

func newIDP(t testing.TB) *idp {
	p := &idp{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": p.keys})
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (p *idp) addRSA(kid string, k *rsa.PublicKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())})
}

func (p *idp) addEC(kid string, k *ecdsa.PublicKey) {
	b, _ := k.Bytes() // 0x04 || X || Y
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, map[string]string{"kty": "EC", "kid": kid, "use": "sig", "crv": "P-256",
		"x": b64(b[1:33]), "y": b64(b[33:])})
}

const issuer = "https://kc.example/realms/tox"

func claims(mod func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{
		"iss": issuer, "aud": []string{"toxgate", "account"}, "sub": "f3c1-sub", "exp": time.Now().Add(5 * time.Minute).Unix(),
		"iat": time.Now().Unix(), "preferred_username": "jdoe", "email": "jdoe@example.org",
		"realm_access": map[string]any{"roles": []string{"models", "offline_access"}},
	}
	if mod != nil {
		mod(c)
	}
	return c
}

func sign(t testing.TB, method jwt.SigningMethod, kid string, key any, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func verifier(t *testing.T, p *idp, cooldown time.Duration) *Verifier {
	v, err := New(Config{Issuer: issuer, Audience: "toxgate", JWKSURL: p.srv.URL, RolesClaim: "realm_access.roles",
		UserClaim: "preferred_username", RefreshCooldown: cooldown})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyRS256AndES256(t *testing.T) {
	p := newIDP(t)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p.addRSA("rsa1", &rk.PublicKey)
	p.addEC("ec1", &ek.PublicKey)
	v := verifier(t, p, time.Hour)
	for _, tc := range []struct {
		name string
		raw  string
	}{
		{"RS256", sign(t, jwt.SigningMethodRS256, "rsa1", rk, claims(nil))},
		{"ES256", sign(t, jwt.SigningMethodES256, "ec1", ek, claims(nil))},
	} {
		id, err := v.Verify(context.Background(), tc.raw)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if id.Username != "jdoe" || id.Subject != "f3c1-sub" || !slices.Equal(id.Roles, []string{"models", "offline_access"}) {
			t.Fatalf("%s: identity %+v", tc.name, id)
		}
	}
	if n := p.fetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times for two tokens; want 1 (cached)", n)
	}
}

func TestVerifyRefuses(t *testing.T) {
	p := newIDP(t)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	p.addRSA("rsa1", &rk.PublicKey)
	v := verifier(t, p, time.Hour)
	hsKey := []byte("a shared secret that an attacker might guess!!")
	cases := map[string]string{
		"wrong issuer":   sign(t, jwt.SigningMethodRS256, "rsa1", rk, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })),
		"wrong audience": sign(t, jwt.SigningMethodRS256, "rsa1", rk, claims(func(c jwt.MapClaims) { c["aud"] = "account" })),
		"expired": sign(t, jwt.SigningMethodRS256, "rsa1", rk, claims(func(c jwt.MapClaims) {
			c["exp"] = time.Now().Add(-2 * time.Hour).Unix()
		})),
		"no exp":          sign(t, jwt.SigningMethodRS256, "rsa1", rk, claims(func(c jwt.MapClaims) { delete(c, "exp") })),
		"not yet valid":   sign(t, jwt.SigningMethodRS256, "rsa1", rk, claims(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() })),
		"foreign key":     sign(t, jwt.SigningMethodRS256, "rsa1", other, claims(nil)),
		"HS256":           sign(t, jwt.SigningMethodHS256, "rsa1", hsKey, claims(nil)),
		"alg none":        sign(t, jwt.SigningMethodNone, "rsa1", jwt.UnsafeAllowNoneSignatureType, claims(nil)),
		"RS384":           sign(t, jwt.SigningMethodRS384, "rsa1", rk, claims(nil)),
		"garbage":         "aaa.bbb.ccc",
		"no subject":      sign(t, jwt.SigningMethodRS256, "rsa1", rk, claims(func(c jwt.MapClaims) { delete(c, "sub") })),
		"unknown key id":  sign(t, jwt.SigningMethodRS256, "nope", rk, claims(nil)),
		"tampered claims": tamper(sign(t, jwt.SigningMethodRS256, "rsa1", rk, claims(nil))),
	}
	for name, raw := range cases {
		if _, err := v.Verify(context.Background(), raw); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// tamper swaps the payload for one with other roles, keeping the signature.
func tamper(raw string) string {
	parts := splitDots(raw)
	payload, _ := json.Marshal(claims(func(c jwt.MapClaims) { c["realm_access"] = map[string]any{"roles": []string{"sysadmin"}} }))
	return parts[0] + "." + b64(payload) + "." + parts[2]
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func TestUnknownKeyIDRefetchesJWKS(t *testing.T) {
	p := newIDP(t)
	k1, _ := rsa.GenerateKey(rand.Reader, 2048)
	p.addRSA("k1", &k1.PublicKey)
	v := verifier(t, p, time.Nanosecond) // no cooldown to speak of: every unknown kid may refetch
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "k1", k1, claims(nil))); err != nil {
		t.Fatal(err)
	}
	// The provider rotates to a new key; a token signed with it arrives.
	k2, _ := rsa.GenerateKey(rand.Reader, 2048)
	p.addRSA("k2", &k2.PublicKey)
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "k2", k2, claims(nil))); err != nil {
		t.Fatalf("token with the rotated key: %v", err)
	}
	if n := p.fetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", n)
	}
}

func TestUnknownKeyIDCooldownLimitsFetches(t *testing.T) {
	p := newIDP(t)
	k1, _ := rsa.GenerateKey(rand.Reader, 2048)
	p.addRSA("k1", &k1.PublicKey)
	v := verifier(t, p, time.Hour)
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "k1", k1, claims(nil))); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "bogus", k1, claims(nil)))
		}()
	}
	wg.Wait()
	if n := p.fetches.Load(); n != 1 {
		t.Fatalf("20 tokens with an unknown kid caused %d fetches within the cooldown; want 1 in all", n)
	}
}

func BenchmarkVerifyRS256(b *testing.B) {
	p := newIDP(b)
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	p.addRSA("k", &k.PublicKey)
	v, _ := New(Config{Issuer: issuer, Audience: "toxgate", JWKSURL: p.srv.URL})
	raw := sign(b, jwt.SigningMethodRS256, "k", k, claims(nil))
	b.ResetTimer()
	for b.Loop() {
		if _, err := v.Verify(context.Background(), raw); err != nil {
			b.Fatal(err)
		}
	}
}
