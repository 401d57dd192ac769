// Package oidc verifies bearer JWTs from an OpenID Connect identity provider
// (Keycloak-style): signature against the issuer's JWKS (fetched, cached,
// refetched on an unknown key id), RS256/ES256 only, iss, aud, exp and nbf.
package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Config says which tokens are accepted.
type Config struct {
	Issuer   string // required "iss"
	Audience string // required "aud"
	JWKSURL  string // empty: Issuer + "/protocol/openid-connect/certs" (Keycloak)
	// RolesClaim is the dotted path of the roles array, e.g. realm_access.roles.
	RolesClaim string
	// UserClaim holds the user name, e.g. preferred_username (falls back to sub).
	UserClaim string
	// RefreshCooldown is the least time between two JWKS fetches caused by
	// unknown key ids (default 30s).
	RefreshCooldown time.Duration
	// MaxAge is how long a fetched JWKS is used before it is fetched again (default 1h).
	MaxAge time.Duration
	// Leeway tolerates clock skew on exp and nbf (default 60s).
	Leeway time.Duration
	// HTTPClient fetches the JWKS (default: a client with a 5 s timeout).
	HTTPClient *http.Client
}

// Identity is what a verified token says about its subject.
type Identity struct {
	Subject   string
	Username  string
	Email     string
	FirstName string
	LastName  string
	Roles     []string
}

// ErrInvalid wraps every reason a token is refused.
var ErrInvalid = errors.New("oidc: invalid token")

// Verifier checks tokens against one issuer. It is safe for concurrent use.
type Verifier struct {
	cfg    Config
	parser *jwt.Parser

	mu        sync.Mutex
	keys      map[string]any
	fetched   time.Time
	attempted time.Time
	fetchMu   sync.Mutex
}

// New returns a verifier for cfg; Issuer and Audience are required.
func New(cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("oidc: issuer and audience are required")
	}
	if cfg.JWKSURL == "" {
		cfg.JWKSURL = strings.TrimRight(cfg.Issuer, "/") + "/protocol/openid-connect/certs"
	}
	if cfg.RefreshCooldown <= 0 {
		cfg.RefreshCooldown = 30 * time.Second
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = time.Hour
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = 60 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.UserClaim == "" {
		cfg.UserClaim = "preferred_username"
	}
	p := jwt.NewParser(
		jwt.WithValidMethods([]string{"RS256", "ES256"}),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(cfg.Leeway),
	)
	return &Verifier{cfg: cfg, parser: p}, nil
}

// LooksLikeJWT reports whether s has the three dot-separated parts of a JWS.
func LooksLikeJWT(s string) bool { return strings.Count(s, ".") == 2 && len(s) > 20 }

// Verify checks raw and returns the identity it carries.
func (v *Verifier) Verify(ctx context.Context, raw string) (Identity, error) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.key(ctx, kid, t.Method.Alg())
	})
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	id := Identity{Subject: str(claims["sub"]), Email: str(claims["email"]),
		FirstName: str(claims["given_name"]), LastName: str(claims["family_name"])}
	if id.Subject == "" {
		return Identity{}, fmt.Errorf("%w: no sub claim", ErrInvalid)
	}
	id.Username = str(claims[v.cfg.UserClaim])
	if id.Username == "" {
		id.Username = id.Subject
	}
	id.Roles = stringsAt(claims, v.cfg.RolesClaim)
	return id, nil
}

func str(v any) string { s, _ := v.(string); return s }

// stringsAt follows a dotted path of objects and returns the string array there.
func stringsAt(m map[string]any, path string) []string {
	if path == "" {
		return nil
	}
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[part]
	}
	list, _ := cur.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// key returns the public key for kid, fetching the JWKS when it was never
