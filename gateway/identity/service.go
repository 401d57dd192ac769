package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"toxgate/gateway/config"
	"toxgate/gateway/identity/oidc"
)

// Errors of the service. Callers show ErrBadLogin and ErrBadCredentials
// as they are: they never say which part was wrong.
var (
	// ErrBadCredentials: a token or JWT that is unknown, revoked, expired,
	// malformed, or belongs to a user who may not use it.
	ErrBadCredentials = errors.New("invalid, expired or revoked credentials")
	// ErrBadLogin: wrong user name or password, or a disabled account.
	ErrBadLogin = errors.New("wrong user name or password")
	// ErrThrottled: too many failed logins; try again later.
	ErrThrottled = errors.New("too many failed logins; try again later")
)

// ValidationError lists what is wrong with an input, by field, in CKAN's words.
type ValidationError struct {
	Fields map[string][]string
}

func (e *ValidationError) Error() string {
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+": "+strings.Join(e.Fields[k], "; "))
	}
	return strings.Join(parts, ", ")
}

func (e *ValidationError) add(field, msg string) {
	if e.Fields == nil {
		e.Fields = map[string][]string{}
	}
	e.Fields[field] = append(e.Fields[field], msg)
}

func (e *ValidationError) orNil() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}

// Options configure a Service.
type Options struct {
	Auth   config.Auth
	OIDC   *oidc.Verifier // nil: JWTs are not accepted
	Mailer Mailer
	Logger *slog.Logger
}

// Service is the identity part of the gateway: accounts, logins, sessions,
// API tokens, e-mail verification and authentication of requests.
type Service struct {
	store   *Store
	cfg     config.Auth
	oidc    *oidc.Verifier
	mailer  Mailer
	log     *slog.Logger
	cache   *credCache
	subs    *credCache // OIDC subject -> provisioned user
	touched touchLimiter
	pairs   *pairThrottle // failed logins per (account, source address)
	// lastPrune is when this gateway last pruned the store's login
	// failure counters (Unix milliseconds).
	lastPrune atomic.Int64
	// provider verifies the access tokens of the gateway's own OpenID
	// provider (nil: none), see SetProviderTokens.
	provider atomic.Pointer[ProviderTokens]
}

// NewService builds the service on st.
func NewService(st *Store, opts Options) *Service {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	mailer := opts.Mailer
	if mailer == nil {
		mailer = logMailer{log}
	}
	a := opts.Auth
	return &Service{store: st, cfg: a, oidc: opts.OIDC, mailer: mailer, log: log,
		cache: newCredCache(a.TokenCacheTTL), subs: newCredCache(a.TokenCacheTTL),
		pairs: newPairThrottle(a.LoginMaxFails, a.LoginDelay, a.LoginMaxDelay, a.LoginAccountWindow, a.LoginThrottleEntries)}
}

// Store is the underlying store.
func (s *Service) Store() *Store { return s.store }

