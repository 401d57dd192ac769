package oidcprovider

import (
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// opAuthRequest is an authRequest as the op package sees it (op.AuthRequest).
type opAuthRequest struct{ *authRequest }

func (a opAuthRequest) GetID() string  { return a.ID }
func (a opAuthRequest) GetACR() string { return "" }
func (a opAuthRequest) GetAMR() []string {
	if a.authRequest.Done {
		return []string{"pwd"}
	}
	return nil
}
func (a opAuthRequest) GetAudience() []string  { return []string{a.ClientID} }
func (a opAuthRequest) GetAuthTime() time.Time { return a.AuthTime }
func (a opAuthRequest) GetClientID() string    { return a.ClientID }
func (a opAuthRequest) GetNonce() string       { return a.Nonce }
func (a opAuthRequest) GetRedirectURI() string { return a.RedirectURI }
func (a opAuthRequest) GetScopes() []string    { return a.Scopes }
func (a opAuthRequest) GetState() string       { return a.State }
func (a opAuthRequest) GetSubject() string     { return a.UserID }
func (a opAuthRequest) Done() bool             { return a.authRequest.Done }
func (a opAuthRequest) GetResponseType() oidc.ResponseType {
	return oidc.ResponseType(a.ResponseType)
}
func (a opAuthRequest) GetResponseMode() oidc.ResponseMode {
	return oidc.ResponseMode(a.ResponseMode)
}

// GetCodeChallenge passes the method through, so that an unsupported one
// is refused rather than checked as plain.
func (a opAuthRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.CodeChallenge, Method: oidc.CodeChallengeMethod(a.CodeChallengeMethod)}
}

// refreshRequest is a refreshToken as the op package sees it (op.RefreshTokenRequest).
type refreshRequest struct{ *refreshToken }

func (r refreshRequest) GetAMR() []string            { return r.AMR }
func (r refreshRequest) GetAudience() []string       { return r.Audience }
func (r refreshRequest) GetAuthTime() time.Time      { return r.AuthTime }
func (r refreshRequest) GetClientID() string         { return r.ClientID }
func (r refreshRequest) GetScopes() []string         { return r.Scopes }
func (r refreshRequest) GetSubject() string          { return r.UserID }
func (r refreshRequest) SetCurrentScopes(s []string) { r.Scopes = s }
