package oidcprovider

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"toxgate/gateway/config"
	"toxgate/gateway/identity"
)

// Bounds of an authorization request's parameters (the whole query is
// bounded by oidc_provider.max_request_bytes before it is parsed).
const (
	maxStateBytes     = 2048
	maxNonceBytes     = 512
	maxScopes         = 20
	maxScopeBytes     = 100
	maxChallengeBytes = 128
)

// RefreshTokenPrefix starts every refresh token, so that secret scanners
// recognise a leaked one.
const RefreshTokenPrefix = "tgr_"

// storage is op.Storage on the gateway's store: clients, sign-ins, tokens
// and keys in the provider's collections, users in the identity store.
type storage struct {
	rec      *records
	clients  *clients
	keys     *keyring
	users    *identity.Store
	cfg      config.OIDCProvider
	loginURL func(authRequestID string) string
	// forget drops the gateway's cached credential checks after a
	// revocation (identity.Service.ForgetCredentials).
	forget func()
	log    *slog.Logger
}

var (
	_ op.Storage                        = (*storage)(nil)
	_ op.CanSetUserinfoFromRequest      = (*storage)(nil)
	_ op.CanTerminateSessionFromRequest = (*storage)(nil)
)

func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// randomID returns n random bytes in hex.
func randomID(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// CreateAuthRequest stores a validated authorization request.
func (s *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	switch {
	case len(req.State) > maxStateBytes:
		return nil, oidc.ErrInvalidRequest().WithDescription("state is longer than %d bytes", maxStateBytes)
	case len(req.Nonce) > maxNonceBytes:
		return nil, oidc.ErrInvalidRequest().WithDescription("nonce is longer than %d bytes", maxNonceBytes)
	case len(req.Scopes) > maxScopes:
		return nil, oidc.ErrInvalidScope().WithDescription("more than %d scopes", maxScopes)
	case len(req.CodeChallenge) > maxChallengeBytes:
		return nil, oidc.ErrInvalidRequest().WithDescription("code_challenge is longer than %d bytes", maxChallengeBytes)
	}
	for _, sc := range req.Scopes {
		if len(sc) > maxScopeBytes {
			return nil, oidc.ErrInvalidScope().WithDescription("a scope is longer than %d bytes", maxScopeBytes)
		}
	}
	id, err := randomID(16)
	if err != nil {
		return nil, err
	}
	t := now()
	a := &authRequest{ID: id, ClientID: req.ClientID, RedirectURI: req.RedirectURI, State: req.State, Nonce: req.Nonce,
		Scopes: req.Scopes, ResponseType: string(req.ResponseType), ResponseMode: string(req.ResponseMode),
		CodeChallenge: req.CodeChallenge, CodeChallengeMethod: string(req.CodeChallengeMethod), Prompt: req.Prompt,
		Created: t, Expires: t.Add(s.cfg.AuthRequestTTL)}
	if req.MaxAge != nil {
		v := int64(*req.MaxAge)
		a.MaxAge = &v
	}
	if a.Scopes == nil {
		a.Scopes = []string{}
	}
	if err := insert(ctx, s.rec.authReqs, a); err != nil {
		return nil, err
	}
	return opAuthRequest{a}, nil
}

// authRequest loads a sign-in that has not expired.
func (s *storage) authRequest(ctx context.Context, id string) (*authRequest, error) {
	if len(id) != 32 {
		return nil, notFoundError{"sign-in request"}
	}
	var a authRequest
	err := findOne(ctx, s.rec.authReqs, bson.M{"_id": id, "expires": bson.M{"$gt": now()}}, &a)
	if errors.Is(err, errNotFound) {
		return nil, notFoundError{"sign-in request"}
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// AuthRequestByID loads a sign-in.
func (s *storage) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	a, err := s.authRequest(ctx, id)
	if err != nil {
		return nil, err
	}
	return opAuthRequest{a}, nil
}

// AuthRequestByCode redeems a code: it works once, whatever number of
// redemptions run at once (useOnce).
func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	if code == "" || len(code) > 1024 {
		return nil, notFoundError{"code"}
	}
	var a authRequest
	h := hashHex(code)
	err := s.rec.authReqs.FindOne(ctx, bson.M{"code_hash": h, "done": true, "expires": bson.M{"$gt": now()}}).Decode(&a)
	if err != nil {
		if errors.Is(notFound(err), errNotFound) {
			return nil, notFoundError{"code"}
		}
		return nil, fmt.Errorf("redeem code: %w", err)
	}
	first, err := s.rec.useOnce(ctx, "code:"+h, a.Expires)
	if err != nil {
		return nil, fmt.Errorf("redeem code: %w", err)
	}
	if !first {
		return nil, notFoundError{"code"}
	}
	if err := update(ctx, s.rec.authReqs, bson.M{"_id": a.ID}, bson.M{"code_hash": "redeemed"}); err != nil && !errors.Is(err, errNotFound) {
		return nil, fmt.Errorf("redeem code: %w", err)
	}
	return opAuthRequest{&a}, nil
}

// SaveAuthCode records the hash of a sign-in's code.
func (s *storage) SaveAuthCode(ctx context.Context, id, code string) error {
	return update(ctx, s.rec.authReqs, bson.M{"_id": id, "done": true}, bson.M{"code_hash": hashHex(code)})
}

// DeleteAuthRequest removes a sign-in.
func (s *storage) DeleteAuthRequest(ctx context.Context, id string) error {
	if _, err := s.rec.authReqs.DeleteOne(ctx, bson.M{"_id": id}); err != nil {
		return fmt.Errorf("delete sign-in: %w", err)
	}
	return nil
}

// completeAuthRequest marks a sign-in as done by userID, authenticated at authTime.
func (s *storage) completeAuthRequest(ctx context.Context, id, userID string, authTime time.Time) error {
	return update(ctx, s.rec.authReqs, bson.M{"_id": id, "expires": bson.M{"$gt": now()}},
		bson.M{"user_id": userID, "auth_time": authTime, "done": true})
}

// clientOf is the client id of a token request.
func clientOf(req op.TokenRequest) string {
	switch r := req.(type) {
	case opAuthRequest:
		return r.ClientID
	case refreshRequest:
		return r.ClientID
	case interface{ GetClientID() string }:
		return r.GetClientID()
	}
	return ""
}

// newAccessToken stores the record of a new access token.
func (s *storage) newAccessToken(ctx context.Context, req op.TokenRequest, refreshID string) (*accessToken, error) {
	id, err := randomID(16)
	if err != nil {
		return nil, err
	}
	t := now()
	at := &accessToken{ID: id, ClientID: clientOf(req), UserID: req.GetSubject(), RefreshTokenID: refreshID,
		Scopes: req.GetScopes(), Audience: req.GetAudience(), Created: t, Expires: t.Add(s.cfg.AccessTokenTTL)}
	if err := insert(ctx, s.rec.access, at); err != nil {
		return nil, err
	}
	return at, nil
}

// CreateAccessToken issues an access token without a refresh token.
func (s *storage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	at, err := s.newAccessToken(ctx, req, "")
	if err != nil {
		return "", time.Time{}, err
	}
	return at.ID, at.Expires, nil
}

// CreateAccessAndRefreshTokens issues an access token and a refresh token;
// with currentRefreshToken (a refresh grant) that token is used up at once
// (rotation, useOnce), so a second use of it fails, even one at the same
// moment.
func (s *storage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	amr, authTime := []string{"pwd"}, now()
	switch r := req.(type) {
	case opAuthRequest:
		amr, authTime = r.GetAMR(), r.AuthTime
	case refreshRequest:
		amr, authTime = r.AMR, r.AuthTime
	}
	if current != "" {
		// only a live token is used up: an unknown one records nothing,
		// so that guesses add nothing to the store
		invalid := oidc.ErrInvalidGrant().WithDescription("the refresh token is unknown, used, revoked or expired")
		id := hashHex(current)
		var live refreshToken
		err := s.rec.refresh.FindOne(ctx, bson.M{"_id": id, "revoked_at": nil, "expires": bson.M{"$gt": now()}}).Decode(&live)
		if errors.Is(notFound(err), errNotFound) {
			return "", "", time.Time{}, invalid
		}
		if err != nil {
			return "", "", time.Time{}, fmt.Errorf("use refresh token: %w", err)
		}
		first, err := s.rec.useOnce(ctx, "refresh:"+id, live.Expires)
		if err != nil {
			return "", "", time.Time{}, fmt.Errorf("use refresh token: %w", err)
		}
		if !first {
			return "", "", time.Time{}, invalid
		}
		if _, err := s.rec.refresh.UpdateOne(ctx, bson.M{"_id": id}, bson.M{"$set": bson.M{"revoked_at": now()}}); err != nil {
			return "", "", time.Time{}, fmt.Errorf("use refresh token: %w", err)
		}
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", "", time.Time{}, fmt.Errorf("refresh token: %w", err)
	}
	token := RefreshTokenPrefix + base64.RawURLEncoding.EncodeToString(secret)
	rid := hashHex(token)
	at, err := s.newAccessToken(ctx, req, rid)
	if err != nil {
		return "", "", time.Time{}, err
	}
	t := now()
	rt := &refreshToken{ID: rid, ClientID: at.ClientID, UserID: at.UserID, Scopes: at.Scopes, Audience: at.Audience,
		AMR: amr, AuthTime: authTime, Created: t, Expires: t.Add(s.cfg.RefreshTokenTTL), AccessTokenID: at.ID}
	if err := insert(ctx, s.rec.refresh, rt); err != nil {
		return "", "", time.Time{}, err
	}
	return at.ID, token, at.Expires, nil
}

// liveRefresh loads a refresh token that is neither used, revoked nor expired.
func (s *storage) liveRefresh(ctx context.Context, token string) (*refreshToken, error) {
	if !strings.HasPrefix(token, RefreshTokenPrefix) || len(token) > 100 {
		return nil, errNotFound
	}
	var rt refreshToken
	if err := findOne(ctx, s.rec.refresh, bson.M{"_id": hashHex(token)}, &rt); err != nil {
		return nil, err
	}
	if rt.RevokedAt != nil || !now().Before(rt.Expires) {
		return nil, errNotFound
	}
	return &rt, nil
}

// TokenRequestByRefreshToken loads a refresh token for a refresh grant. The
// user must still be active and still hold a role the client admits.
func (s *storage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	rt, err := s.liveRefresh(ctx, token)
	if errors.Is(err, errNotFound) {
		return nil, oidc.ErrInvalidGrant().WithDescription("the refresh token is unknown, used, revoked or expired")
	}
	if err != nil {
		return nil, err
	}
	u, err := s.activeUser(ctx, rt.UserID)
	if err != nil {
		return nil, oidc.ErrInvalidGrant().WithDescription("the user may no longer sign in")
	}
	cl, err := s.clients.get(ctx, rt.ClientID)
	if err != nil {
		return nil, oidc.ErrInvalidGrant().WithDescription("the client is no longer registered")
	}
	if !cl.allows(u.Roles, u.Sysadmin) {
		return nil, oidc.ErrInvalidGrant().WithDescription("the user no longer holds a role this client admits")
	}
	return refreshRequest{rt}, nil
}

// TerminateSession revokes every token of userID at clientID.
func (s *storage) TerminateSession(ctx context.Context, userID, clientID string) error {
	t := now()
	filter := bson.M{"user_id": userID, "client_id": clientID, "revoked_at": nil}
	for _, c := range []struct {
		name string
		do   func() error
	}{
		{"refresh tokens", func() error {
			_, err := s.rec.refresh.UpdateMany(ctx, filter, bson.M{"$set": bson.M{"revoked_at": t}})
			return err
		}},
		{"access tokens", func() error {
			_, err := s.rec.access.UpdateMany(ctx, filter, bson.M{"$set": bson.M{"revoked_at": t}})
			return err
		}},
	} {
		if err := c.do(); err != nil {
			return fmt.Errorf("end session: revoke %s: %w", c.name, err)
		}
	}
	s.forget()
	return nil
}

// revokeClient revokes every token issued to a client (it was deleted).
func (s *storage) revokeClient(ctx context.Context, clientID string) error {
	t := now()
	filter := bson.M{"client_id": clientID, "revoked_at": nil}
	if _, err := s.rec.refresh.UpdateMany(ctx, filter, bson.M{"$set": bson.M{"revoked_at": t}}); err != nil {
		return fmt.Errorf("revoke the refresh tokens of client %s: %w", clientID, err)
	}
	if _, err := s.rec.access.UpdateMany(ctx, filter, bson.M{"$set": bson.M{"revoked_at": t}}); err != nil {
		return fmt.Errorf("revoke the access tokens of client %s: %w", clientID, err)
	}
	s.forget()
	return nil
}

// endSessionKey carries, in the request's context, what RP-initiated
// logout found (see TerminateSessionFromRequest).
type endSessionKey struct{}

// endSession is filled by TerminateSessionFromRequest: the user whose
// session at the provider ends.
type endSession struct{ userID string }

// TerminateSessionFromRequest ends the sessions of RP-initiated logout: the
// tokens of the user at the client, and (through the request's context) the
// user's toxgate web session.
func (s *storage) TerminateSessionFromRequest(ctx context.Context, req *op.EndSessionRequest) (string, error) {
	if req.UserID != "" && req.ClientID != "" {
		if err := s.TerminateSession(ctx, req.UserID, req.ClientID); err != nil {
			return "", err
		}
	}
	if es, ok := ctx.Value(endSessionKey{}).(*endSession); ok {
		es.userID = req.UserID
	}
	return req.RedirectURI, nil
}

// GetRefreshTokenInfo names the user and id of a refresh token of clientID.
func (s *storage) GetRefreshTokenInfo(ctx context.Context, clientID, token string) (string, string, error) {
	rt, err := s.liveRefresh(ctx, token)
	if errors.Is(err, errNotFound) {
		return "", "", op.ErrInvalidRefreshToken
	}
	if err != nil {
		return "", "", err
	}
	if rt.ClientID != clientID {
		return "", "", op.ErrInvalidRefreshToken
	}
	return rt.UserID, rt.ID, nil
}

// RevokeToken revokes an access token (by its id, 32 hex digits) or a
// refresh token (by the token, or by its id, the token's SHA-256 in hex);
// a refresh token's access token goes with it. op passes a user id with
// both kinds, so the kind is told by the form. Unknown tokens are ignored,
// as RFC 7009 asks.
func (s *storage) RevokeToken(ctx context.Context, tokenOrID, _ string, clientID string) *oidc.Error {
	t := now()
	id := tokenOrID
	switch {
	case strings.HasPrefix(tokenOrID, RefreshTokenPrefix):
		id = hashHex(tokenOrID)
	case len(tokenOrID) == 32:
		var at accessToken
		if err := findOne(ctx, s.rec.access, bson.M{"_id": tokenOrID}, &at); err != nil {
			if errors.Is(err, errNotFound) {
				return nil
			}
			return oidc.ErrServerError().WithParent(err)
		}
		if at.ClientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued to this client")
		}
		if err := update(ctx, s.rec.access, bson.M{"_id": at.ID}, bson.M{"revoked_at": t}); err != nil {
			return oidc.ErrServerError().WithParent(err)
		}
		s.forget()
		return nil
	case len(tokenOrID) != 64:
		return nil
	}
	var rt refreshToken
	if err := findOne(ctx, s.rec.refresh, bson.M{"_id": id}, &rt); err != nil {
		if errors.Is(err, errNotFound) {
			return nil
		}
		return oidc.ErrServerError().WithParent(err)
	}
	if rt.ClientID != clientID {
		return oidc.ErrInvalidClient().WithDescription("token was not issued to this client")
	}
	if err := update(ctx, s.rec.refresh, bson.M{"_id": rt.ID}, bson.M{"revoked_at": t}); err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
	if _, err := s.rec.access.UpdateOne(ctx, bson.M{"_id": rt.AccessTokenID}, bson.M{"$set": bson.M{"revoked_at": t}}); err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
	s.forget()
	return nil
}

