package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"toxgate/internal/egress"
	"toxgate/plugins/contract"
)

// EnvPrefix starts every environment variable that overrides a key.
const EnvPrefix = "TOXGATE_"

// Load returns the defaults, overridden by the YAML file at path (if path is
// not empty) and then by environment variables from environ (os.Environ()
// form). Every error names the offending key.
func Load(path string, environ []string) (Config, error) {
	cfg := Default()
	fields := leaves(reflect.ValueOf(&cfg).Elem(), "")
	if path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("config: %w", err)
		}
		if err := applyYAML(raw, fields); err != nil {
			return cfg, fmt.Errorf("config %s: %w", path, err)
		}
	}
	if err := applyEnv(environ, fields); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// Key describes one configuration key, for documentation and the CLI.
type Key struct {
	Name string // dotted key, e.g. server.addr
	Env  string // environment variable
	Doc  string
	Kind string // string, int, bool, duration, list, map
}

// Keys lists every configuration key in a stable order.
func Keys() []Key {
	cfg := Default()
	fields := leaves(reflect.ValueOf(&cfg).Elem(), "")
	out := make([]Key, 0, len(fields))
	for name, f := range fields {
		out = append(out, Key{Name: name, Env: envName(name), Doc: f.doc, Kind: kindName(f.v)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

type field struct {
	v   reflect.Value
	doc string
}

// leaves maps each dotted key to its settable field.
func leaves(v reflect.Value, prefix string) map[string]field {
	out := map[string]field{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name := sf.Tag.Get("yaml")
		if name == "" || name == "-" {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		fv := v.Field(i)
		if fv.Kind() == reflect.Struct && fv.Type() != reflect.TypeOf(time.Duration(0)) {
			for k, f := range leaves(fv, key) {
				out[k] = f
			}
			continue
		}
		out[key] = field{v: fv, doc: sf.Tag.Get("doc")}
	}
	return out
}

func envName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func kindName(v reflect.Value) string {
	switch {
	case v.Type() == reflect.TypeOf(time.Duration(0)):
		return "duration"
	case v.Kind() == reflect.Slice:
		return "list"
	case v.Kind() == reflect.Map:
		return "map"
	case v.Kind() == reflect.Bool:
		return "bool"
	case v.Kind() == reflect.Int:
		return "int"
	default:
		return "string"
	}
}

func applyYAML(raw []byte, fields map[string]field) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("not valid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil // empty file
	}
	return walk(doc.Content[0], "", fields)
}

func walk(n *yaml.Node, prefix string, fields map[string]field) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s must be a mapping", n.Line, nonEmpty(prefix, "the top level"))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := k.Value
		if prefix != "" {
			key = prefix + "." + k.Value
		}
		f, ok := fields[key]
		if !ok {
			if hasPrefix(fields, key+".") {
				if err := walk(val, key, fields); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("line %d: unknown key %s", k.Line, key)
		}
		if err := setNode(f.v, val, key); err != nil {
			return fmt.Errorf("line %d: %w", val.Line, err)
		}
	}
	return nil
}

func setNode(v reflect.Value, n *yaml.Node, key string) error {
	switch v.Kind() {
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			if n.Kind == yaml.ScalarNode {
				return setString(v, n.Value, key)
			}
			return fmt.Errorf("%s: want a list", key)
		}
		items := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s: list items must be scalars", key)
			}
			items = append(items, c.Value)
		}
		v.Set(reflect.ValueOf(items))
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
				v.Set(reflect.ValueOf(map[string]string{}))
				return nil
			}
			return fmt.Errorf("%s: want a mapping of name: value", key)
		}
		m := map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i+1].Kind != yaml.ScalarNode {
				return fmt.Errorf("%s.%s: want a scalar", key, n.Content[i].Value)
			}
			m[n.Content[i].Value] = n.Content[i+1].Value
		}
		v.Set(reflect.ValueOf(m))
		return nil
	default:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: want a single value", key)
		}
		if n.Tag == "!!null" {
			return setString(v, "", key)
		}
		return setString(v, n.Value, key)
	}
}

