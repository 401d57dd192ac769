package oidcprovider

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Kinds of documents in the keys collection.
const (
	kindSigning = "signing"
	kindCrypto  = "crypto"
	cryptoDocID = "crypto"
)

// rsaBits is the size of the RSA signing keys (RS256, which every relying
// party supports and OpenID Connect requires).
const rsaBits = 2048

// keyReloadEvery is how long this gateway uses its copy of the key set
// before reading the store again (so a key made by another gateway is
// published here within it); an unknown key id reloads at once, at most
// once per keyReloadCooldown.
const (
	keyReloadEvery    = 30 * time.Second
	keyReloadCooldown = time.Second
)

// keyDoc is a signing key in the store. SignsUntil ends its signing
// (rotation); PublishUntil, later by the longest token lifetime, ends its
// publication in the JWKS, when no token it signed can still be valid.
type keyDoc struct {
	ID           string    `bson:"_id"`
	Kind         string    `bson:"kind"`
	Alg          string    `bson:"alg,omitempty"`
	Private      []byte    `bson:"private,omitempty"` // PKCS#8 DER
	Secret       []byte    `bson:"secret,omitempty"`  // the crypto key (codes)
	Created      time.Time `bson:"created"`
	SignsUntil   time.Time `bson:"signs_until,omitempty"`
	PublishUntil time.Time `bson:"publish_until,omitempty"`
}

// signingKey is a parsed key: op.SigningKey (private) and op.Key (public).
type signingKey struct {
	doc  keyDoc
	priv *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) ID() string                                  { return k.doc.ID }

// Key is the private key (op.SigningKey).
func (k *signingKey) Key() any { return k.priv }

// publicKey is a published key (op.Key).
type publicKey struct{ k *signingKey }

func (p publicKey) ID() string                         { return p.k.doc.ID }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return &p.k.priv.PublicKey }

// signs reports whether k signs new tokens at t.
func (k *signingKey) signs(t time.Time) bool { return t.Before(k.doc.SignsUntil) }

// published reports whether k is in the JWKS at t.
func (k *signingKey) published(t time.Time) bool { return t.Before(k.doc.PublishUntil) }

func newestFirst(a, b *signingKey) int { return b.doc.Created.Compare(a.doc.Created) }

// keyring is the provider's signing keys, kept in the store so that every
// gateway signs with the same keys and publishes all of them: a new key is
// made when the newest stops signing (oidc_provider.key_rotation) or on
// Rotate, and an old key stays published until the tokens it signed have
// expired.
type keyring struct {
	coll     *mongo.Collection
	rotation time.Duration // how long a key signs
	overlap  time.Duration // the longest lifetime of a signed token
	log      *slog.Logger

	mu       sync.Mutex
	keys     []*signingKey // newest first
	loaded   time.Time
	genMu    sync.Mutex // one key generation at a time on this gateway
	reloadMu sync.Mutex
}

func newKeyring(coll *mongo.Collection, rotation, overlap time.Duration, log *slog.Logger) *keyring {
	return &keyring{coll: coll, rotation: rotation, overlap: overlap + time.Minute, log: log}
}

// load reads the signing keys that are still published.
func (r *keyring) load(ctx context.Context, t time.Time) error {
	cur, err := r.coll.Find(ctx, bson.M{"kind": kindSigning, "publish_until": bson.M{"$gt": t}})
	if err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	var docs []keyDoc
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	keys := make([]*signingKey, 0, len(docs))
	for _, d := range docs {
		pk, err := x509.ParsePKCS8PrivateKey(d.Private)
		if err != nil {
			r.log.Error("oidc provider: unreadable signing key skipped", "kid", d.ID, "err", err)
			continue
		}
		rk, ok := pk.(*rsa.PrivateKey)
		if !ok {
			continue
		}
		keys = append(keys, &signingKey{doc: d, priv: rk})
	}
	slices.SortFunc(keys, newestFirst)
	r.mu.Lock()
	r.keys, r.loaded = keys, t
	r.mu.Unlock()
	return nil
}