// SigningKey is the key that signs now.
func (s *storage) SigningKey(ctx context.Context) (op.SigningKey, error) {
	return s.keys.signer(ctx)
}

// SignatureAlgorithms is RS256.
func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

// KeySet is the published keys (the JWKS), with the signing key made first if none exists.
func (s *storage) KeySet(ctx context.Context) ([]op.Key, error) {
	if _, err := s.keys.signer(ctx); err != nil {
		return nil, err
	}
	keys, err := s.keys.published(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]op.Key, len(keys))
	for i, k := range keys {
		out[i] = publicKey{k}
	}
	return out, nil
}

// GetClientByClientID loads a client.
func (s *storage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	cl, err := s.clients.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return opClient{Client: cl, loginURL: s.loginURL, idTokenTTL: s.cfg.IDTokenTTL}, nil
}

// AuthorizeClientIDSecret checks a confidential client's secret.
func (s *storage) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	cl, err := s.clients.get(ctx, id)
	if err != nil {
		return err
	}
	if !cl.checkSecret(secret) {
		return errors.New("wrong client secret")
	}
	return nil
}

// SetUserinfoFromScopes is deprecated in op; SetUserinfoFromRequest does the work.
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromRequest fills an ID token's claims.
func (s *storage) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	return s.fillUser(ctx, ui, req.GetSubject(), scopes)
}