// fetched, is older than MaxAge, or lacks kid (at most once per cooldown).
func (v *Verifier) key(ctx context.Context, kid, alg string) (any, error) {
	if k, ok := v.cached(kid, false); ok {
		return checkAlg(k, alg)
	}
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	if k, ok := v.cached(kid, false); ok { // fetched while we waited
		return checkAlg(k, alg)
	}
	v.mu.Lock()
	stale := v.keys == nil || time.Since(v.fetched) > v.cfg.MaxAge
	cooling := time.Since(v.attempted) < v.cfg.RefreshCooldown
	v.mu.Unlock()
	if cooling && !stale {
		if k, ok := v.cached(kid, true); ok {
			return checkAlg(k, alg)
		}
		return nil, fmt.Errorf("unknown key id %q", kid)
	}
	if err := v.fetch(ctx); err != nil {
		if k, ok := v.cached(kid, true); ok { // keep serving the old set
			return checkAlg(k, alg)
		}
		return nil, err
	}
	if k, ok := v.cached(kid, true); ok {
		return checkAlg(k, alg)
	}
	return nil, fmt.Errorf("unknown key id %q", kid)
}

// cached returns kid's key from a set that is fresh (or any set if anyAge).
func (v *Verifier) cached(kid string, anyAge bool) (any, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.keys == nil || (!anyAge && time.Since(v.fetched) > v.cfg.MaxAge) {
		return nil, false
	}
	k, ok := v.keys[kid]
	return k, ok
}

type signingKey struct {
	alg string // the JWK's "alg", may be empty
	key any
}

func checkAlg(k any, alg string) (any, error) {
	sk := k.(signingKey)
	if sk.alg != "" && sk.alg != alg {
		return nil, fmt.Errorf("key is for %s, token uses %s", sk.alg, alg)
	}
	return sk.key, nil
}

// fetch downloads the JWKS and replaces the cached set.
func (v *Verifier) fetch(ctx context.Context) error {
	v.mu.Lock()
	v.attempted = time.Now()
	v.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.cfg.JWKSURL, nil)
	if err != nil {
		return fmt.Errorf("oidc: jwks request: %w", err)
	}
	resp, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("oidc: fetch jwks: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("oidc: fetch jwks %s: status %d", v.cfg.JWKSURL, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("oidc: read jwks: %w", err)
	}
	keys, err := parseJWKS(body)
	if err != nil {
		return err
	}
	m := make(map[string]any, len(keys))
	for kid, k := range keys {
		m[kid] = k
	}
	v.mu.Lock()
	v.keys, v.fetched = m, time.Now()
	v.mu.Unlock()
	return nil
}

type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS reads the RSA and P-256 signing keys of a JWK set, by key id.
// Keys of other types or uses are skipped.
func parseJWKS(body []byte) (map[string]signingKey, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("oidc: parse jwks: %w", err)
	}
	out := map[string]signingKey{}
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		var key any
		var err error
		switch k.Kty {
		case "RSA":
			key, err = rsaKey(k)
		case "EC":
			key, err = ecKey(k)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("oidc: jwks key %q: %w", k.Kid, err)
		}
		out[k.Kid] = signingKey{alg: k.Alg, key: key}
	}
	return out, nil
}

func rsaKey(k jwk) (*rsa.PublicKey, error) {
	n, err := base64.RawURLEncoding.DecodeString(k.N)
	if err != nil {
		return nil, fmt.Errorf("n: %w", err)
	}
	e, err := base64.RawURLEncoding.DecodeString(k.E)
	if err != nil {
		return nil, fmt.Errorf("e: %w", err)
	}
	if len(n) < 256 {
		return nil, errors.New("RSA key shorter than 2048 bits")
	}
	eInt := new(big.Int).SetBytes(e)
	if !eInt.IsInt64() || eInt.Int64() < 3 || eInt.Int64() > 1<<31 {
		return nil, errors.New("bad RSA exponent")
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(eInt.Int64())}, nil
}

func ecKey(k jwk) (*ecdsa.PublicKey, error) {
	if k.Crv != "P-256" {
		return nil, fmt.Errorf("unsupported curve %q", k.Crv)
	}
	x, err := base64.RawURLEncoding.DecodeString(k.X)
	if err != nil || len(x) != 32 {
		return nil, errors.New("bad x")
	}
	y, err := base64.RawURLEncoding.DecodeString(k.Y)
	if err != nil || len(y) != 32 {
		return nil, errors.New("bad y")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, fmt.Errorf("P-256 point: %w", err)
	}
	return pub, nil
}
