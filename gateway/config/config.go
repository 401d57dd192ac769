// Package config loads the gateway's configuration: defaults, then a YAML
// file, then TOXGATE_* environment variables, each key checked and every bad
// value reported with the key's name.
package config

import (
	"time"
)

// Config is the whole configuration of a toxgate gateway. Each leaf has a
// dotted key (yaml tags joined by dots, e.g. "server.addr") and an
// environment variable (TOXGATE_ plus the key in upper case with dots as
// underscores, e.g. TOXGATE_SERVER_ADDR).
type Config struct {
	Server  Server  `yaml:"server"`
	Log     Log     `yaml:"log"`
	MongoDB MongoDB `yaml:"mongodb"`
	Plugins Plugins `yaml:"plugins"`
	Modules Modules `yaml:"modules"`
	Auth    Auth    `yaml:"auth"`
	SMTP    SMTP    `yaml:"smtp"`
	OIDC    OIDC    `yaml:"oidc"`
	Metrics Metrics `yaml:"metrics"`
}

// Server holds the HTTP listener settings and limits.
type Server struct {
	Addr            string        `yaml:"addr" doc:"listen address (host:port)"`
	PublicURL       string        `yaml:"public_url" doc:"external base URL, used in links (empty: http://<addr>)"`
	ReadTimeout     time.Duration `yaml:"read_timeout" doc:"max time to read a whole request"`
	WriteTimeout    time.Duration `yaml:"write_timeout" doc:"max time to write a response"`
	IdleTimeout     time.Duration `yaml:"idle_timeout" doc:"keep-alive idle time"`
	MaxBodyBytes    int           `yaml:"max_body_bytes" doc:"largest request body accepted (413 beyond)"`
	MaxHeaderBytes  int           `yaml:"max_header_bytes" doc:"largest request header block (431 beyond)"`
	MaxConns        int           `yaml:"max_conns" doc:"max concurrent connections"`
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout" doc:"how long in-flight requests may take at shutdown"`
}

// Log sets the format and level of the structured logs.
type Log struct {
	Level  string `yaml:"level" doc:"debug, info, warn or error"`
	Format string `yaml:"format" doc:"text or json"`
	Access bool   `yaml:"access" doc:"write one access-log line per request"`
}

// MongoDB selects the store.
type MongoDB struct {
	URI         string `yaml:"uri" doc:"MongoDB URI; empty starts the embedded store"`
	Database    string `yaml:"database" doc:"database name"`
	DataDir     string `yaml:"data_dir" doc:"embedded store data directory"`
	MaxPoolSize int    `yaml:"max_pool_size" doc:"connection pool size (0: driver default)"`
}

// Plugins lists the plugin programs the gateway starts.
type Plugins struct {
	Programs       map[string]string `yaml:"programs" doc:"plugin name to program path (env: name=path,...)"`
	Checksums      map[string]string `yaml:"checksums" doc:"plugin name to expected SHA-256 of its program (optional)"`
	HealthInterval time.Duration     `yaml:"health_interval" doc:"how often each plugin is pinged"`
	RestartBackoff time.Duration     `yaml:"restart_backoff" doc:"first delay before restarting a crashed plugin (doubles, max 30s)"`
	Watch          bool              `yaml:"watch" doc:"reload a plugin when its program changes on disk"`
}

// Modules configures the WebAssembly model host.
type Modules struct {
	Dir            string        `yaml:"dir" doc:"directory of .wasm model modules"`
	CacheDir       string        `yaml:"cache_dir" doc:"on-disk compilation cache"`
	PoolSize       int           `yaml:"pool_size" doc:"instances per module"`
	Timeout        time.Duration `yaml:"timeout" doc:"default per-call deadline"`
	MaxMemoryPages int           `yaml:"max_memory_pages" doc:"memory cap per instance, in 64 KiB pages"`
	MaxInputBytes  int           `yaml:"max_input_bytes" doc:"largest model input accepted"`
	MaxUploadBytes int           `yaml:"max_upload_bytes" doc:"largest module accepted by POST /admin/modules"`
	Watch          bool          `yaml:"watch" doc:"hot-load modules when the directory changes"`
	RequireToken   bool          `yaml:"require_token" doc:"model calls need a token of a user with the models role"`
}

