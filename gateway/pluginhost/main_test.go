package pluginhost

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"toxgate/gateway/config"
	"toxgate/gateway/identity"
	"toxgate/gateway/store"
	"toxgate/plugins/contract"
)

var (
	pluginBin string
	mongoURI  string
	dbSeq     atomic.Int64
	quiet     = slog.New(slog.NewTextHandler(debugOut(), nil))
)

// TestMain builds the real plugin binary once and starts the embedded store.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pluginhost-test-*")
	if err != nil {
		panic(err)
	}
	pluginBin = filepath.Join(dir, "toxgate-catalog")
	build := exec.Command("go", "build", "-o", pluginBin, "toxgate/plugins/catalog")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("build plugin: " + err.Error())
	}
	e, err := store.StartEmbedded(context.Background(), filepath.Join(dir, "data"), quiet)
	if err != nil {
		panic(err)
	}
	mongoURI = e.URI()
	code := m.Run()
	_ = e.Close(context.Background())
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// env is a running host with the catalog plugin behind a real fasthttp
// server on loopback. Tokens map to users the way the gateway core's auth
// will: "Authorization: <token>", "Authorization: Bearer <token>" or
// "X-CKAN-API-Key: <token>"; unknown tokens stay anonymous.
type env struct {
	t      *testing.T
	host   *Host
	url    string
	db     *mongo.Database
	tokens map[string]Identity
	client *http.Client
}

type envOpts struct {
	cfg    func(*Config)
	dbName string
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	return newEnvTB(t, t, o)
}

// newEnvB starts an env for a benchmark on database db.
func newEnvB(b *testing.B, _ *testing.T, db string) *env {
	return newEnvTB(b, nil, envOpts{dbName: db, cfg: func(c *Config) { c.Transport = *benchTransport }})
}

// openDB opens database name on the test store.
func openDB(ctx context.Context, name string) (*store.Store, error) {
	return store.Open(ctx, store.Options{URI: mongoURI, Database: name})
}

func newEnvTB(t testing.TB, tt *testing.T, o envOpts) *env {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	name := o.dbName
	if name == "" {
		name = fmt.Sprintf("host_%d", dbSeq.Add(1))
	}
	st, err := store.Open(ctx, store.Options{URI: mongoURI, Database: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	e := &env{t: tt, db: st.DB(), tokens: map[string]Identity{}, client: &http.Client{Timeout: 30 * time.Second}}
	for _, u := range []struct {
		name string
		sys  bool
	}{{"sysadmin", true}, {"editor", false}, {"reader", false}} {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", dbSeq.Add(1))
		if _, err := e.db.Collection("users").InsertOne(ctx, map[string]any{"_id": id, "name": u.name, "email": u.name + "@example.org",
			"fullname": "", "about": "", "state": "active", "sysadmin": u.sys, "roles": []string{}, "created": time.Now()}); err != nil {
			t.Fatal(err)
		}
		e.tokens["tok-"+u.name] = Identity{UserID: id, Name: u.name, Sysadmin: u.sys}
	}
	cfg := Config{
		Plugins:        []PluginConfig{{Name: "catalog", Path: pluginBin}},
		MongoURI:       mongoURI,
		MongoDatabase:  name,
		Users:          identity.NewStore(e.db),
		HealthInterval: time.Second,
		RestartBackoff: 50 * time.Millisecond,
		LogLevel:       cmp.Or(os.Getenv("PLUGINHOST_DEBUG_LEVEL"), "warn"),
		Settings:       testSettings(),
	}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	e.host, err = New(cfg, quiet, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.host.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.host.Close(context.Background()) })
	if err := e.host.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}

	r := router.New()
	handle := func(ctx *fasthttp.RequestCtx) {
		tok := string(ctx.Request.Header.Peek("Authorization"))
		tok = strings.TrimPrefix(tok, "Bearer ")
		if tok == "" {
			tok = string(ctx.Request.Header.Peek("X-CKAN-API-Key"))
		}
		e.host.HandleAction(ctx, ctx.UserValue("name").(string), e.tokens[tok])
	}
	r.GET("/api/3/action/{name}", handle)
	r.POST("/api/3/action/{name}", handle)
	r.GET("/api/action/{name}", handle)
	r.POST("/api/action/{name}", handle)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: r.Handler}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	e.url = "http://" + ln.Addr().String()
	return e
}

// reply is an HTTP reply as a client sees it.
type reply struct {
	status int
	ctype  string
	raw    []byte
	body   map[string]any
}

func (r reply) result() any { return r.body["result"] }

func (r reply) errType() string {
	if e, ok := r.body["error"].(map[string]any); ok {
		s, _ := e["__type"].(string)
		return s
	}
	return ""
}

// do sends a request; headers alternate "key", "value".
func (e *env) do(method, path, ctype string, body []byte, headers ...string) reply {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), raw: raw}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

// ckanapi posts like the ckanapi client: JSON body, key in both headers.
func (e *env) ckanapi(action, token string, data any) reply {
	e.t.Helper()
	b, _ := json.Marshal(data)
	var h []string
	if token != "" {
		h = []string{"X-CKAN-API-Key", token, "Authorization", token}
	}
	return e.do("POST", "/api/action/"+action, "application/json", b, h...)
}

// mustOK fails unless r is a 200 success envelope.
func mustOK(t *testing.T, r reply) any {
	t.Helper()
	if r.status != 200 || r.body["success"] != true {
		t.Fatalf("want success, got %d %s", r.status, r.raw)
	}
	return r.result()
}

// pid is the catalog plugin's serving process.
func (e *env) pid() int {
	for _, s := range e.host.Status() {
		if s.Name == "catalog" {
			return s.PID
		}
	}
	return 0
}

// debugOut is where the tests' host logs go: the file named by
// PLUGINHOST_DEBUG_LOG (with PLUGINHOST_DEBUG_LEVEL=info the plugins' own
// logs too, e.g. "catalog loaded"), else nowhere.
func debugOut() io.Writer {
	if p := os.Getenv("PLUGINHOST_DEBUG_LOG"); p != "" {
		f, err := os.Create(p)
		if err == nil {
			return f
		}
	}
	return io.Discard
}

// testSettings is the default configuration's plugin settings without a
// DataStore.
func testSettings() contract.Settings {
	s := config.Default().PluginSettings()
	s.DataStore.URL, s.DataStore.Dir = "", ""
	return s
}
