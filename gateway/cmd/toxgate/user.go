package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"toxgate/gateway/config"
	"toxgate/gateway/identity"
	"toxgate/gateway/identityhttp"
	"toxgate/gateway/store"
)

const userUsage = `usage: toxgate [-config file] user <command> [flags]

commands:
  create     --username U --email E --first-name F --last-name L [--password P] [--role R ...] [--active]
  list       [--json]
  set-roles  USER [ROLE ...]          (replaces the roles; none clears them)
  disable    USER                     (logins, sessions and tokens stop working)
  enable     USER

Where the command acts (see docs/identity.md):
  --url URL [--token T]   the admin API of a running gateway, with a sysadmin's API
                          token (also $TOXGATE_ADMIN_TOKEN) or, on the same machine,
                          the key the gateway writes next to its embedded store
  (default, embedded store) the running gateway at server.public_url or server.addr,
                          with that key; when no gateway runs, the store itself
  (default, mongodb.uri)  the MongoDB store directly

Roles: sysadmin, models, notebooks and those in auth.roles. Without --password
a password is generated and printed. New accounts are pending: at first login
the user verifies the e-mail address and changes the password (--active skips
both).
`

// userAdmin is where user commands act: a running gateway's admin API or the store.
type userAdmin interface {
	list(ctx context.Context) ([]identityhttp.AdminUser, error)
	create(ctx context.Context, req identityhttp.CreateUserRequest) (identityhttp.AdminUser, error)
	setRoles(ctx context.Context, name string, roles []string) (identityhttp.AdminUser, error)
	setState(ctx context.Context, name string, enable bool) (identityhttp.AdminUser, error)
	close()
}

type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