// SetUserinfoFromToken answers the userinfo endpoint for a live access token.
func (s *storage) SetUserinfoFromToken(ctx context.Context, ui *oidc.UserInfo, tokenID, subject, _ string) error {
	at, err := s.liveAccess(ctx, tokenID)
	if err != nil || at.UserID != subject {
		return oidc.ErrAccessDenied().WithDescription("the access token is unknown, revoked or expired")
	}
	return s.fillUser(ctx, ui, at.UserID, at.Scopes)
}

// SetIntrospectionFromToken answers introspection: active only for a live
// token issued to the asking client.
func (s *storage) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	at, err := s.liveAccess(ctx, tokenID)
	if err != nil || at.UserID != subject || at.ClientID != clientID {
		return nil // inactive
	}
	var ui oidc.UserInfo
	if err := s.fillUser(ctx, &ui, at.UserID, at.Scopes); err != nil {
		return nil
	}
	resp.SetUserInfo(&ui)
	resp.Scope = at.Scopes
	resp.ClientID = at.ClientID
	resp.TokenType = oidc.BearerToken
	resp.Expiration = oidc.FromTime(at.Expires)
	resp.IssuedAt = oidc.FromTime(at.Created)
	resp.JWTID = at.ID
	resp.Audience = at.Audience
	resp.Claims = ui.Claims
	resp.Active = true
	return nil
}

