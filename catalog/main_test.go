package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"toxgate/catalog/ckan"
	"toxgate/gateway/identity"
	"toxgate/gateway/store"
)

var (
	testURI string
	dbSeq   atomic.Int64
)

func TestMain(m *testing.M) {
	// TOXGATE_CATALOG_TEST_STORE names an embedded store's data directory
	// to run on instead of a new one, kept afterwards (BenchmarkLoadFromStore
	// loads the catalog "toxgate catalog generate" wrote there).
	dir, keep := os.Getenv("TOXGATE_CATALOG_TEST_STORE"), true
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "catalog-test-*"); err != nil {
			panic(err)
		}
		keep = false
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := store.StartEmbedded(context.Background(), dir, quiet)
	if err != nil {
		panic(err)
	}
	testURI = e.URI()
	code := m.Run()
	_ = e.Close(context.Background())
	if !keep {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

// fixture is a catalog on a fresh database with users and one org
// ("tox-lab") where admin, editor and member hold those roles.
type fixture struct {
	t     testing.TB
	db    *mongo.Database
	svc   *Service
	store *store.Store
	orgID string
	users map[string]Caller
}

const site = "http://catalog.test"

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureAt(t, testURI, fmt.Sprintf("cat_%s_%d", t.Name(), dbSeq.Add(1)))
}

// newFixtureAt is newFixture on database dbName of the store at uri.
func newFixtureAt(t testing.TB, uri, dbName string) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Options{URI: uri, Database: dbName})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	f := &fixture{t: t, db: st.DB(), store: st, users: map[string]Caller{}}
	for _, u := range []struct {
		name string
		sys  bool
	}{{"sysadmin", true}, {"admin", false}, {"editor", false}, {"member", false}, {"outsider", false}} {
		id := newID()
		err := identity.NewStore(f.db).InsertUser(ctx, &identity.User{ID: id, Name: u.name, Email: u.name + "@example.org",
			EmailKey: u.name + "@example.org", Fullname: "The " + u.name, State: identity.StateActive, Sysadmin: u.sys,
			Roles: []string{}, Created: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		f.users[u.name] = Caller{UserID: id, Name: u.name, Sysadmin: u.sys}
	}
	// "admin" creates the organization, which needs the switch on; the
	// tests then run with the defaults
	f.svc = f.open(Options{Auth: AuthOptions{UserCreateOrganizations: true}})
	org := f.ok("admin", "organization_create", map[string]any{"name": "tox-lab", "title": "Toxicology Lab"})
	f.orgID = org["id"].(string)
	f.ok("admin", "organization_member_create", map[string]any{"id": "tox-lab", "username": "editor", "role": "editor"})
	f.ok("admin", "organization_member_create", map[string]any{"id": "tox-lab", "username": "member", "role": "member"})
	f.svc = f.open(Options{})
	return f
}

// call runs an action as the named user ("" = anonymous) and returns the
// result as a client decodes it from JSON.
func (f *fixture) call(user, action string, data map[string]any) (any, *ckan.Error) {
	f.t.Helper()
	return callSvc(f.t, f.svc, f.users[user], action, data)
}

func callSvc(t testing.TB, svc *Service, c Caller, action string, data map[string]any) (any, *ckan.Error) {
	t.Helper()
	if data == nil {
		data = map[string]any{}
	}
	b, _ := json.Marshal(data)
	parsed, perr := ckan.ParseData(ckan.Request{Method: "POST", ContentType: "application/json", Body: b}, false)
	if perr != nil {
		t.Fatalf("%s: parse: %v", action, perr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := svc.Do(ctx, Request{Action: action, Caller: c, Data: parsed, SiteURL: site})
	if err != nil {
		ce := ckan.AsError(err)
		if ce.Type == ckan.TypeInternal {
			t.Fatalf("%s: internal error: %v", action, err)
		}
		return nil, ce
	}
	raw, merr := ckan.Marshal(res)
	if merr != nil {
		t.Fatalf("%s: marshal: %v", action, merr)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: result is not JSON: %v", action, err)
	}
	return out, nil
}

// ok calls and fails the test on error, returning an object result.
func (f *fixture) ok(user, action string, data map[string]any) map[string]any {
	f.t.Helper()
	res, err := f.call(user, action, data)
	if err != nil {
		f.t.Fatalf("%s as %q: %v", action, user, err)
	}
	m, _ := res.(map[string]any)
	return m
}

// list calls and returns a list result.
func (f *fixture) list(user, action string, data map[string]any) []any {
	f.t.Helper()
	res, err := f.call(user, action, data)
	if err != nil {
		f.t.Fatalf("%s as %q: %v", action, user, err)
	}
	l, _ := res.([]any)
	return l
}

// fail calls and expects an error of the given HTTP status.
func (f *fixture) fail(user, action string, data map[string]any, status int) *ckan.Error {
	f.t.Helper()
	res, err := f.call(user, action, data)
	if err == nil {
		f.t.Fatalf("%s as %q: want status %d, got result %v", action, user, status, res)
	}
	if err.Status != status {
		f.t.Fatalf("%s as %q: want status %d, got %d %v", action, user, status, err.Status, err)
	}
	return err
}

// errJSON is the "error" object of the envelope as JSON text.
func errJSON(e *ckan.Error) string {
	b, _ := json.Marshal(e.Object())
	return string(b)
}

// open starts a catalog on the fixture's database, as another gateway's
// plugin would: quiet, with the users of the identity store unless opts
// names a directory.
func (f *fixture) open(opts Options) *Service {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if opts.Users == nil {
		opts.Users = identity.NewStore(f.db)
	}
	svc, err := New(ctx, f.db, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return svc
}

// withOptions reopens the fixture's catalog with opts.
func (f *fixture) withOptions(opts Options) { f.svc = f.open(opts) }
