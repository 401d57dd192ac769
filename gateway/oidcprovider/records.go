package oidcprovider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Collection names of the provider's state in the store. Every gateway on
// the same store shares them: a sign-in begun on one gateway finishes on
// another, and a token signed by one verifies on all.
const (
	CollClients       = "oidc_clients"
	CollAuthRequests  = "oidc_auth_requests"
	CollAccessTokens  = "oidc_access_tokens"
	CollRefreshTokens = "oidc_refresh_tokens"
	CollKeys          = "oidc_keys"
	// CollUsed records the codes and refresh tokens used up (useOnce).
	CollUsed = "oidc_used"
)

// errNotFound is a record that does not exist (or no longer does).
var errNotFound = errors.New("not found")

// notFoundError tells the op package that a record is missing (a client's
// mistake, never a 500).
type notFoundError struct{ what string }

func (e notFoundError) Error() string { return e.what + " not found" }
func (notFoundError) IsNotFound()     {}

// authRequest is a sign-in in progress: the client's authorization request,
// then (when the user is signed in) whose it is, then its code's hash.
type authRequest struct {
	ID                  string    `bson:"_id"`
	ClientID            string    `bson:"client_id"`
	RedirectURI         string    `bson:"redirect_uri"`
	State               string    `bson:"state"`
	Nonce               string    `bson:"nonce"`
	Scopes              []string  `bson:"scopes"`
	ResponseType        string    `bson:"response_type"`
	ResponseMode        string    `bson:"response_mode"`
	CodeChallenge       string    `bson:"code_challenge,omitempty"`
	CodeChallengeMethod string    `bson:"code_challenge_method,omitempty"`
	Prompt              []string  `bson:"prompt,omitempty"`
	MaxAge              *int64    `bson:"max_age,omitempty"`
	Created             time.Time `bson:"created"`
	Expires             time.Time `bson:"expires"`
	UserID              string    `bson:"user_id,omitempty"`
	AuthTime            time.Time `bson:"auth_time,omitempty"`
	Done                bool      `bson:"done"`
	CodeHash            string    `bson:"code_hash,omitempty"`
}

// accessToken is the record of an issued access token (a JWT whose jti is
// ID): revoking it marks it here.
type accessToken struct {
	ID             string     `bson:"_id"`
	ClientID       string     `bson:"client_id"`
	UserID         string     `bson:"user_id"`
	RefreshTokenID string     `bson:"refresh_token_id,omitempty"`
	Scopes         []string   `bson:"scopes"`
	Audience       []string   `bson:"audience"`
	Created        time.Time  `bson:"created"`
	Expires        time.Time  `bson:"expires"`
	RevokedAt      *time.Time `bson:"revoked_at,omitempty"`
}

// refreshToken is an issued refresh token; _id is the SHA-256 of the
// secret, which is never stored. Each use replaces it (rotation).
type refreshToken struct {
	ID            string     `bson:"_id"`
	ClientID      string     `bson:"client_id"`
	UserID        string     `bson:"user_id"`
	Scopes        []string   `bson:"scopes"`
	Audience      []string   `bson:"audience"`
	AMR           []string   `bson:"amr"`
	AuthTime      time.Time  `bson:"auth_time"`
	Created       time.Time  `bson:"created"`
	Expires       time.Time  `bson:"expires"`
	AccessTokenID string     `bson:"access_token_id"`
	RevokedAt     *time.Time `bson:"revoked_at,omitempty"`
}

// records is the provider's collections.
type records struct {
	clients, authReqs, access, refresh, keys, used *mongo.Collection
}

func newRecords(db *mongo.Database) *records {
	return &records{clients: db.Collection(CollClients), authReqs: db.Collection(CollAuthRequests),
		access: db.Collection(CollAccessTokens), refresh: db.Collection(CollRefreshTokens), keys: db.Collection(CollKeys),
		used: db.Collection(CollUsed)}
}

// useOnce records that the secret named key (a code's or a refresh
// token's hash, with its kind) is used up, kept until expires: true the
// first time, false ever after. An insert with a unique _id is atomic on
// every store, where an update with a filter ("still unused") is a read
// and a write on the embedded one, so two redemptions at once could both
// pass it.
func (r *records) useOnce(ctx context.Context, key string, expires time.Time) (bool, error) {
	_, err := r.used.InsertOne(ctx, bson.M{"_id": key, "expires": expires})
	if mongo.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("use %s: %w", key, err)
	}
	return true, nil
}

func notFound(err error) error {
	if errors.Is(err, mongo.ErrNoDocuments) {
		return errNotFound
	}
	return err
}

// findOne decodes the document of filter into out.
func findOne(ctx context.Context, c *mongo.Collection, filter bson.M, out any) error {
	if err := c.FindOne(ctx, filter).Decode(out); err != nil {
		return fmt.Errorf("load %s: %w", c.Name(), notFound(err))
	}
	return nil
}

// insert stores a new document.
func insert(ctx context.Context, c *mongo.Collection, doc any) error {
	if _, err := c.InsertOne(ctx, doc); err != nil {
		return fmt.Errorf("insert into %s: %w", c.Name(), err)
	}
	return nil
}

// update sets fields of the document matching filter; errNotFound if none.
func update(ctx context.Context, c *mongo.Collection, filter, set bson.M) error {
	res, err := c.UpdateOne(ctx, filter, bson.M{"$set": set})
	if err != nil {
		return fmt.Errorf("update %s: %w", c.Name(), err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("update %s: %w", c.Name(), errNotFound)
	}
	return nil
}

// prune deletes the expired sign-ins and tokens (run now and then).
func (r *records) prune(ctx context.Context, t time.Time) error {
	var errs []error
	for _, c := range []*mongo.Collection{r.authReqs, r.access, r.refresh, r.used} {
		if _, err := c.DeleteMany(ctx, bson.M{"expires": bson.M{"$lt": t}}); err != nil {
			errs = append(errs, fmt.Errorf("prune %s: %w", c.Name(), err))
		}
	}
	return errors.Join(errs...)
}
