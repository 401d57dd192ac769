package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The shipped configs/toxgate.yaml documents every key with its default.
func TestShippedConfigIsTheDefaults(t *testing.T) {
	path := filepath.Join("..", "..", "configs", "toxgate.yaml")
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatalf("load shipped config: %v", err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("configs/toxgate.yaml differs from Default():\n file: %+v\n code: %+v", cfg, Default())
	}
	raw, _ := os.ReadFile(path)
	for _, k := range Keys() {
		leaf := k.Name[strings.LastIndex(k.Name, ".")+1:]
		if !strings.Contains(string(raw), leaf+":") {
			t.Errorf("configs/toxgate.yaml does not document %s", k.Name)
		}
	}
}

func TestEnvOverridesFile(t *testing.T) {
	p := writeFile(t, "server:\n  addr: 127.0.0.1:9000\n  read_timeout: 5s\n")
	cfg, err := Load(p, []string{"TOXGATE_SERVER_ADDR=127.0.0.1:9100", "TOXGATE_AUTH_ROLES=a, b", "TOXGATE_PLUGINS_PROGRAMS=catalog=/x/y,other=/z", "HOME=/root"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Addr != "127.0.0.1:9100" {
		t.Errorf("addr = %q, want env value", cfg.Server.Addr)
	}
	if cfg.Server.ReadTimeout != 5*time.Second {
		t.Errorf("read_timeout = %s, want 5s from file", cfg.Server.ReadTimeout)
	}
	if !reflect.DeepEqual(cfg.Auth.Roles, []string{"a", "b"}) {
		t.Errorf("roles = %v", cfg.Auth.Roles)
	}
	if cfg.Plugins.Programs["other"] != "/z" || cfg.Plugins.Programs["catalog"] != "/x/y" {
		t.Errorf("programs = %v", cfg.Plugins.Programs)
	}
}

// A bad value stops the start with an error that names the key.
func TestBadValuesNameTheKey(t *testing.T) {
	cases := []struct {
		name, file string
		env        []string
		want       string
	}{
		{"bad duration in file", "server:\n  read_timeout: soon\n", nil, "server.read_timeout"},
		{"bad int in env", "", []string{"TOXGATE_SERVER_MAX_BODY_BYTES=lots"}, "TOXGATE_SERVER_MAX_BODY_BYTES: server.max_body_bytes: invalid integer"},
		{"bad bool", "modules:\n  watch: maybe\n", nil, "modules.watch: invalid boolean"},
		{"unknown key", "server:\n  adr: x\n", nil, "unknown key server.adr"},
		{"unknown section", "nope:\n  x: 1\n", nil, "unknown key nope"},
		{"negative size", "server:\n  max_body_bytes: -1\n", nil, "server.max_body_bytes: must be a positive integer"},
		{"bad addr", "", []string{"TOXGATE_SERVER_ADDR=8080"}, "server.addr: invalid listen address"},
		{"bad level", "log:\n  level: loud\n", nil, "log.level"},
		{"bad format", "", []string{"TOXGATE_LOG_FORMAT=xml"}, "log.format"},
		{"bad uri", "", []string{"TOXGATE_MONGODB_URI=postgres://x"}, "mongodb.uri"},
		{"unknown store backend", "", []string{"TOXGATE_STORE_BACKEND=oracle"}, "store.backend: must be sqlite or postgresql"},
		{"postgresql without url", "", []string{"TOXGATE_STORE_BACKEND=postgresql"}, "store.postgres_url"},
		{"postgresql and mongodb", "store:\n  backend: postgresql\n  postgres_url: postgres://db/toxgate\n", []string{"TOXGATE_MONGODB_URI=mongodb://m"}, "store.backend: postgresql starts"},
		{"zero timeout", "modules:\n  timeout: 0s\n", nil, "modules.timeout: must be positive"},
		{"bad map entry", "", []string{"TOXGATE_PLUGINS_PROGRAMS=catalog"}, "plugins.programs: invalid entry"},
		{"not yaml", "server: [\n", nil, "not valid YAML"},
		{"oidc without audience", "oidc:\n  issuer: https://kc/realms/x\n", nil, "oidc.audience"},
		{"bad egress entry", "", []string{"TOXGATE_EGRESS_ALLOW=10.0.0.5,10.0.0.0/33"}, `egress.allow: egress: allow entry "10.0.0.0/33"`},
		{"negative redirects", "egress:\n  max_redirects: -1\n", nil, "egress.max_redirects"},
		{"no load workers", "", []string{"TOXGATE_DATASTORE_LOAD_WORKERS=0"}, "datastore.load_workers: must be a positive integer"},
		{"every interface without public_url", "", []string{"TOXGATE_SERVER_ADDR=0.0.0.0:8080"}, "server.public_url: must be set when server.addr (0.0.0.0:8080) listens on every interface"},
		{"no host without public_url", "", []string{"TOXGATE_SERVER_ADDR=:8080"}, "server.public_url: must be set"},
		{"IPv6 any without public_url", "", []string{"TOXGATE_SERVER_ADDR=[::]:8080"}, "server.public_url: must be set"},
		{"public_url not http", "", []string{"TOXGATE_SERVER_PUBLIC_URL=javascript:alert(1)"}, "server.public_url: must be an http:// or https:// URL"},
		{"public_url without host", "", []string{"TOXGATE_SERVER_PUBLIC_URL=https:///x"}, "server.public_url: must be an http:// or https:// URL"},
		{"bad trusted proxy", "", []string{"TOXGATE_SERVER_TRUSTED_PROXIES=10.0.0.0/8,proxy.example"}, `server.trusted_proxies: "proxy.example"`},
		{"max delay below delay", "auth:\n  login_delay: 2s\n  login_max_delay: 1s\n", nil, "auth.login_max_delay: must be at least auth.login_delay"},
		{"zero account ceiling", "", []string{"TOXGATE_AUTH_LOGIN_ACCOUNT_MAX_FAILS=0"}, "auth.login_account_max_fails: must be positive"},
		{"negative catalog memory limit", "", []string{"TOXGATE_CATALOG_MEMORY_LIMIT=-1"}, "catalog.memory_limit: must not be negative"},
		{"zero throttle entries", "", []string{"TOXGATE_AUTH_LOGIN_THROTTLE_ENTRIES=0"}, "auth.login_throttle_entries: must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = writeFile(t, tc.file)
			}
			_, err := Load(path, tc.env)
			if err == nil {
				t.Fatalf("no error, want one naming %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.yaml"), nil)
	if err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}

func TestUnknownEnvIsReported(t *testing.T) {
	got := UnknownEnv([]string{"TOXGATE_SERVR_ADDR=x", "TOXGATE_SERVER_ADDR=y", "TOXGATE_CONFIG=z", "PATH=/bin"})
	if !reflect.DeepEqual(got, []string{"TOXGATE_SERVR_ADDR"}) {
		t.Fatalf("UnknownEnv = %v", got)
	}
}

// The production example loads without error.
func TestProductionExampleLoads(t *testing.T) {
	cfg, err := Load(filepath.Join("..", "..", "configs", "production.example.yaml"), nil)
	if err != nil {
		t.Fatalf("production example: %v", err)
	}
	if cfg.MongoDB.URI == "" || !cfg.Auth.SecureCookies || cfg.Log.Format != "json" {
		t.Errorf("production example not applied: %+v", cfg)
	}
}

// Every interface with a public URL, and trusted proxies as a list.
func TestPublicURLAndTrustedProxies(t *testing.T) {
	cfg, err := Load("", []string{"TOXGATE_SERVER_ADDR=0.0.0.0:8080", "TOXGATE_SERVER_PUBLIC_URL=https://tox.example.org/",
		"TOXGATE_SERVER_TRUSTED_PROXIES=10.0.0.0/8, 192.168.1.7,fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Server.TrustedProxies; len(got) != 3 || got[1] != "192.168.1.7" {
		t.Fatalf("trusted proxies %q", got)
	}
}

// catalog.memory_limit reaches the catalog plugin's settings.
func TestCatalogMemoryLimitReachesPlugin(t *testing.T) {
	cfg, err := Load("", []string{"TOXGATE_CATALOG_MEMORY_LIMIT=1073741824"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.PluginSettings().Catalog.MemoryLimit; got != 1<<30 {
		t.Fatalf("plugin memory limit %d, want %d", got, 1<<30)
	}
	if got := Default().PluginSettings().Catalog.MemoryLimit; got != 0 {
		t.Fatalf("default plugin memory limit %d, want 0 (none)", got)
	}
}