// setString parses s into v according to v's type.
func setString(v reflect.Value, s, key string) error {
	switch {
	case v.Type() == reflect.TypeOf(time.Duration(0)):
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%s: invalid duration %q (use e.g. 30s, 5m)", key, s)
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%s: invalid integer %q", key, s)
		}
		v.SetInt(int64(n))
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%s: invalid boolean %q (use true or false)", key, s)
		}
		v.SetBool(b)
	case v.Kind() == reflect.String:
		v.SetString(s)
	case v.Kind() == reflect.Slice:
		var items []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				items = append(items, p)
			}
		}
		if items == nil {
			items = []string{}
		}
		v.Set(reflect.ValueOf(items))
	case v.Kind() == reflect.Map:
		m := map[string]string{}
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			name, val, ok := strings.Cut(p, "=")
			if !ok || strings.TrimSpace(name) == "" {
				return fmt.Errorf("%s: invalid entry %q (want name=value)", key, p)
			}
			m[strings.TrimSpace(name)] = strings.TrimSpace(val)
		}
		v.Set(reflect.ValueOf(m))
	default:
		return fmt.Errorf("%s: unsupported type %s", key, v.Type())
	}
	return nil
}

func applyEnv(environ []string, fields map[string]field) error {
	byEnv := make(map[string]string, len(fields))
	for k := range fields {
		byEnv[envName(k)] = k
	}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if key, ok := byEnv[name]; ok {
			if err := setString(fields[key].v, val, key); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return nil
}

// UnknownEnv lists TOXGATE_ variables in environ that match no key, so that
// a misspelt override can be warned about.
func UnknownEnv(environ []string) []string {
	known := map[string]bool{EnvPrefix + "CONFIG": true}
	for _, k := range Keys() {
		known[k.Env] = true
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix) && !known[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func hasPrefix(fields map[string]field, p string) bool {
	for k := range fields {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

func nonEmpty(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// Validate checks values that parse but make no sense, naming the key.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, a...)...))
	}
	if _, _, err := net.SplitHostPort(c.Server.Addr); err != nil {
		bad("server.addr", "invalid listen address %q (want host:port)", c.Server.Addr)
	}
	positive := map[string]time.Duration{
		"server.read_timeout": c.Server.ReadTimeout, "server.write_timeout": c.Server.WriteTimeout,
		"server.idle_timeout": c.Server.IdleTimeout, "server.shutdown_timeout": c.Server.ShutdownTimeout,
		"plugins.health_interval": c.Plugins.HealthInterval, "plugins.restart_backoff": c.Plugins.RestartBackoff,
		"modules.timeout": c.Modules.Timeout, "auth.session_ttl": c.Auth.SessionTTL,
		"auth.verify_ttl": c.Auth.VerifyTTL, "catalog.upload_grace": c.Catalog.UploadGrace,
		"catalog.sweep_interval":       c.Catalog.SweepInterval,
		"datastore.sql_timeout":        c.DataStore.SQLTimeout,
		"datastore.load_fetch_timeout": c.DataStore.LoadFetchTimeout, "egress.idle_timeout": c.Egress.IdleTimeout,
		"files.tus.expiry": c.Files.Tus.Expiry, "files.tus.clean_interval": c.Files.Tus.CleanInterval,
	}
	for _, k := range sortedKeys(positive) {
		if positive[k] <= 0 {
			bad(k, "must be positive, got %s", positive[k])
		}
	}
	if c.Catalog.MemoryLimit < 0 {
		bad("catalog.memory_limit", "must not be negative, got %d", c.Catalog.MemoryLimit)
	}
	if c.Catalog.IndexSnapshotEvery < 0 {
		bad("catalog.index_snapshot_every", "must not be negative, got %s", c.Catalog.IndexSnapshotEvery)
	}
	for k, n := range map[string]int{
		"server.max_body_bytes": c.Server.MaxBodyBytes, "server.max_header_bytes": c.Server.MaxHeaderBytes,
		"server.max_conns": c.Server.MaxConns, "modules.pool_size": c.Modules.PoolSize,
		"modules.max_memory_pages": c.Modules.MaxMemoryPages, "modules.max_input_bytes": c.Modules.MaxInputBytes,
		"modules.max_upload_bytes": c.Modules.MaxUploadBytes, "server.max_body_memory": c.Server.MaxBodyMemory,
		"catalog.max_resource_bytes": c.Catalog.MaxResourceBytes, "catalog.dcat_per_page": c.Catalog.DCATPerPage,
		"catalog.activity_list_limit": c.Catalog.ActivityListLimit, "catalog.activity_list_limit_max": c.Catalog.ActivityListLimitMax,
		"catalog.max_uploads_per_user": c.Catalog.MaxUploadsPerUser, "catalog.reply_cache_entries": c.Catalog.ReplyCacheEntries, "jobs.max_per_user": c.Jobs.MaxPerUser,
		"catalog.max_versions_per_dataset":  c.Catalog.MaxVersionsPerDataset,
		"files.tus.max_unfinished_per_user": c.Files.Tus.MaxUnfinishedPerUser, "files.tus.max_pending_bytes_per_user": c.Files.Tus.MaxPendingBytesPerUser,
	} {
		if n <= 0 {
			bad(k, "must be a positive integer, got %d", n)
		}
	}
	for k, n := range map[string]int{
		"datastore.max_rows_per_call": c.DataStore.MaxRowsPerCall, "datastore.max_columns": c.DataStore.MaxColumns,
		"datastore.max_cell_bytes": c.DataStore.MaxCellBytes, "datastore.max_table_bytes": c.DataStore.MaxTableBytes,
		"datastore.max_load_bytes":      c.DataStore.MaxLoadBytes,
		"datastore.sql_max_value_bytes": c.DataStore.SQLMaxValueBytes, "datastore.sql_max_length": c.DataStore.SQLMaxLength,
		"datastore.max_result_bytes": c.DataStore.MaxResultBytes, "datastore.sqlite_heap_limit": c.DataStore.SQLiteHeapLimit,
		"datastore.pg_work_mem": c.DataStore.PGWorkMem, "datastore.pg_temp_file_limit": c.DataStore.PGTempFileLimit,
		"datastore.sql_calls_per_user": c.DataStore.SQLCallsPerUser, "datastore.sql_calls_anonymous": c.DataStore.SQLCallsAnonymous,
		"datastore.max_q_words": c.DataStore.MaxQWords, "datastore.max_q_bytes": c.DataStore.MaxQBytes,
		"datastore.max_filter_values": c.DataStore.MaxFilterValues, "datastore.quota_bytes": c.DataStore.QuotaBytes,
		"datastore.quota_tables": c.DataStore.QuotaTables, "datastore.quota_rows": c.DataStore.QuotaRows,
		"datastore.load_workers": c.DataStore.LoadWorkers, "datastore.load_workers_per_user": c.DataStore.LoadWorkersPerUser,
		"datastore.load_queue_per_user": c.DataStore.LoadQueuePerUser,
	} {
		if n <= 0 {
			bad(k, "must be a positive integer, got %d", n)
		}
	}
	if c.DataStore.StructureIndexMaxRows < 0 {
		bad("datastore.structure_index_max_rows", "must not be negative, got %d", c.DataStore.StructureIndexMaxRows)
	}
	if c.DataStore.SQLMaxValueBytes > 0 && c.DataStore.SQLMaxValueBytes < c.DataStore.MaxCellBytes {
		bad("datastore.sql_max_value_bytes", "must be at least datastore.max_cell_bytes (%d), got %d", c.DataStore.MaxCellBytes, c.DataStore.SQLMaxValueBytes)
	}
	if c.Egress.MaxRedirects < 0 {
		bad("egress.max_redirects", "must not be negative, got %d", c.Egress.MaxRedirects)
	}
	if _, err := egress.New(egress.Options{Allow: c.Egress.Allow}); err != nil {
		bad("egress.allow", "%v", err)
	}
	if c.Server.MaxHeaderBytes > 0 && c.Server.MaxHeaderBytes < 1024 {
		bad("server.max_header_bytes", "must be at least 1024, got %d", c.Server.MaxHeaderBytes)
	}
	if c.Modules.MaxMemoryPages > 65536 {
		bad("modules.max_memory_pages", "at most 65536 (4 GiB), got %d", c.Modules.MaxMemoryPages)
	}
	if c.Modules.RunSlots < 0 || c.Modules.RunSlots > 4096 {
		bad("modules.run_slots", "must be between 0 and 4096, got %d", c.Modules.RunSlots)
	}
	if c.Modules.LoadWorkers < 0 || c.Modules.LoadWorkers > 256 {
		bad("modules.load_workers", "must be between 0 and 256, got %d", c.Modules.LoadWorkers)
	}
	if c.Modules.CallerRunning < 0 {
		bad("modules.caller_running", "must not be negative, got %d", c.Modules.CallerRunning)
	}
	if _, err := c.Modules.Weights(); err != nil {
		bad("modules.role_weights", "%v", err)
	}
	switch c.Plugins.Transport {
	case contract.TransportNetRPC, contract.TransportGRPC:
	default:
		bad("plugins.transport", "must be %s or %s, got %q", contract.TransportNetRPC, contract.TransportGRPC, c.Plugins.Transport)
	}
	switch c.Server.ReadyStatus {
	case ReadyAll, ReadyCore:
	default:
		bad("server.ready_status", "must be %s or %s, got %q", ReadyAll, ReadyCore, c.Server.ReadyStatus)
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "must be debug, info, warn or error, got %q", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "must be text or json, got %q", c.Log.Format)
	}
	switch c.Files.Backend {
	case "dir", "mongodb":
	case "s3":
		if c.Files.S3.Bucket == "" {
			bad("files.s3.bucket", "must be set when files.backend is s3")
		}
	default:
		bad("files.backend", "must be dir, s3 or mongodb, got %q", c.Files.Backend)
	}
	switch c.Files.Download {
	case "proxy", "redirect":
	default:
		bad("files.download", "must be proxy or redirect, got %q", c.Files.Download)
	}
	if n := c.Files.S3.PartBytes; n < 5<<20 || n > 5<<30 {
		bad("files.s3.part_bytes", "must be between 5 MiB and 5 GiB (S3's part sizes), got %d", n)
	}
	if n := c.Files.S3.PartBytes; c.Files.Backend == "s3" && int64(n)*10000 < int64(c.Catalog.MaxResourceBytes) {
		bad("files.s3.part_bytes", "%d bytes times S3's 10000 parts of one upload is less than catalog.max_resource_bytes (%d)", n, c.Catalog.MaxResourceBytes)
	}
	if d := c.Files.S3.PresignTTL; d <= 0 || d > 7*24*time.Hour {
		bad("files.s3.presign_ttl", "must be positive and at most 7 days (S3's limit), got %s", d)
	}
	if e := c.Files.S3.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("files.s3.endpoint", "must be an http:// or https:// URL, got %q", e)
		}
	}
	if c.MongoDB.Database == "" {
		bad("mongodb.database", "must not be empty")
	}
	if c.MongoDB.URI == "" && c.MongoDB.DataDir == "" {
		bad("mongodb.data_dir", "must not be empty when mongodb.uri is empty")
	}
	switch c.Store.Backend {
	case StoreSQLite:
	case StorePostgreSQL:
		if u := c.Store.PostgresURL; !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
			bad("store.postgres_url", "must be a postgres:// or postgresql:// URL when store.backend is postgresql")
		}
		if c.MongoDB.URI != "" {
			bad("store.backend", "postgresql starts the embedded store on PostgreSQL; mongodb.uri names another store: set one of them")
		}
	default:
		bad("store.backend", "must be sqlite or postgresql, got %q", c.Store.Backend)
	}
	if c.MongoDB.URI != "" && !strings.HasPrefix(c.MongoDB.URI, "mongodb://") && !strings.HasPrefix(c.MongoDB.URI, "mongodb+srv://") {
		bad("mongodb.uri", "must start with mongodb:// or mongodb+srv://")
	}
	if u := c.DataStore.URL; u != "" && !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
		bad("datastore.url", "must start with postgres:// or postgresql:// (empty: embedded engine)")
	}
	if c.MongoDB.MaxPoolSize < 0 {
		bad("mongodb.max_pool_size", "must not be negative")
	}
	for name := range c.Plugins.Checksums {
		if _, ok := c.Plugins.Programs[name]; !ok {
			bad("plugins.checksums", "checksum for unknown plugin %q", name)
		}
	}
	if c.Auth.BcryptCost < 4 || c.Auth.BcryptCost > 31 {
		bad("auth.bcrypt_cost", "must be between 4 and 31, got %d", c.Auth.BcryptCost)
	}
	for k, n := range map[string]int{"auth.login_max_fails": c.Auth.LoginMaxFails,
		"auth.login_account_max_fails": c.Auth.LoginAccountMaxFails, "auth.login_throttle_entries": c.Auth.LoginThrottleEntries} {
		if n <= 0 {
			bad(k, "must be positive, got %d", n)
		}
	}
	for k, d := range map[string]time.Duration{"auth.login_delay": c.Auth.LoginDelay, "auth.login_account_window": c.Auth.LoginAccountWindow} {
		if d <= 0 {
			bad(k, "must be positive, got %s", d)
		}
	}
	if c.Auth.LoginMaxDelay < c.Auth.LoginDelay {
		bad("auth.login_max_delay", "must be at least auth.login_delay (%s), got %s", c.Auth.LoginDelay, c.Auth.LoginMaxDelay)
	}
	c.validatePublicURL(bad)
	if c.Auth.AdminUsername == "" {
		bad("auth.admin_username", "must not be empty")
	}
	if c.SMTP.Host != "" && (c.SMTP.Port <= 0 || c.SMTP.Port > 65535) {
		bad("smtp.port", "must be a port number, got %d", c.SMTP.Port)
	}
	if c.SMTP.Host != "" && c.SMTP.From == "" {
		bad("smtp.from", "must be set when smtp.host is set")
	}
	if c.OIDC.Issuer != "" && c.OIDC.Audience == "" {
		bad("oidc.audience", "must be set when oidc.issuer is set")
	}
	if p := c.OIDCProvider; p.Enabled {
		for _, d := range []struct {
			key string
			v   time.Duration
		}{{"oidc_provider.access_token_ttl", p.AccessTokenTTL}, {"oidc_provider.id_token_ttl", p.IDTokenTTL},
			{"oidc_provider.refresh_token_ttl", p.RefreshTokenTTL}, {"oidc_provider.auth_request_ttl", p.AuthRequestTTL},
			{"oidc_provider.key_rotation", p.KeyRotation}} {
			if d.v < time.Second {
				bad(d.key, "must be at least 1s, got %s", d.v)
			}
		}
		if p.MaxRequestBytes < 1024 {
			bad("oidc_provider.max_request_bytes", "must be at least 1024, got %d", p.MaxRequestBytes)
		}
		if p.MaxClients < 1 {
			bad("oidc_provider.max_clients", "must be at least 1, got %d", p.MaxClients)
		}
	}
	if c.Metrics.Addr != "" {
		if _, _, err := net.SplitHostPort(c.Metrics.Addr); err != nil {
			bad("metrics.addr", "must be host:port, got %q", c.Metrics.Addr)
		} else if c.Metrics.Addr == c.Server.Addr {
			bad("metrics.addr", "must differ from server.addr (leave it empty to serve /metrics there)")
		}
	}
	if c.Metrics.Token != "" && len(c.Metrics.Token) < 16 {
		bad("metrics.token", "must be at least 16 characters")
	}
	return errors.Join(errs...)
}

// validatePublicURL checks server.public_url and server.trusted_proxies.
// Links in e-mails and the URLs of uploaded files are made from
// server.public_url, else from the listen address, never from a request's
// Host header; a gateway listening on every interface has no address to
// name, so it needs server.public_url.
func (c Config) validatePublicURL(bad func(key, format string, a ...any)) {
	if u := c.Server.PublicURL; u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil || p.RawQuery != "" || p.Fragment != "" {
			bad("server.public_url", "must be an http:// or https:// URL with a host and no query, got %q", u)
		}
	} else if host, _, err := net.SplitHostPort(c.Server.Addr); err == nil {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			bad("server.public_url", "must be set when server.addr (%s) listens on every interface: links in e-mails and upload URLs are made from it", c.Server.Addr)
		}
	}
	for _, p := range c.Server.TrustedProxies {
		if _, _, err := net.ParseCIDR(p); err != nil && net.ParseIP(p) == nil {
			bad("server.trusted_proxies", "%q is neither an IP address nor a CIDR range", p)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
