package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Collection names of the identity store.
const (
	CollUsers         = "users"
	CollSessions      = "sessions"
	CollTokens        = "api_tokens"
	CollTokenUsage    = "api_token_usage"
	CollVerifications = "email_verifications"
	CollLoginFailures = "login_failures"
	// CollUsed records what may happen once (a verification link used, a
	// token revoked): see Store.once.
	CollUsed = "identity_used"
)

// ErrNotFound is returned when a record does not exist.
var ErrNotFound = errors.New("not found")

// ErrDuplicate is returned when a unique field (user name, e-mail) is taken.
var ErrDuplicate = errors.New("duplicate")

// Store is the identity store in MongoDB. Every hot lookup (token, session,
// user by id) is by _id, which the embedded store serves fast.
type Store struct {
	users, sessions, tokens, usage, verifications, failures, used *mongo.Collection
}

// NewStore opens the identity collections of db.
func NewStore(db *mongo.Database) *Store {
	return &Store{
		users:         db.Collection(CollUsers),
		sessions:      db.Collection(CollSessions),
		tokens:        db.Collection(CollTokens),
		usage:         db.Collection(CollTokenUsage),
		verifications: db.Collection(CollVerifications),
		failures:      db.Collection(CollLoginFailures),
		used:          db.Collection(CollUsed),
	}
}

// once records that what key names happened (kept until expires; zero:
// for good): true the first time, false ever after. An insert with a
// unique _id is atomic on MongoDB and on the embedded store alike; an
// update filtered on "not yet" is a read and then a write on the embedded
// store, which two requests at once can both pass.
func (s *Store) once(ctx context.Context, key string, expires time.Time) (bool, error) {
	doc := bson.M{"_id": key}
	if !expires.IsZero() {
		doc["expires"] = expires
	}
	_, err := s.used.InsertOne(ctx, doc)
	if mongo.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record %s: %w", key, err)
	}
	return true, nil
}

// happened reports whether once recorded key.
func (s *Store) happened(ctx context.Context, key string) (bool, error) {
	n, err := s.used.CountDocuments(ctx, bson.M{"_id": key})
	if err != nil {
		return false, fmt.Errorf("read %s: %w", key, err)
	}
	return n > 0, nil
}

// EnsureIndexes creates the unique indexes on user name and e-mail
// (idempotent). Existing indexes are left alone: the embedded store does
// not cope with re-creating them.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	specs, err := s.users.Indexes().ListSpecifications(ctx)
	if err != nil {
		return fmt.Errorf("identity: list user indexes: %w", err)
	}
	have := map[string]bool{}
	for _, sp := range specs {
		var keys bson.D
		if err := bson.Unmarshal(sp.KeysDocument, &keys); err == nil && len(keys) == 1 {
			have[keys[0].Key] = true
		}
	}
	for _, field := range []string{"name", "email_key"} {
		if have[field] {
			continue
		}
		_, err := s.users.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: field, Value: 1}}, Options: options.Index().SetUnique(true)})
		if err != nil {
			return fmt.Errorf("identity: create index users.%s: %w", field, err)
		}
	}
	return nil
}

func notFound(err error) error {
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ErrNotFound
	}
	return err
}

// InsertUser stores a new user; ErrDuplicate when the name or e-mail is taken.
func (s *Store) InsertUser(ctx context.Context, u *User) error {
	if _, err := s.users.InsertOne(ctx, u); err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return ErrDuplicate
		}
		return fmt.Errorf("insert user %s: %w", u.Name, err)
	}
	return nil
}

// UserByID loads a user by id.
func (s *Store) UserByID(ctx context.Context, id string) (*User, error) {
	var u User
	if err := s.users.FindOne(ctx, bson.M{"_id": id}).Decode(&u); err != nil {
		return nil, fmt.Errorf("load user %s: %w", id, notFound(err))
	}
	return &u, nil
}

// UserByName loads a user by name.
func (s *Store) UserByName(ctx context.Context, name string) (*User, error) {
	var u User
	if err := s.users.FindOne(ctx, bson.M{"name": name}).Decode(&u); err != nil {
		return nil, fmt.Errorf("load user %s: %w", name, notFound(err))
	}
	return &u, nil
}