// Roles lists the roles an administrator may grant.
func (s *Service) Roles() []string {
	roles := []string{RoleSysadmin, RoleModels, RoleNotebooks}
	for _, r := range s.cfg.Roles {
		if r != "" && !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	return roles
}

// forget drops cached credential checks so that a change made here (revoked
// token, disabled user, new roles) applies at once on this gateway; other
// gateways see it when their cache entries expire (auth.token_cache_ttl).
func (s *Service) forget() {
	s.cache.purge()
	s.subs.purge()
}

func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

func emailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// newUUID returns a random (version 4) UUID, lowercase with hyphens.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// NewUser is what an administrator gives to provision an account.
type NewUser struct {
	ID        string // optional (sysadmin only through CKAN)
	Name      string
	Email     string
	FirstName string
	LastName  string
	Fullname  string // default: first + last name
	About     string
	Password  string
	Roles     []string
	Sysadmin  bool
	// Active skips the first-login steps (e-mail verification and password
	// change). Default: the account is pending.
	Active bool
}

// CreateUser provisions an account. It returns a *ValidationError for bad
// or taken fields.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (*User, error) {
	var verr ValidationError
	in.Name = strings.TrimSpace(in.Name)
	in.Email = strings.TrimSpace(in.Email)
	if in.Name == "" {
		verr.add("name", "Missing value")
	} else {
		for _, m := range ValidateName(in.Name) {
			verr.add("name", m)
		}
	}
	if in.Email == "" {
		verr.add("email", "Missing value")
	} else if m := ValidateEmail(in.Email); m != "" {
		verr.add("email", m)
	}
	if in.Password == "" {
		verr.add("password", "Missing value")
	} else if m := ValidatePassword(in.Password); m != "" {
		verr.add("password", m)
	}
	if strings.Contains(in.About, "http://") || strings.Contains(in.About, "https://") {
		verr.add("about", "Edit not allowed as it looks like spam. Please avoid links in your description.")
	}
	roles, sysadmin := normalizeRoles(in.Roles, in.Sysadmin)
	for _, r := range roles {
		if !slices.Contains(s.Roles(), r) {
			verr.add("roles", fmt.Sprintf("Unknown role %q (known: %s)", r, strings.Join(s.Roles(), ", ")))
		}
	}
	if len(verr.Fields["name"]) == 0 {
		if _, err := s.store.UserByName(ctx, in.Name); err == nil {
			verr.add("name", "That login name is not available.")
		}
	}
	if len(verr.Fields["email"]) == 0 {
		if _, err := s.store.UserByEmail(ctx, in.Email); err == nil {
			verr.add("email", fmt.Sprintf("The email address '%s' belongs to a registered user.", in.Email))
		}
	}
	if err := verr.orNil(); err != nil {
		return nil, err
	}
	hash, err := HashPassword(in.Password, s.cfg.BcryptCost)
	if err != nil {
		return nil, err
	}
	if in.Fullname == "" {
		in.Fullname = fullName(in.FirstName, in.LastName)
	}
	u := &User{
		ID: in.ID, Name: in.Name, Email: in.Email, EmailKey: emailKey(in.Email),
		Fullname: in.Fullname, FirstName: in.FirstName, LastName: in.LastName, About: in.About,
		State: StatePending, Sysadmin: sysadmin, Roles: roles, Created: now(),
		PasswordHash: hash, MustChangePassword: true,
	}
	if u.ID == "" {
		u.ID = newUUID()
	}
	if in.Active {
		u.State, u.EmailVerified, u.MustChangePassword = StateActive, true, false
	}
	if err := s.store.InsertUser(ctx, u); err != nil {
		if errors.Is(err, ErrDuplicate) {
			verr.add("name", "That login name is not available.")
			return nil, &verr
		}
		return nil, err
	}
	s.log.Info("user created", "user", u.Name, "id", u.ID, "roles", u.Roles, "state", u.State)
	return u, nil
}