// snapshot returns the cached keys, reloading them when older than
// keyReloadEvery (or force and older than keyReloadCooldown).
func (r *keyring) snapshot(ctx context.Context, force bool) ([]*signingKey, error) {
	t := time.Now()
	r.mu.Lock()
	keys, age := r.keys, t.Sub(r.loaded)
	r.mu.Unlock()
	if age < keyReloadEvery && !(force && age >= keyReloadCooldown) && !r.loaded.IsZero() {
		return keys, nil
	}
	r.reloadMu.Lock()
	defer r.reloadMu.Unlock()
	r.mu.Lock()
	keys, age = r.keys, time.Since(r.loaded)
	r.mu.Unlock()
	if !r.loaded.IsZero() && age < keyReloadCooldown {
		return keys, nil // reloaded while we waited
	}
	if err := r.load(ctx, t); err != nil {
		if keys != nil {
			r.log.Warn("oidc provider: keep the cached keys", "err", err)
			return keys, nil
		}
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys, nil
}

// signer returns the key that signs now, making one when none does.
func (r *keyring) signer(ctx context.Context) (*signingKey, error) {
	keys, err := r.snapshot(ctx, false)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	for _, k := range keys {
		if k.signs(t) {
			return k, nil
		}
	}
	r.genMu.Lock()
	defer r.genMu.Unlock()
	if keys, err = r.snapshot(ctx, true); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.signs(t) {
			return k, nil
		}
	}
	return r.generate(ctx)
}

// generate makes, stores and returns a new signing key.
func (r *keyring) generate(ctx context.Context) (*signingKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, rsaBits)
	if err != nil {
		return nil, fmt.Errorf("generate signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode signing key: %w", err)
	}
	id := make([]byte, 12)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("key id: %w", err)
	}
	t := time.Now().UTC().Truncate(time.Millisecond)
	until := t.Add(r.rotation)
	d := keyDoc{ID: hex.EncodeToString(id), Kind: kindSigning, Alg: string(jose.RS256), Private: der,
		Created: t, SignsUntil: until, PublishUntil: until.Add(r.overlap)}
	if _, err := r.coll.InsertOne(ctx, d); err != nil {
		return nil, fmt.Errorf("store signing key: %w", err)
	}
	r.log.Info("oidc provider: new signing key", "kid", d.ID, "signs_until", d.SignsUntil)
	if err := r.load(ctx, time.Now()); err != nil {
		return nil, err
	}
	return &signingKey{doc: d, priv: priv}, nil
}

// published returns the keys of the JWKS.
func (r *keyring) published(ctx context.Context) ([]*signingKey, error) {
	keys, err := r.snapshot(ctx, false)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	out := make([]*signingKey, 0, len(keys))
	for _, k := range keys {
		if k.published(t) {
			out = append(out, k)
		}
	}
	return out, nil
}

// Rotate ends the signing of every current key (each stays published until
// the tokens it signed have expired) and makes a new key, which signs from
// now on on every gateway (on the others within keyReloadEvery).
func (r *keyring) rotate(ctx context.Context) (*signingKey, error) {
	r.genMu.Lock()
	defer r.genMu.Unlock()
	t := time.Now().UTC().Truncate(time.Millisecond)
	_, err := r.coll.UpdateMany(ctx, bson.M{"kind": kindSigning, "signs_until": bson.M{"$gt": t}},
		bson.M{"$set": bson.M{"signs_until": t, "publish_until": t.Add(r.overlap)}})
	if err != nil {
		return nil, fmt.Errorf("retire signing keys: %w", err)
	}
	return r.generate(ctx)
}

// cryptoKey returns the store's 32-byte key for the provider's encrypted
// authorization codes, making it on first use (shared by every gateway, so
// a code made by one is redeemed at another).
func cryptoKey(ctx context.Context, coll *mongo.Collection) ([32]byte, error) {
	var out [32]byte
	var d keyDoc
	err := coll.FindOne(ctx, bson.M{"_id": cryptoDocID}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return out, fmt.Errorf("crypto key: %w", err)
		}
		_, err = coll.InsertOne(ctx, keyDoc{ID: cryptoDocID, Kind: kindCrypto, Secret: secret, Created: time.Now().UTC()})
		if err != nil && !mongo.IsDuplicateKeyError(err) {
			return out, fmt.Errorf("store crypto key: %w", err)
		}
		err = coll.FindOne(ctx, bson.M{"_id": cryptoDocID}).Decode(&d) // ours, or another gateway's
	}
	if err != nil {
		return out, fmt.Errorf("load crypto key: %w", err)
	}
	if len(d.Secret) != 32 {
		return out, fmt.Errorf("crypto key in %s has %d bytes, want 32", coll.Name(), len(d.Secret))
	}
	copy(out[:], d.Secret)
	return out, nil
}