// UserByIDOrName loads a user by id, else by name.
func (s *Store) UserByIDOrName(ctx context.Context, idOrName string) (*User, error) {
	u, err := s.UserByID(ctx, idOrName)
	if errors.Is(err, ErrNotFound) {
		return s.UserByName(ctx, idOrName)
	}
	return u, err
}

// UserByEmail loads a user by e-mail address (case-insensitive).
func (s *Store) UserByEmail(ctx context.Context, email string) (*User, error) {
	var u User
	if err := s.users.FindOne(ctx, bson.M{"email_key": emailKey(email)}).Decode(&u); err != nil {
		return nil, fmt.Errorf("load user by e-mail: %w", notFound(err))
	}
	return &u, nil
}

// UserBySubject loads the user provisioned for an OIDC subject.
func (s *Store) UserBySubject(ctx context.Context, subject string) (*User, error) {
	var u User
	if err := s.users.FindOne(ctx, bson.M{"oidc_subject": subject}).Decode(&u); err != nil {
		return nil, fmt.Errorf("load user by subject: %w", notFound(err))
	}
	return &u, nil
}

// Users lists users matching filter (nil: all), in no particular order.
func (s *Store) Users(ctx context.Context, filter bson.M) ([]*User, error) {
	if filter == nil {
		filter = bson.M{}
	}
	cur, err := s.users.Find(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	var out []*User
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// HasSysadmin reports whether a sysadmin who is not deleted exists.
func (s *Store) HasSysadmin(ctx context.Context) (bool, error) {
	n, err := s.users.CountDocuments(ctx, bson.M{"sysadmin": true, "state": bson.M{"$ne": StateDeleted}})
	if err != nil {
		return false, fmt.Errorf("count sysadmins: %w", err)
	}
	return n > 0, nil
}

// UpdateUser sets fields of user id and returns the updated user.
func (s *Store) UpdateUser(ctx context.Context, id string, set bson.M) (*User, error) {
	var u User
	err := s.users.FindOneAndUpdate(ctx, bson.M{"_id": id}, bson.M{"$set": set},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&u)
	if err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return nil, ErrDuplicate
		}
		return nil, fmt.Errorf("update user %s: %w", id, notFound(err))
	}
	return &u, nil
}

// Session is a web login. Its _id is the SHA-256 of the cookie value.
type Session struct {
	ID      string    `bson:"_id"`
	UserID  string    `bson:"user_id"`
	CSRF    string    `bson:"csrf"`
	Created time.Time `bson:"created"`
	Expires time.Time `bson:"expires"`
}