// userCommand administers accounts: toxgate user create|list|set-roles|disable|enable.
func userCommand(cfgPath string, args []string, stdout, stderr io.Writer) int {
	cmd, fs, gwURL, token, code, ok := adminFlags("user", userUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	var req identityhttp.CreateUserRequest
	var roles stringList
	asJSON := false
	switch cmd {
	case "create":
		fs.StringVar(&req.Name, "username", "", "user name (lowercase letters, digits, - and _)")
		fs.StringVar(&req.Email, "email", "", "e-mail address")
		fs.StringVar(&req.FirstName, "first-name", "", "first name")
		fs.StringVar(&req.LastName, "last-name", "", "last name")
		fs.StringVar(&req.Password, "password", "", "initial password (default: generated and printed)")
		fs.Var(&roles, "role", "role to grant (repeat or comma-separate)")
		fs.BoolVar(&req.Active, "active", false, "skip the first-login steps")
	case "list":
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	case "set-roles", "disable", "enable":
		fs.Var(&roles, "role", "role (set-roles; repeat or comma-separate)")
	default:
		fmt.Fprintf(stderr, "toxgate user: unknown command %q\n\n%s", cmd, userUsage)
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	cfg, err := config.Load(cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "toxgate: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, where, err := openAdmin(ctx, cfg, *gwURL, *token, cmd == "create")
	if err != nil {
		fmt.Fprintf(stderr, "toxgate user: %v\n", err)
		return 1
	}
	defer admin.close()

	fail := func(err error) int {
		fmt.Fprintf(stderr, "toxgate user %s: %v\n", cmd, err)
		return 1
	}
	switch cmd {
	case "create":
		if req.Name == "" || req.Email == "" {
			fmt.Fprintln(stderr, "toxgate user create: --username and --email are required")
			return 2
		}
		generated := req.Password == ""
		if generated {
			if req.Password, err = identity.GeneratePassword(16); err != nil {
				return fail(err)
			}
		}
		req.Roles = roles
		u, err := admin.create(ctx, req)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "created user %s (%s, state %s, roles: %s) via %s\n", u.Name, u.Email, u.State, rolesText(u.Roles), where)
		if generated {
			fmt.Fprintf(stdout, "initial password: %s\n", req.Password)
		}
		if u.State == identity.StatePending {
			fmt.Fprintln(stdout, "at first login the user verifies the e-mail address and chooses a new password")
		}
	case "list":
		users, err := admin.list(ctx)
		if err != nil {
			return fail(err)
		}
		if asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return exitOn(enc.Encode(users), stderr)
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSTATE\tROLES\tEMAIL\tFULL NAME\tLAST LOGIN")
		for _, u := range users {
			last := "never"
			if u.LastLogin != nil {
				last = u.LastLogin.UTC().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", u.Name, u.State, rolesText(u.Roles), u.Email, u.Fullname, last)
		}
		return exitOn(tw.Flush(), stderr)
	case "set-roles", "disable", "enable":
		if fs.NArg() < 1 {
			fmt.Fprintf(stderr, "toxgate user %s: name the user\n", cmd)
			return 2
		}
		name := fs.Arg(0)
		var u identityhttp.AdminUser
		if cmd == "set-roles" {
			u, err = admin.setRoles(ctx, name, append(append([]string{}, fs.Args()[1:]...), roles...))
		} else {
			u, err = admin.setState(ctx, name, cmd == "enable")
		}
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "user %s: state %s, roles: %s\n", u.Name, u.State, rolesText(u.Roles))
	}
	return 0
}

func exitOn(err error, stderr io.Writer) int {
	if err != nil {
		fmt.Fprintf(stderr, "toxgate user: %v\n", err)
		return 1
	}
	return 0
}

func rolesText(roles []string) string {
	if len(roles) == 0 {
		return "none"
	}
	return strings.Join(roles, ",")
}

// openAdmin picks where the commands act; see userUsage.
// Only create may make a new embedded store: the other commands refuse
// when none exists, rather than leave an empty one behind.
func openAdmin(ctx context.Context, cfg config.Config, gwURL, token string, mayCreateStore bool) (userAdmin, string, error) {
	key := localAdminKey(cfg)
	if gwURL != "" {
		h, err := adminAt(gwURL, token, key)
		if err != nil {
			return nil, "", err
		}
		return h, gwURL, nil
	}
	if key != "" {
		if h := localGateway(cfg, key); h.reachable(ctx) {
			return h, "the running gateway at " + h.base, nil
		}
		// A key left by a gateway that did not stop cleanly: use the store.
	}
	if cfg.MongoDB.URI == "" && cfg.Store.Backend == config.StoreSQLite && !mayCreateStore {
		if _, err := os.Stat(cfg.MongoDB.DataDir); errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("no embedded store at %s: no gateway has run with this configuration here (check -config and mongodb.data_dir, or pass --url)", cfg.MongoDB.DataDir)
		}
	}
	st, err := store.Open(ctx, store.Options{URI: cfg.MongoDB.URI, DataDir: cfg.MongoDB.DataDir, Database: cfg.MongoDB.Database,
		Backend: cfg.Store.Backend, PostgresURL: cfg.Store.PostgresURL,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		if cfg.MongoDB.URI == "" {
			return nil, "", fmt.Errorf("open the embedded store at %s (is a gateway using it? then pass --url): %w", cfg.MongoDB.DataDir, err)
		}
		return nil, "", err
	}
	ist := identity.NewStore(st.DB())
	if err := ist.EnsureIndexes(ctx); err != nil {
		_ = st.Close(context.Background())
		return nil, "", err
	}
	svc := identity.NewService(ist, identity.Options{Auth: cfg.Auth, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	where := "the store at " + cfg.MongoDB.DataDir
	if cfg.MongoDB.URI != "" {
		where = "MongoDB (mongodb.uri)"
	}
	return &storeAdmin{svc: svc, st: st}, where, nil
}

// storeAdmin acts on the store directly.
type storeAdmin struct {
	svc *identity.Service
	st  *store.Store
}

func (s *storeAdmin) list(ctx context.Context) ([]identityhttp.AdminUser, error) {
	users, err := s.svc.Store().Users(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make([]identityhttp.AdminUser, len(users))
	for i, u := range users {
		out[i] = identityhttp.AdminView(u)
	}
	sortUsers(out)
	return out, nil
}

func sortUsers(us []identityhttp.AdminUser) {
	slices.SortFunc(us, func(a, b identityhttp.AdminUser) int { return strings.Compare(a.Name, b.Name) })
}

func (s *storeAdmin) create(ctx context.Context, r identityhttp.CreateUserRequest) (identityhttp.AdminUser, error) {
	u, err := s.svc.CreateUser(ctx, identity.NewUser{Name: r.Name, Email: r.Email, FirstName: r.FirstName, LastName: r.LastName,
		Password: r.Password, Roles: r.Roles, Active: r.Active})
	if err != nil {
		return identityhttp.AdminUser{}, err
	}
	return identityhttp.AdminView(u), nil
}

func (s *storeAdmin) setRoles(ctx context.Context, name string, roles []string) (identityhttp.AdminUser, error) {
	u, err := s.svc.SetRoles(ctx, name, roles)
	if err != nil {
		return identityhttp.AdminUser{}, notFoundName(err, name)
	}
	return identityhttp.AdminView(u), nil
}

func (s *storeAdmin) setState(ctx context.Context, name string, enable bool) (identityhttp.AdminUser, error) {
	f := s.svc.Disable
	if enable {
		f = s.svc.Enable
	}
	u, err := f(ctx, name)
	if err != nil {
		return identityhttp.AdminUser{}, notFoundName(err, name)
	}
	return identityhttp.AdminView(u), nil
}

func notFoundName(err error, name string) error {
	if errors.Is(err, identity.ErrNotFound) {
		return fmt.Errorf("no user %q", name)
	}
	return err
}

func (s *storeAdmin) close() { _ = s.st.Close(context.Background()) }

// httpAdmin calls a gateway's admin API.
type httpAdmin struct {
	base, token string
}

func (h *httpAdmin) close() {}

var adminClient = &http.Client{Timeout: 60 * time.Second}

// reachable reports whether a gateway answers at base.
func (h *httpAdmin) reachable(ctx context.Context) bool {
	u, err := url.Parse(h.base)
	if err != nil {
		return false
	}
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func (h *httpAdmin) do(ctx context.Context, method, path string, body any) (identityhttp.AdminUser, []identityhttp.AdminUser, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return identityhttp.AdminUser{}, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return identityhttp.AdminUser{}, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := adminClient.Do(req)
	if err != nil {
		return identityhttp.AdminUser{}, nil, fmt.Errorf("call %s: %w", h.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return identityhttp.AdminUser{}, nil, fmt.Errorf("read answer of %s: %w", h.base, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
			return identityhttp.AdminUser{}, nil, fmt.Errorf("%s (HTTP %d)", e.Error.Message, resp.StatusCode)
		}
		return identityhttp.AdminUser{}, nil, fmt.Errorf("HTTP %d from %s", resp.StatusCode, h.base+path)
	}
	var out struct {
		User  identityhttp.AdminUser   `json:"user"`
		Users []identityhttp.AdminUser `json:"users"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return identityhttp.AdminUser{}, nil, fmt.Errorf("decode answer of %s: %w", h.base, err)
	}
	return out.User, out.Users, nil
}

func (h *httpAdmin) list(ctx context.Context) ([]identityhttp.AdminUser, error) {
	_, us, err := h.do(ctx, http.MethodGet, identityhttp.AdminAPIPrefix, nil)
	return us, err
}

func (h *httpAdmin) create(ctx context.Context, r identityhttp.CreateUserRequest) (identityhttp.AdminUser, error) {
	u, _, err := h.do(ctx, http.MethodPost, identityhttp.AdminAPIPrefix, r)
	return u, err
}

func (h *httpAdmin) setRoles(ctx context.Context, name string, roles []string) (identityhttp.AdminUser, error) {
	if roles == nil {
		roles = []string{}
	}
	u, _, err := h.do(ctx, http.MethodPost, identityhttp.AdminAPIPrefix+"/"+url.PathEscape(name)+"/roles", map[string]any{"roles": roles})
	return u, err
}

func (h *httpAdmin) setState(ctx context.Context, name string, enable bool) (identityhttp.AdminUser, error) {
	op := "/disable"
	if enable {
		op = "/enable"
	}
	u, _, err := h.do(ctx, http.MethodPost, identityhttp.AdminAPIPrefix+"/"+url.PathEscape(name)+op, nil)
	return u, err
}