// GetPrivateClaimsFromScopes adds the user's roles to an access token.
func (s *storage) GetPrivateClaimsFromScopes(ctx context.Context, userID, _ string, _ []string) (map[string]any, error) {
	u, err := s.activeUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	roles := rolesOf(u)
	return map[string]any{"groups": roles, "roles": roles, "preferred_username": u.Name}, nil
}

// GetKeyByIDAndClientID: the JWT profile grant is not offered.
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("the JWT profile grant is not supported")
}

// ValidateJWTProfileScopes: the JWT profile grant is not offered.
func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("the JWT profile grant is not supported")
}

// Health pings the store.
func (s *storage) Health(ctx context.Context) error {
	_, err := s.rec.keys.CountDocuments(ctx, bson.M{"_id": cryptoDocID}, options.Count().SetLimit(1))
	return err
}

// liveAccess loads an access token record that is neither revoked nor expired.
func (s *storage) liveAccess(ctx context.Context, id string) (*accessToken, error) {
	if len(id) != 32 {
		return nil, errNotFound
	}
	var at accessToken
	if err := findOne(ctx, s.rec.access, bson.M{"_id": id}, &at); err != nil {
		return nil, err
	}
	if at.RevokedAt != nil || !now().Before(at.Expires) {
		return nil, errNotFound
	}
	return &at, nil
}