// InsertSession stores a session.
func (s *Store) InsertSession(ctx context.Context, sess *Session) error {
	if _, err := s.sessions.InsertOne(ctx, sess); err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

// SessionByID loads a session by the hash of its cookie.
func (s *Store) SessionByID(ctx context.Context, id string) (*Session, error) {
	var sess Session
	if err := s.sessions.FindOne(ctx, bson.M{"_id": id}).Decode(&sess); err != nil {
		return nil, fmt.Errorf("load session: %w", notFound(err))
	}
	return &sess, nil
}

// DeleteSessions removes the sessions matching filter.
func (s *Store) DeleteSessions(ctx context.Context, filter bson.M) error {
	if _, err := s.sessions.DeleteMany(ctx, filter); err != nil {
		return fmt.Errorf("delete sessions: %w", err)
	}
	return nil
}

// Token is an API token record. Its _id is TokenID(hash); Hash is the full
// hex SHA-256 of the token. The token itself is never stored.
type Token struct {
	ID        string     `bson:"_id"`
	Hash      string     `bson:"hash"`
	UserID    string     `bson:"user_id"`
	Name      string     `bson:"name"`
	CreatedAt time.Time  `bson:"created_at"`
	LastUsed  *time.Time `bson:"-"` // from the usage collection
	ExpiresAt *time.Time `bson:"expires_at,omitempty"`
	RevokedAt *time.Time `bson:"revoked_at,omitempty"`
}

// Live reports whether the token is neither revoked nor expired at now.
func (t *Token) Live(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}

// InsertToken stores a token record.
func (s *Store) InsertToken(ctx context.Context, t *Token) error {
	if _, err := s.tokens.InsertOne(ctx, t); err != nil {
		return fmt.Errorf("insert token: %w", err)
	}
	return nil
}

// TokenByID loads a token record.
func (s *Store) TokenByID(ctx context.Context, id string) (*Token, error) {
	var t Token
	if err := s.tokens.FindOne(ctx, bson.M{"_id": id}).Decode(&t); err != nil {
		return nil, fmt.Errorf("load token: %w", notFound(err))
	}
	return &t, nil
}

// TokensOf lists a user's tokens that are not revoked, oldest first, with
// their last use.
func (s *Store) TokensOf(ctx context.Context, userID string) ([]*Token, error) {
	cur, err := s.tokens.Find(ctx, bson.M{"user_id": userID, "revoked_at": nil},
		options.Find().SetSort(bson.D{{Key: "created_at", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	var out []*Token
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	ids := make([]string, len(out))
	for i, t := range out {
		ids[i] = t.ID
	}
	cur, err = s.usage.Find(ctx, bson.M{"_id": bson.M{"$in": ids}})
	if err != nil {
		return nil, fmt.Errorf("list token use: %w", err)
	}
	var uses []tokenUse
	if err := cur.All(ctx, &uses); err != nil {
		return nil, fmt.Errorf("list token use: %w", err)
	}
	last := make(map[string]time.Time, len(uses))
	for _, u := range uses {
		last[u.ID] = u.LastUsed
	}
	for _, t := range out {
		if at, ok := last[t.ID]; ok {
			t.LastUsed = &at
		}
	}
	return out, nil
}

// tokenUse records a token's last use in its own document, so that writing
// it never races with a revocation of the token record (the embedded store
// rewrites whole documents).
type tokenUse struct {
	ID       string    `bson:"_id"`
	LastUsed time.Time `bson:"last_used"`
}

// TouchToken records that token id was used at t.
func (s *Store) TouchToken(ctx context.Context, id string, t time.Time) error {
	_, err := s.usage.ReplaceOne(ctx, bson.M{"_id": id}, tokenUse{ID: id, LastUsed: t}, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("record token use: %w", err)
	}
	return nil
}

// SetTokenRevoked marks token id revoked at t (whatever it says now).
func (s *Store) SetTokenRevoked(ctx context.Context, id string, t time.Time) error {
	if _, err := s.tokens.UpdateOne(ctx, bson.M{"_id": id}, bson.M{"$set": bson.M{"revoked_at": t}}); err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

// UpdateToken sets fields of a token that is not revoked.
func (s *Store) UpdateToken(ctx context.Context, id string, set bson.M) error {
	res, err := s.tokens.UpdateOne(ctx, bson.M{"_id": id, "revoked_at": nil}, bson.M{"$set": set})
	if err != nil {
		return fmt.Errorf("update token: %w", err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("update token: %w", ErrNotFound)
	}
	return nil
}

// Verification is a single-use e-mail verification link; _id is the
// SHA-256 of the secret in the link.
type Verification struct {
	ID      string     `bson:"_id"`
	UserID  string     `bson:"user_id"`
	Email   string     `bson:"email"`
	Created time.Time  `bson:"created"`
	Expires time.Time  `bson:"expires"`
	UsedAt  *time.Time `bson:"used_at,omitempty"`
}

// InsertVerification stores a verification link.
func (s *Store) InsertVerification(ctx context.Context, v *Verification) error {
	if _, err := s.verifications.InsertOne(ctx, v); err != nil {
		return fmt.Errorf("insert verification: %w", err)
	}
	return nil
}

// UseVerification marks the link used if it is unused and not expired at
// now, and returns it; of any number of uses at once, one succeeds (once).
func (s *Store) UseVerification(ctx context.Context, id string, now time.Time) (*Verification, error) {
	var v Verification
	err := s.verifications.FindOne(ctx, bson.M{"_id": id, "used_at": nil, "expires": bson.M{"$gt": now}}).Decode(&v)
	if err != nil {
		return nil, fmt.Errorf("use verification: %w", notFound(err))
	}
	first, err := s.once(ctx, "verification:"+id, v.Expires)
	if err != nil {
		return nil, fmt.Errorf("use verification: %w", err)
	}
	if !first {
		return nil, fmt.Errorf("use verification: %w", ErrNotFound)
	}
	if _, err := s.verifications.UpdateOne(ctx, bson.M{"_id": id}, bson.M{"$set": bson.M{"used_at": now}}); err != nil {
		return nil, fmt.Errorf("use verification: %w", err)
	}
	v.UsedAt = &now
	return &v, nil
}

// VerificationByID loads a verification link record.
func (s *Store) VerificationByID(ctx context.Context, id string) (*Verification, error) {
	var v Verification
	if err := s.verifications.FindOne(ctx, bson.M{"_id": id}).Decode(&v); err != nil {
		return nil, fmt.Errorf("load verification: %w", notFound(err))
	}
	return &v, nil
}

// Failed logins of one key (an account, or a name that names none) are
// counted in fixed windows of auth.login_account_window: the n-th failure
// of window w inserts the slot "<key>@<w>#<n>", taking the next n when n
// is taken, so a window's slots are 1..count. An insert with a unique _id
// is the one step the embedded store applies atomically (an $inc is a
// read and then a write there, and concurrent guesses from many addresses
// were under-counted), and every read is by _id. A failure counts in its
// window and the next, so the ceiling holds across a window's end.

// failureSlot is the _id of the n-th failure of key in window w.
func failureSlot(key string, w int64, n int) string { return fmt.Sprintf("%s@%d#%d", key, w, n) }

// failureWindow is the window t falls in, and when it ends.
func failureWindow(t time.Time, window time.Duration) (int64, time.Time) {
	w := t.UnixNano() / int64(window)
	return w, time.Unix(0, (w+1)*int64(window))
}

// failureCount is how many failures key has in window w, up to max: the
// largest n whose slot exists, found by bisection (about log2(max) reads).
func (s *Store) failureCount(ctx context.Context, key string, w int64, max int) (int, error) {
	lo, hi := 0, max
	for lo < hi {
		mid := (lo + hi + 1) / 2
		n, err := s.failures.CountDocuments(ctx, bson.M{"_id": failureSlot(key, w, mid)})
		if err != nil {
			return 0, fmt.Errorf("load login failures: %w", err)
		}
		if n > 0 {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, nil
}

// atCeiling reports whether key has max failures in the window of t and
// the one before it together, and when the window of t ends.
func (s *Store) atCeiling(ctx context.Context, key string, t time.Time, window time.Duration, max int) (bool, time.Time, error) {
	w, end := failureWindow(t, window)
	now, err := s.failureCount(ctx, key, w, max)
	if err != nil || now >= max {
		return now >= max, end, err
	}
	before, err := s.failureCount(ctx, key, w-1, max-now)
	return now+before >= max, end, err
}

// countFailure adds a failure at t to key's count in its window (no
// further than max: the ceiling is reached then).
func (s *Store) countFailure(ctx context.Context, key string, t time.Time, window time.Duration, max int) error {
	w, _ := failureWindow(t, window)
	c, err := s.failureCount(ctx, key, w, max)
	if err != nil {
		return err
	}
	for n := c + 1; n <= max; n++ {
		_, err := s.failures.InsertOne(ctx, bson.M{"_id": failureSlot(key, w, n), "at": t})
		if err == nil {
			return nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return fmt.Errorf("count login failure: %w", err)
		}
	}
	return nil
}

// pruneFailures deletes the failures of the windows before the one
// before t's (whole windows, so that a window's slots stay 1..count), and
// the records of once that expired by t.
func (s *Store) pruneFailures(ctx context.Context, t time.Time, window time.Duration) error {
	w, _ := failureWindow(t, window)
	cutoff := time.Unix(0, (w-1)*int64(window))
	if _, err := s.failures.DeleteMany(ctx, bson.M{"$or": bson.A{bson.M{"at": bson.M{"$lt": cutoff}}, bson.M{"first": bson.M{"$lt": cutoff}}}}); err != nil {
		return fmt.Errorf("prune login failures: %w", err)
	}
	if _, err := s.used.DeleteMany(ctx, bson.M{"expires": bson.M{"$lt": t}}); err != nil {
		return fmt.Errorf("prune used records: %w", err)
	}
	return nil
}