// SetRoles replaces the roles of a user (by id or name).
func (s *Service) SetRoles(ctx context.Context, idOrName string, roles []string) (*User, error) {
	u, err := s.store.UserByIDOrName(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	roles, sysadmin := normalizeRoles(roles, false)
	var verr ValidationError
	for _, r := range roles {
		if !slices.Contains(s.Roles(), r) {
			verr.add("roles", fmt.Sprintf("Unknown role %q (known: %s)", r, strings.Join(s.Roles(), ", ")))
		}
	}
	if err := verr.orNil(); err != nil {
		return nil, err
	}
	u, err = s.store.UpdateUser(ctx, u.ID, bson.M{"roles": roles, "sysadmin": sysadmin})
	if err != nil {
		return nil, err
	}
	s.forget()
	s.log.Info("user roles set", "user", u.Name, "roles", roles)
	return u, nil
}

// Disable marks a user deleted (CKAN's soft delete): logins, sessions and
// tokens stop working.
func (s *Service) Disable(ctx context.Context, idOrName string) (*User, error) {
	u, err := s.store.UserByIDOrName(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	if u, err = s.store.UpdateUser(ctx, u.ID, bson.M{"state": StateDeleted}); err != nil {
		return nil, err
	}
	if err := s.store.DeleteSessions(ctx, bson.M{"user_id": u.ID}); err != nil {
		return nil, err
	}
	s.forget()
	s.log.Info("user disabled", "user", u.Name)
	return u, nil
}

// Enable reactivates a disabled user (pending again if the first login was
// never finished).
func (s *Service) Enable(ctx context.Context, idOrName string) (*User, error) {
	u, err := s.store.UserByIDOrName(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	state := StatePending
	if u.FirstLoginDone() {
		state = StateActive
	}
	if u, err = s.store.UpdateUser(ctx, u.ID, bson.M{"state": state}); err != nil {
		return nil, err
	}
	s.forget()
	s.log.Info("user enabled", "user", u.Name, "state", state)
	return u, nil
}

// ResetPassword sets a new initial password: the user must change it (and
// verify the e-mail address if not yet done) at the next login.
func (s *Service) ResetPassword(ctx context.Context, idOrName, password string) (*User, error) {
	if m := ValidatePassword(password); m != "" {
		return nil, &ValidationError{Fields: map[string][]string{"password": {m}}}
	}
	u, err := s.store.UserByIDOrName(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	hash, err := HashPassword(password, s.cfg.BcryptCost)
	if err != nil {
		return nil, err
	}
	set := bson.M{"password_hash": hash, "must_change_password": true}
	if u.State != StateDeleted {
		set["state"] = StatePending
	}
	if u, err = s.store.UpdateUser(ctx, u.ID, set); err != nil {
		return nil, err
	}
	if err := s.store.DeleteSessions(ctx, bson.M{"user_id": u.ID}); err != nil {
		return nil, err
	}
	s.forget()
	return u, nil
}

// EnsureSysadmin creates the first sysadmin when the store has none. It
// returns the password to print when one was generated (empty otherwise)
// and whether a user was created. A configured password makes an active
// account; a generated one a pending account that must change it.
func (s *Service) EnsureSysadmin(ctx context.Context, name, email, password string) (created bool, generated string, err error) {
	has, err := s.store.HasSysadmin(ctx)
	if err != nil || has {
		return false, "", err
	}
	in := NewUser{Name: name, Email: email, Fullname: "Administrator", Password: password, Sysadmin: true, Active: password != ""}
	if password == "" {
		if generated, err = GeneratePassword(16); err != nil {
			return false, "", err
		}
		in.Password = generated
	}
	if _, err := s.CreateUser(ctx, in); err != nil {
		// Another gateway sharing the store may have created it first
		// (its name or its e-mail address is then taken, whichever
		// unique index the store checked first).
		if has, herr := s.store.HasSysadmin(ctx); herr == nil && has {
			return false, "", nil
		}
		return false, "", fmt.Errorf("create first sysadmin: %w", err)
	}
	return true, generated, nil
}

// Login checks a user name (or e-mail address) and password from the
// client at clientAddr. Guessing is slowed down at two levels, both keyed
// by the account (its user name and e-mail address share one key; a name
// that names no account has a key of its own, so the answers do not
// reveal which names exist):
//
//   - per account and source address (SourceKey of clientAddr), in this
//     gateway's memory: auth.login_max_fails attempts at once, then each
//     further one waits auth.login_delay, doubling up to
//     auth.login_max_delay, until a successful login from that address;
//   - per account from every address, in the store (all gateways share
//     it): after auth.login_account_max_fails failures within a window of
//     auth.login_account_window and the one before it (fixed windows,
//     counted by unique inserts, so concurrent guesses all count), logins
//     are refused until the window ends, even with the right password.
//
// So an attacker at one address cannot lock the owner, who logs in from
// another, out; only many addresses together reach the account's ceiling,
// and then for one window at a time. A throttled attempt gets a
// *ThrottledError (errors.Is ErrThrottled) with the wait, and its password
// is not checked.
func (s *Service) Login(ctx context.Context, name, password, clientAddr string) (*User, error) {
	name = strings.TrimSpace(name)
	var (
		u   *User
		err error
	)
	if strings.Contains(name, "@") {
		u, err = s.store.UserByEmail(ctx, name)
	} else {
		u, err = s.store.UserByName(ctx, name)
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	key := "user:" + strings.ToLower(name)
	if u != nil {
		key = "account:" + u.ID
	}
	pair := key + " " + SourceKey(clientAddr)
	t := now()
	if wait := s.pairs.begin(pair, t); wait > 0 {
		s.log.Warn("login throttled", "user", name, "addr", clientAddr, "retry_after", wait)
		return nil, &ThrottledError{RetryAfter: wait}
	}
	if max := s.cfg.LoginAccountMaxFails; max > 0 {
		over, end, err := s.store.atCeiling(ctx, key, t, s.cfg.LoginAccountWindow, max)
		if err != nil {
			return nil, err
		}
		if over {
			s.log.Warn("login refused: account failure ceiling", "user", name, "addr", clientAddr, "until", end)
			return nil, &ThrottledError{RetryAfter: end.Sub(t)}
		}
	}
	ok := false
	switch {
	case errors.Is(err, ErrNotFound):
		burnPasswordCheck(password)
	case err != nil:
		return nil, err
	default:
		ok = CheckPassword(u.PasswordHash, password) && u.State != StateDeleted
	}
	if !ok {
		if s.cfg.LoginAccountMaxFails > 0 {
			if err := s.store.countFailure(ctx, key, t, s.cfg.LoginAccountWindow, s.cfg.LoginAccountMaxFails); err != nil {
				return nil, err
			}
			s.pruneFailures(t)
		}
		s.log.Warn("login failed", "user", name, "addr", clientAddr)
		return nil, ErrBadLogin
	}
	s.pairs.succeeded(pair)
	return s.store.UpdateUser(ctx, u.ID, bson.M{"last_login": t})
}

// pruneFailures deletes, at most once per auth.login_account_window on
// this gateway and in the background, the store's failure counters whose
// window has ended (names that name no account would otherwise pile up).
func (s *Service) pruneFailures(t time.Time) {
	window := s.cfg.LoginAccountWindow
	last := s.lastPrune.Load()
	if last != 0 && t.Sub(time.UnixMilli(last)) < window {
		return
	}
	if !s.lastPrune.CompareAndSwap(last, t.UnixMilli()) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.store.pruneFailures(ctx, t, window); err != nil {
			s.log.Warn("prune login failure counters", "err", err)
		}
	}()
}

// StartSession creates a web session for a logged-in user and returns the
// cookie value (never stored; the store keeps its hash).
func (s *Service) StartSession(ctx context.Context, userID string) (string, *Session, error) {
	secret, err := randomHex(32)
	if err != nil {
		return "", nil, err
	}
	csrf, err := randomHex(32)
	if err != nil {
		return "", nil, err
	}
	t := now()
	sess := &Session{ID: hashHex(secret), UserID: userID, CSRF: csrf, Created: t, Expires: t.Add(s.cfg.SessionTTL)}
	if err := s.store.InsertSession(ctx, sess); err != nil {
		return "", nil, err
	}
	return secret, sess, nil
}

// SessionUser resolves a session cookie to its live session and user;
// ErrNotFound when the session is unknown, expired, or its user disabled.
func (s *Service) SessionUser(ctx context.Context, cookie string) (*Session, *User, error) {
	if cookie == "" {
		return nil, nil, ErrNotFound
	}
	sess, err := s.store.SessionByID(ctx, hashHex(cookie))
	if err != nil {
		return nil, nil, err
	}
	if !now().Before(sess.Expires) {
		_ = s.store.DeleteSessions(ctx, bson.M{"_id": sess.ID})
		return nil, nil, ErrNotFound
	}
	u, err := s.store.UserByID(ctx, sess.UserID)
	if err != nil {
		return nil, nil, err
	}
	if u.State == StateDeleted {
		return nil, nil, ErrNotFound
	}
	return sess, u, nil
}

// EndSession deletes the session of a cookie (logout).
func (s *Service) EndSession(ctx context.Context, cookie string) error {
	if cookie == "" {
		return nil
	}
	return s.store.DeleteSessions(ctx, bson.M{"_id": hashHex(cookie)})
}

// CheckCSRF compares a submitted form token with the expected one in constant time.
func CheckCSRF(expected, got string) bool {
	return expected != "" && subtle.ConstantTimeCompare([]byte(expected), []byte(got)) == 1
}

// verifyResendInterval is the least time between two verification mails.
const verifyResendInterval = 30 * time.Second

// SendVerification mails (or logs) a single-use link that verifies u's
// e-mail address; baseURL is the site's external URL. It does nothing if a
// link was sent less than 30 s ago and force is false.
func (s *Service) SendVerification(ctx context.Context, u *User, baseURL string, force bool) error {
	t := now()
	if !force && u.VerifySentAt != nil && t.Sub(*u.VerifySentAt) < verifyResendInterval {
		return nil
	}
	secret, err := randomHex(32)
	if err != nil {
		return err
	}
	v := &Verification{ID: hashHex(secret), UserID: u.ID, Email: u.Email, Created: t, Expires: t.Add(s.cfg.VerifyTTL)}
	if err := s.store.InsertVerification(ctx, v); err != nil {
		return err
	}
	if _, err := s.store.UpdateUser(ctx, u.ID, bson.M{"verify_sent_at": t}); err != nil {
		return err
	}
	link := strings.TrimRight(baseURL, "/") + "/verify?token=" + secret
	body := fmt.Sprintf("Hello %s,\n\nplease confirm that %s is your e-mail address for toxgate by opening this link:\n\n%s\n\nThe link works once and expires at %s UTC.\nIf you did not expect this message, ignore it.\n",
		u.DisplayName(), u.Email, link, v.Expires.Format("2006-01-02 15:04"))
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.mailer.Send(mctx, Message{To: u.Email, Subject: "Verify your e-mail address for toxgate", Body: body, Link: link}); err != nil {
		return fmt.Errorf("send verification to %s: %w", u.Name, err)
	}
	return nil
}

// VerificationValid reports whether a link secret is unused and unexpired
// (to show the confirmation form).
func (s *Service) VerificationValid(ctx context.Context, secret string) bool {
	v, err := s.store.VerificationByID(ctx, hashHex(secret))
	return err == nil && v.UsedAt == nil && now().Before(v.Expires)
}

// VerifyEmail uses a link secret: it marks the address verified and, when
// the password was changed too, activates the account. ErrNotFound when the
// link is unknown, used, expired, or for an address the user no longer has.
func (s *Service) VerifyEmail(ctx context.Context, secret string) (*User, error) {
	v, err := s.store.UseVerification(ctx, hashHex(secret), now())
	if err != nil {
		return nil, err
	}
	u, err := s.store.UserByID(ctx, v.UserID)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(u.Email, v.Email) {
		return nil, ErrNotFound
	}
	set := bson.M{"email_verified": true}
	if u.State == StatePending && !u.MustChangePassword {
		set["state"] = StateActive
	}
	if u, err = s.store.UpdateUser(ctx, u.ID, set); err != nil {
		return nil, err
	}
	s.forget()
	s.log.Info("e-mail verified", "user", u.Name)
	return u, nil
}

// ChangePassword replaces u's password after checking the current one; the
// user's other sessions end. A pending user whose address is verified
// becomes active.
func (s *Service) ChangePassword(ctx context.Context, userID, current, next, keepSession string) (*User, error) {
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	var verr ValidationError
	if !CheckPassword(u.PasswordHash, current) {
		verr.add("old_password", "Old Password: incorrect password")
	}
	if m := ValidatePassword(next); m != "" {
		verr.add("password", m)
	} else if next == current {
		verr.add("password", "The new password must differ from the current one")
	}
	if err := verr.orNil(); err != nil {
		return nil, err
	}
	hash, err := HashPassword(next, s.cfg.BcryptCost)
	if err != nil {
		return nil, err
	}
	set := bson.M{"password_hash": hash, "must_change_password": false}
	if u.State == StatePending && u.EmailVerified {
		set["state"] = StateActive
	}
	if u, err = s.store.UpdateUser(ctx, u.ID, set); err != nil {
		return nil, err
	}
	filter := bson.M{"user_id": u.ID}
	if keepSession != "" {
		filter["_id"] = bson.M{"$ne": hashHex(keepSession)}
	}
	if err := s.store.DeleteSessions(ctx, filter); err != nil {
		return nil, err
	}
	s.forget()
	s.log.Info("password changed", "user", u.Name)
	return u, nil
}