// Auth configures accounts, sessions and tokens.
type Auth struct {
	AdminUsername string        `yaml:"admin_username" doc:"first sysadmin created on an empty store"`
	AdminEmail    string        `yaml:"admin_email" doc:"e-mail of the first sysadmin"`
	AdminPassword string        `yaml:"admin_password" doc:"initial password of the first sysadmin (empty: generated and printed once)"`
	Roles         []string      `yaml:"roles" doc:"roles an administrator may grant besides sysadmin, models, notebooks"`
	SessionTTL    time.Duration `yaml:"session_ttl" doc:"web session lifetime"`
	TokenCacheTTL time.Duration `yaml:"token_cache_ttl" doc:"how long a checked token is cached (revocation delay bound)"`
	VerifyTTL     time.Duration `yaml:"verify_ttl" doc:"lifetime of an e-mail verification link"`
	LoginMaxFails int           `yaml:"login_max_fails" doc:"failed logins before throttling"`
	LoginLockout  time.Duration `yaml:"login_lockout" doc:"throttling period after too many failures"`
	SecureCookies bool          `yaml:"secure_cookies" doc:"mark cookies Secure (set behind TLS)"`
	TokenMaxTTL   time.Duration `yaml:"token_max_ttl" doc:"longest API token lifetime (0: no limit)"`
	BcryptCost    int           `yaml:"bcrypt_cost" doc:"password hashing cost"`
}

// SMTP configures outgoing mail (e-mail verification). Empty host: links are logged.
type SMTP struct {
	Host     string `yaml:"host" doc:"SMTP server host (empty: verification links go to the log)"`
	Port     int    `yaml:"port" doc:"SMTP server port"`
	Username string `yaml:"username" doc:"SMTP user"`
	Password string `yaml:"password" doc:"SMTP password"`
	From     string `yaml:"from" doc:"sender address"`
}

// OIDC configures acceptance of bearer JWTs from an identity provider.
type OIDC struct {
	Issuer     string `yaml:"issuer" doc:"issuer URL (empty: OIDC off)"`
	JWKSURL    string `yaml:"jwks_url" doc:"JWKS URL (empty: <issuer>/protocol/openid-connect/certs)"`
	Audience   string `yaml:"audience" doc:"required aud"`
	RolesClaim string `yaml:"roles_claim" doc:"dotted path of the roles claim"`
	UserClaim  string `yaml:"user_claim" doc:"claim holding the user name"`
}

// Metrics sets where the Prometheus metrics are served and who may read them.
type Metrics struct {
	Addr  string `yaml:"addr" doc:"serve /metrics on this host:port only, not on server.addr (empty: on server.addr)"`
	Token string `yaml:"token" doc:"bearer token a scraper must send for /metrics (empty: none needed)"`
}

// Default returns the configuration used when nothing is set.
func Default() Config {
	return Config{
		Server: Server{
			Addr:            "127.0.0.1:8080",
			ReadTimeout:     30 * time.Second,
			WriteTimeout:    60 * time.Second,
			IdleTimeout:     120 * time.Second,
			MaxBodyBytes:    8 << 20,
			MaxHeaderBytes:  16 << 10,
			MaxConns:        10000,
			ShutdownTimeout: 15 * time.Second,
		},
		Log:     Log{Level: "info", Format: "text", Access: true},
		MongoDB: MongoDB{Database: "toxgate", DataDir: "./data/store"},
		Plugins: Plugins{
			Programs:       map[string]string{"catalog": "./bin/toxgate-catalog"},
			Checksums:      map[string]string{},
			HealthInterval: 2 * time.Second,
			RestartBackoff: 250 * time.Millisecond,
			Watch:          true,
		},
		Modules: Modules{
			Dir:            "./bin/modules",
			CacheDir:       "./data/wazero-cache",
			PoolSize:       4,
			Timeout:        10 * time.Second,
			MaxMemoryPages: 2048,
			MaxInputBytes:  4 << 20,
			MaxUploadBytes: 64 << 20,
			Watch:          true,
			RequireToken:   true,
		},
		Auth: Auth{
			AdminUsername: "admin",
			AdminEmail:    "admin@localhost",
			Roles:         []string{},
			SessionTTL:    12 * time.Hour,
			TokenCacheTTL: 2 * time.Second,
			VerifyTTL:     24 * time.Hour,
			LoginMaxFails: 5,
			LoginLockout:  5 * time.Minute,
			BcryptCost:    10,
		},
		SMTP: SMTP{Port: 587},
		OIDC: OIDC{RolesClaim: "realm_access.roles", UserClaim: "preferred_username"},
	}
}