// activeUser loads a user who may sign in: active, first login finished.
// A user who is unknown or may not sign in is OAuth2's access_denied (a
// 4xx), a store failure an error.
func (s *storage) activeUser(ctx context.Context, id string) (*identity.User, error) {
	u, err := s.users.UserByID(ctx, id)
	if errors.Is(err, identity.ErrNotFound) {
		return nil, oidc.ErrAccessDenied().WithDescription("the user is unknown")
	}
	if err != nil {
		return nil, err
	}
	if u.State != identity.StateActive || !u.FirstLoginDone() {
		return nil, oidc.ErrAccessDenied().WithDescription("the user may no longer sign in")
	}
	return u, nil
}

// rolesOf is the roles a user holds (sysadmin included), never nil.
func rolesOf(u *identity.User) []string {
	roles := slices.Clone(u.Roles)
	if u.Sysadmin && !slices.Contains(roles, identity.RoleSysadmin) {
		roles = append(roles, identity.RoleSysadmin)
	}
	if roles == nil {
		roles = []string{}
	}
	slices.Sort(roles)
	return roles
}

// fillUser sets the claims of user id: sub, the profile and e-mail claims
// when their scopes were granted, and the roles in groups and roles always
// (tools admit by role).
func (s *storage) fillUser(ctx context.Context, ui *oidc.UserInfo, id string, scopes []string) error {
	u, err := s.activeUser(ctx, id)
	if err != nil {
		return err
	}
	ui.Subject = u.ID
	if slices.Contains(scopes, oidc.ScopeProfile) {
		ui.PreferredUsername = u.Name
		ui.Name = u.DisplayName()
		ui.GivenName = u.FirstName
		ui.FamilyName = u.LastName
	}
	if slices.Contains(scopes, oidc.ScopeEmail) {
		ui.Email = u.Email
		ui.EmailVerified = oidc.Bool(u.EmailVerified)
	}
	roles := rolesOf(u)
	ui.AppendClaims("groups", roles)
	ui.AppendClaims("roles", roles)
	return nil
}
