package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"toxgate/gateway/config"
	"toxgate/gateway/oidcprovider"
	"toxgate/gateway/server"
)

const clientUsage = `usage: toxgate [-config file] client <command> [flags]

commands:
  create      --name N --redirect-uri U [--redirect-uri U ...] [--post-logout-uri U ...]
              [--public] [--role R ...]
  list        [--json]
  delete      NAME                  (its tokens stop working)
  rotate-key                        (a new signing key signs from now on; the old
                                     keys stay published until their tokens expire)

The name is the client_id. A confidential client (the default: JupyterHub,
oauth2-proxy, Grafana...) gets a secret, printed once and stored hashed; a
public client (--public: a native or command-line app) has none and must use
PKCE. With --role, only users holding one of those roles may sign in to the
client (e.g. --role notebooks); others get a page that says why.

The commands call the admin API of a running gateway:
  --url URL [--token T]   a sysadmin's API token (also $TOXGATE_ADMIN_TOKEN) or, on
                          the same machine, the key the gateway writes next to its
                          embedded store
  (default)               the running gateway at server.public_url or server.addr,
                          with that key
`

// clientCommand administers OpenID Connect clients: toxgate client create|list|delete|rotate-key.
func clientCommand(cfgPath string, args []string, stdout, stderr io.Writer) int {
	cmd, fs, gwURL, token, code, ok := adminFlags("client", clientUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	var in oidcprovider.NewClient
	var redirects, logouts, roles stringList
	asJSON := false
	switch cmd {
	case "create":
		fs.StringVar(&in.Name, "name", "", "client name, which is its client_id (lowercase letters, digits, - and _)")
		fs.Var(&redirects, "redirect-uri", "redirect URI (repeat or comma-separate)")
		fs.Var(&logouts, "post-logout-uri", "where RP-initiated logout may return (repeat or comma-separate)")
		fs.BoolVar(&in.Public, "public", false, "a public client: no secret, PKCE required")
		fs.Var(&roles, "role", "a role a user needs to sign in (repeat or comma-separate; none: every user)")
	case "list":
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	case "delete", "rotate-key":
	default:
		fmt.Fprintf(stderr, "toxgate client: unknown command %q\n\n%s", cmd, clientUsage)
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
	api, err := clientAPI(ctx, cfg, *gwURL, *token)
	if err != nil {
		fmt.Fprintf(stderr, "toxgate client: %v\n", err)
		return 1
	}
	switch cmd {
	case "create":
		in.RedirectURIs, in.PostLogoutRedirectURIs, in.Roles = redirects, logouts, roles
		var out oidcprovider.CreatedClient
		if err := api.doJSON(ctx, http.MethodPost, oidcprovider.ClientsAPIPrefix, in, &out); err != nil {
			fmt.Fprintf(stderr, "toxgate client create: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "client %q registered\n  issuer:        %s\n  client_id:     %s\n", out.Client.ID, out.Issuer, out.Client.ID)
		if out.ClientSecret != "" {
			fmt.Fprintf(stdout, "  client_secret: %s\n(the secret is shown only this once)\n", out.ClientSecret)
		} else {
			fmt.Fprintln(stdout, "  public client: no secret, PKCE (S256) required")
		}
	case "list":
		var out struct {
			Clients []oidcprovider.Client `json:"clients"`
			Issuer  string                `json:"issuer"`
		}
		if err := api.doJSON(ctx, http.MethodGet, oidcprovider.ClientsAPIPrefix, nil, &out); err != nil {
			fmt.Fprintf(stderr, "toxgate client list: %v\n", err)
			return 1
		}
		if asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(out)
			return 0
		}
		fmt.Fprintf(stdout, "issuer %s\n", out.Issuer)
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CLIENT_ID\tTYPE\tROLES\tREDIRECT URIS")
		for _, c := range out.Clients {
			kind := "confidential"
			if c.Public {
				kind = "public"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, kind, rolesText(c.Roles), strings.Join(c.RedirectURIs, " "))
		}
		_ = tw.Flush()
	case "delete":
		if fs.NArg() != 1 {
			fmt.Fprint(stderr, "usage: toxgate client delete NAME\n")
			return 2
		}
		if err := api.doJSON(ctx, http.MethodDelete, oidcprovider.ClientsAPIPrefix+"/"+url.PathEscape(fs.Arg(0)), nil, nil); err != nil {
			fmt.Fprintf(stderr, "toxgate client delete: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "client %q deleted\n", fs.Arg(0))
	case "rotate-key":
		var out struct {
			Kid string `json:"kid"`
		}
		if err := api.doJSON(ctx, http.MethodPost, oidcprovider.KeyRotateAPIPath, nil, &out); err != nil {
			fmt.Fprintf(stderr, "toxgate client rotate-key: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "new signing key %s\n", out.Kid)
	}
	return 0
}

// adminFlags starts an admin subcommand (toxgate user|client CMD): the
// usage for help (code 2 with no command, 0 when asked), else the command,
// its flag set and the --url and --token flags every such command takes.
func adminFlags(group, usage string, args []string, stdout, stderr io.Writer) (cmd string, fs *flag.FlagSet, gwURL, token *string, code int, ok bool) {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return "", nil, nil, nil, 2, false
		}
		return "", nil, nil, nil, 0, false
	}
	cmd = args[0]
	fs = flag.NewFlagSet("toxgate "+group+" "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	gwURL = fs.String("url", "", "base URL of a running gateway")
	token = fs.String("token", os.Getenv("TOXGATE_ADMIN_TOKEN"), "a sysadmin's API token for --url")
	return cmd, fs, gwURL, token, 0, true
}

// clientAPI is the admin API the client commands call: --url, else the
// running gateway on this machine with its key.
func clientAPI(ctx context.Context, cfg config.Config, gwURL, token string) (*httpAdmin, error) {
	key := localAdminKey(cfg)
	if gwURL != "" {
		return adminAt(gwURL, token, key)
	}
	if key == "" {
		return nil, errors.New("no running gateway on this machine: start it, or pass --url and --token")
	}
	h := localGateway(cfg, key)
	if !h.reachable(ctx) {
		return nil, fmt.Errorf("no gateway answers at %s: start it, or pass --url and --token", h.base)
	}
	return h, nil
}

// localAdminKey is the key a gateway on this machine wrote beside its
// embedded store ("" with an external MongoDB, or when there is none).
func localAdminKey(cfg config.Config) string {
	if cfg.MongoDB.URI != "" {
		return ""
	}
	b, err := os.ReadFile(server.AdminKeyFile(cfg.MongoDB.DataDir))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// adminAt is the admin API at gwURL, called with token, else with the
// local gateway's key.
func adminAt(gwURL, token, key string) (*httpAdmin, error) {
	if token == "" {
		token = key
	}
	if token == "" {
		return nil, errors.New("--url needs --token (a sysadmin's API token) or the key of a gateway on this machine")
	}
	return &httpAdmin{base: strings.TrimRight(gwURL, "/"), token: token}, nil
}

// localGateway is the admin API of the gateway this configuration serves
// (server.public_url, else server.addr), called with key.
func localGateway(cfg config.Config, key string) *httpAdmin {
	base := cfg.Server.PublicURL
	if base == "" {
		base = "http://" + cfg.Server.Addr
	}
	return &httpAdmin{base: strings.TrimRight(base, "/"), token: key}
}

// doJSON calls the admin API and decodes its JSON answer into out (nil: ignored).
func (h *httpAdmin) doJSON(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := adminClient.Do(req)
	if err != nil {
		return fmt.Errorf("call %s: %w", h.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("read answer of %s: %w", h.base, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
			return fmt.Errorf("%s (HTTP %d)", e.Error.Message, resp.StatusCode)
		}
		return fmt.Errorf("HTTP %d from %s", resp.StatusCode, h.base+path)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode answer of %s: %w", h.base, err)
	}
	return nil
}
