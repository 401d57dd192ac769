package oidcprovider

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Limits of a client registration.
const (
	maxRedirectURIs   = 20
	maxURIBytes       = 2000
	maxClientRoles    = 20
	maxClientNameLen  = 64
	clientSecretBytes = 32
)

// clientIDRE is a client id: the client's name, lowercase letters, digits,
// - and _ (it appears in configurations, URLs and logs as it is).
var clientIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{1,63}$`)

// Client is a registered relying party. Its secret is never stored, only
// its SHA-256 (a secret is 256 random bits, so a fast hash is enough).
type Client struct {
	ID                     string   `bson:"_id" json:"client_id"`
	Public                 bool     `bson:"public" json:"public"`
	SecretHash             string   `bson:"secret_hash,omitempty" json:"-"`
	RedirectURIs           []string `bson:"redirect_uris" json:"redirect_uris"`
	PostLogoutRedirectURIs []string `bson:"post_logout_redirect_uris" json:"post_logout_redirect_uris"`
	// Roles: a user needs one of them to sign in to this client (empty: any user).
	Roles     []string  `bson:"roles" json:"roles"`
	Created   time.Time `bson:"created" json:"created"`
	CreatedBy string    `bson:"created_by" json:"created_by"`
}

// NewClient is what a sysadmin gives to register a client.
type NewClient struct {
	Name                   string   `json:"name"`
	RedirectURIs           []string `json:"redirect_uris"`
	PostLogoutRedirectURIs []string `json:"post_logout_redirect_uris"`
	Public                 bool     `json:"public"`
	Roles                  []string `json:"roles"`
}

// ValidationError says which field of a registration is wrong.
type ValidationError struct {
	Field, Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

// ErrClientExists: a client of that name is registered already.
var ErrClientExists = errors.New("a client of that name exists")

// ErrTooManyClients: oidc_provider.max_clients are registered.
var ErrTooManyClients = errors.New("too many clients (oidc_provider.max_clients)")

// ErrNoClient: no client of that id.
var ErrNoClient = errors.New("no such client")

// validate checks a registration; knownRoles are the gateway's roles.
func (in *NewClient) validate(knownRoles []string) error {
	in.Name = strings.TrimSpace(in.Name)
	if !clientIDRE.MatchString(in.Name) {
		return &ValidationError{"name", fmt.Sprintf("must be 2 to %d lowercase letters, digits, - or _ (it is the client_id)", maxClientNameLen)}
	}
	if len(in.RedirectURIs) == 0 {
		return &ValidationError{"redirect_uris", "at least one redirect URI is required"}
	}
	for field, uris := range map[string][]string{"redirect_uris": in.RedirectURIs, "post_logout_redirect_uris": in.PostLogoutRedirectURIs} {
		if len(uris) > maxRedirectURIs {
			return &ValidationError{field, fmt.Sprintf("at most %d URIs", maxRedirectURIs)}
		}
		for _, u := range uris {
			if msg := checkRedirectURI(u, in.Public); msg != "" {
				return &ValidationError{field, fmt.Sprintf("%q: %s", truncate(u, 200), msg)}
			}
		}
	}
	if len(in.Roles) > maxClientRoles {
		return &ValidationError{"roles", fmt.Sprintf("at most %d roles", maxClientRoles)}
	}
	for _, r := range in.Roles {
		if !slices.Contains(knownRoles, r) {
			return &ValidationError{"roles", fmt.Sprintf("unknown role %q (known: %s)", truncate(r, 100), strings.Join(knownRoles, ", "))}
		}
	}
	slices.Sort(in.Roles)
	in.Roles = slices.Compact(in.Roles)
	return nil
}

// checkRedirectURI returns why u cannot be a redirect URI, or "".
func checkRedirectURI(u string, public bool) string {
	if len(u) > maxURIBytes {
		return fmt.Sprintf("longer than %d bytes", maxURIBytes)
	}
	p, err := url.Parse(u)
	if err != nil || !p.IsAbs() || p.Host == "" && (p.Scheme == "http" || p.Scheme == "https") {
		return "not an absolute URI"
	}
	if p.Fragment != "" || strings.Contains(u, "#") {
		return "must not have a fragment"
	}
	if strings.ContainsAny(u, "*") {
		return "must not contain wildcards"
	}
	if p.Scheme != "http" && p.Scheme != "https" && !public {
		return "a confidential client's redirect URI must be http or https"
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// clients is the client registry in the store.
type clients struct {
	coll *mongo.Collection
	max  int
}

// create registers a client and returns it with its secret (empty for a
// public client), which is shown once.
func (c *clients) create(ctx context.Context, in NewClient, knownRoles []string, by string) (*Client, string, error) {
	if err := in.validate(knownRoles); err != nil {
		return nil, "", err
	}
	n, err := c.coll.CountDocuments(ctx, bson.M{})
	if err != nil {
		return nil, "", fmt.Errorf("count clients: %w", err)
	}
	if int(n) >= c.max {
		return nil, "", ErrTooManyClients
	}
	cl := &Client{ID: in.Name, Public: in.Public, RedirectURIs: in.RedirectURIs, PostLogoutRedirectURIs: in.PostLogoutRedirectURIs,
		Roles: in.Roles, Created: time.Now().UTC().Truncate(time.Millisecond), CreatedBy: by}
	if cl.PostLogoutRedirectURIs == nil {
		cl.PostLogoutRedirectURIs = []string{}
	}
	if cl.Roles == nil {
		cl.Roles = []string{}
	}
	secret := ""
	if !in.Public {
		b := make([]byte, clientSecretBytes)
		if _, err := rand.Read(b); err != nil {
			return nil, "", fmt.Errorf("client secret: %w", err)
		}
		secret = base64.RawURLEncoding.EncodeToString(b)
		cl.SecretHash = secretHash(secret)
	}
	if _, err := c.coll.InsertOne(ctx, cl); err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return nil, "", ErrClientExists
		}
		return nil, "", fmt.Errorf("insert client: %w", err)
	}
	return cl, secret, nil
}

// get loads a client; ErrNoClient when unknown.
func (c *clients) get(ctx context.Context, id string) (*Client, error) {
	if !clientIDRE.MatchString(id) {
		return nil, ErrNoClient
	}
	var cl Client
	if err := c.coll.FindOne(ctx, bson.M{"_id": id}).Decode(&cl); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, ErrNoClient
		}
		return nil, fmt.Errorf("load client: %w", err)
	}
	return &cl, nil
}

// list returns every client, by id.
func (c *clients) list(ctx context.Context) ([]*Client, error) {
	cur, err := c.coll.Find(ctx, bson.M{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	out := []*Client{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	return out, nil
}

// remove deletes a client; ErrNoClient when unknown.
func (c *clients) remove(ctx context.Context, id string) error {
	res, err := c.coll.DeleteOne(ctx, bson.M{"_id": id})
	if err != nil {
		return fmt.Errorf("delete client: %w", err)
	}
	if res.DeletedCount == 0 {
		return ErrNoClient
	}
	return nil
}

func secretHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// checkSecret compares a presented secret with the stored hash in constant time.
func (cl *Client) checkSecret(secret string) bool {
	if cl.Public || cl.SecretHash == "" || secret == "" || len(secret) > 512 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(secretHash(secret)), []byte(cl.SecretHash)) == 1
}

// allows reports whether a user with roles (sysadmin: every role) may sign
// in to the client.
func (cl *Client) allows(roles []string, sysadmin bool) bool {
	if len(cl.Roles) == 0 || sysadmin {
		return true
	}
	for _, r := range cl.Roles {
		if slices.Contains(roles, r) {
			return true
		}
	}
	return false
}

// opClient is a Client as the op package sees it.
type opClient struct {
	*Client
	loginURL   func(authRequestID string) string
	idTokenTTL time.Duration
}

// extraScopes are the scopes beyond OpenID Connect's own that a client may ask for.
var extraScopes = []string{"groups", "roles"}

func (c opClient) GetID() string                    { return c.ID }
func (c opClient) RedirectURIs() []string           { return c.Client.RedirectURIs }
func (c opClient) PostLogoutRedirectURIs() []string { return c.Client.PostLogoutRedirectURIs }
func (c opClient) LoginURL(id string) string        { return c.loginURL(id) }
func (c opClient) AccessTokenType() op.AccessTokenType {
	return op.AccessTokenTypeJWT
}
func (c opClient) IDTokenLifetime() time.Duration { return c.idTokenTTL }
func (c opClient) DevMode() bool                  { return false }
func (c opClient) ClockSkew() time.Duration       { return 0 }

// IDTokenUserinfoClaimsAssertion puts the user's claims (name, e-mail,
// groups) into the ID token, where relying parties such as oauth2-proxy
// read them.
func (c opClient) IDTokenUserinfoClaimsAssertion() bool { return true }

func (c opClient) IsScopeAllowed(scope string) bool { return slices.Contains(extraScopes, scope) }

func (c opClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (c opClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (c opClient) ApplicationType() op.ApplicationType {
	if c.Public {
		return op.ApplicationTypeNative
	}
	return op.ApplicationTypeWeb
}

func (c opClient) AuthMethod() oidc.AuthMethod {
	if c.Public {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}

func (c opClient) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}

func (c opClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}
