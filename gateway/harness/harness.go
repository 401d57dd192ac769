// Package harness runs the real toxgate gateway for integration tests: it
// builds the binaries once per test process (or uses the ones `make test`
// built, named by TOXGATE_BIN_DIR), starts the gateway on a free loopback
// port with a temporary data directory, waits until /readyz answers 200, and
// stops it with SIGTERM at the end of the test.
package harness

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binaries are the built programs the harness runs.
type Binaries struct {
	Dir     string // directory holding every binary
	Gateway string // the toxgate gateway
	Modules string // directory of built .wasm modules (may be empty)
}

var (
	buildOnce sync.Once
	built     Binaries
	buildErr  error
)

// RepoRoot is the root of the toxgate source tree.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Build returns the gateway binaries, building them on first use in this
// process unless TOXGATE_BIN_DIR names a directory where `make build` put them.
func Build(t testing.TB) Binaries {
	t.Helper()
	b, err := BuildBinaries()
	if err != nil {
		t.Fatalf("harness: build: %v", err)
	}
	return b
}

// BuildBinaries is Build for programs that are not tests (benchmarks).
func BuildBinaries() (Binaries, error) {
	buildOnce.Do(func() {
		if dir := os.Getenv("TOXGATE_BIN_DIR"); dir != "" {
			built = Binaries{Dir: dir, Gateway: filepath.Join(dir, "toxgate"), Modules: filepath.Join(dir, "modules")}
			if _, err := os.Stat(built.Gateway); err != nil {
				buildErr = fmt.Errorf("TOXGATE_BIN_DIR=%s: %w", dir, err)
			}
			return
		}
		dir, err := os.MkdirTemp("", "toxgate-harness-bin-")
		if err != nil {
			buildErr = err
			return
		}
		built = Binaries{Dir: dir, Gateway: filepath.Join(dir, "toxgate"), Modules: filepath.Join(dir, "modules")}
		buildErr = goBuild(built.Gateway, "./gateway/cmd/toxgate")
		if buildErr == nil {
			if _, err := os.Stat(filepath.Join(RepoRoot(), "plugins", "catalog", "main.go")); err == nil {
				buildErr = goBuild(filepath.Join(dir, "toxgate-catalog"), "./plugins/catalog")
			}
		}
	})
	return built, buildErr
}

func goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// Gateway is a running gateway process.
type Gateway struct {
	URL     string // base URL, e.g. http://127.0.0.1:41234
	DataDir string // its data directory
	Env     []string

	fatalf  func(format string, args ...any)
	errorf  func(format string, args ...any)
	bins    Binaries
	cmd     *exec.Cmd
	logs    *syncBuffer
	stdout  *syncBuffer
	exited  chan struct{}
	waitErr error
	stopped bool
	ownsDir bool // DataDir was made by Launch; Close removes it
}

// Option changes how a gateway is started.
type Option func(*startConfig)

// readyWithin bounds how long a start may take before the harness gives up:
// a gateway with every model module compiles and checks each of them before
// it serves, which takes over a minute on two cores busy with other tests.
const readyWithin = 3 * time.Minute

type startConfig struct {
	allModules bool
	logSink    io.Writer
	env        []string
	dataDir    string
	noReady    bool
	args       []string
	ready      time.Duration
}

// WithEnv adds KEY=VALUE environment settings (TOXGATE_* overrides).
func WithEnv(kv ...string) Option { return func(c *startConfig) { c.env = append(c.env, kv...) } }

// WithAllModules serves every module `make build` built (bin/modules);
// without it the gateway starts with an empty modules directory, which is
// much faster (compiling every module takes seconds).
func WithAllModules() Option { return func(c *startConfig) { c.allModules = true } }

// WithLogSink sends the gateway's log to w instead of keeping it in memory
// (for long benchmarks; Logs and WaitLog then see nothing).
func WithLogSink(w io.Writer) Option { return func(c *startConfig) { c.logSink = w } }

// WithDataDir reuses a data directory (e.g. to restart on the same store).
func WithDataDir(dir string) Option { return func(c *startConfig) { c.dataDir = dir } }

// WithoutReadyWait returns as soon as the gateway listens, without waiting for /readyz.
func WithoutReadyWait() Option { return func(c *startConfig) { c.noReady = true } }

// WithStartWithin changes how long the harness waits for the gateway to
// listen and be ready (default 3 minutes): a large catalog takes longer
// to load, which /readyz waits for.
func WithStartWithin(d time.Duration) Option { return func(c *startConfig) { c.ready = d } }

// Start runs a gateway for the test and stops it when the test ends.
func Start(t testing.TB, opts ...Option) *Gateway {
	t.Helper()
	g, err := Launch(Build(t), opts...)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	g.fatalf, g.errorf = t.Fatalf, t.Errorf
	t.Cleanup(func() { g.Close() })
	return g
}

// Launch starts a gateway outside of a test (for benchmarks and tools); the
// caller must Close it. Its data directory is a new temporary directory,
// which Close removes, unless WithDataDir is given.
func Launch(bins Binaries, opts ...Option) (g *Gateway, err error) {
	sc := startConfig{ready: readyWithin}
	for _, o := range opts {
		o(&sc)
	}
	owned := sc.dataDir == ""
	if owned {
		if sc.dataDir, err = os.MkdirTemp("", "toxgate-gw-"); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				_ = os.RemoveAll(sc.dataDir)
			}
		}()
	}
	modulesDir := bins.Modules
	if _, err := os.Stat(modulesDir); err != nil || !sc.allModules {
		modulesDir = filepath.Join(sc.dataDir, "modules")
		_ = os.MkdirAll(modulesDir, 0o755)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TOXGATE_BIN_DIR=") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"TOXGATE_SERVER_ADDR=127.0.0.1:0",
		"TOXGATE_MONGODB_URI=",
		"TOXGATE_MONGODB_DATA_DIR="+filepath.Join(sc.dataDir, "store"),
		"TOXGATE_MODULES_DIR="+modulesDir,
		"TOXGATE_MODULES_CACHE_DIR="+sharedCacheDir(sc.dataDir),
		"TOXGATE_PLUGINS_PROGRAMS="+pluginPrograms(bins),
		"TOXGATE_AUTH_ADMIN_PASSWORD=admin-password-for-tests",
		"TOXGATE_LOG_FORMAT=json",
		"TOXGATE_CONFIG=",
	)
	env = append(env, sc.env...)
	g = &Gateway{DataDir: sc.dataDir, Env: env, bins: bins, ownsDir: owned}
	g.fatalf = func(format string, args ...any) { err = fmt.Errorf(format, args...); panic(errLaunch) }
	g.errorf = func(format string, args ...any) {}
	defer func() {
		if r := recover(); r != nil && r != errLaunch {
			panic(r)
		}
	}()
	g.start(sc)
	return g, err
}

var errLaunch = fmt.Errorf("launch failed")

var (
	cacheOnce sync.Once
	cacheDir  string
)

// cacheKeep is how long an unused entry stays in the harness's compilation
// cache: entries of modules no build produces any more go after it.
const cacheKeep = 72 * time.Hour

// sharedCacheDir is one wazero compilation cache for every gateway the
// tests start (in the user's cache directory, like Go's build cache), so
// that each module is compiled once, not once per test process. wazero
// writes entries by rename, so processes share it safely; entries not
// written within cacheKeep are removed when a process first uses it.
func sharedCacheDir(fallback string) string {
	cacheOnce.Do(func() {
		base, err := os.UserCacheDir()
		if err != nil {
			return
		}
		d := filepath.Join(base, "toxgate", "test-wazero-cache")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return
		}
		pruneCache(d, time.Now().Add(-cacheKeep))
		cacheDir = d
	})
	if cacheDir == "" {
		return filepath.Join(fallback, "wazero-cache")
	}
	return cacheDir
}

// pruneCache removes the files under dir last written before cutoff.
func pruneCache(dir string, cutoff time.Time) {
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().Before(cutoff) {
			_ = os.Remove(path)
		}
		return nil
	})
}

func pluginPrograms(b Binaries) string {
	var progs []string
	if _, err := os.Stat(filepath.Join(b.Dir, "toxgate-catalog")); err == nil {
		progs = append(progs, "catalog="+filepath.Join(b.Dir, "toxgate-catalog"))
	}
	return strings.Join(progs, ",")
}

func (g *Gateway) start(sc startConfig) {
	t := g
	args := append([]string{"-test-routes"}, sc.args...)
	cmd := exec.Command(g.bins.Gateway, args...)
	cmd.Dir = RepoRoot()
	cmd.Env = g.Env
	g.logs, g.stdout = &syncBuffer{}, &syncBuffer{}
	cmd.Stderr = g.logs
	if sc.logSink != nil {
		cmd.Stderr = sc.logSink
	}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("harness: start gateway: %v", err)
	}
	g.cmd, g.exited, g.stopped = cmd, make(chan struct{}), false
	go func() {
		g.waitErr = cmd.Wait()
		pw.Close()
		close(g.exited)
	}()
	urlCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			g.stdout.Write([]byte(line + "\n"))
			if i := strings.Index(line, " serving on "); i >= 0 && !sent {
				urlCh <- strings.TrimSpace(line[i+len(" serving on "):])
				sent = true
			}
		}
		if !sent {
			close(urlCh)
		}
	}()
	select {
	case u, ok := <-urlCh:
		if !ok {
			<-g.exited
			t.Fatalf("harness: gateway exited before serving (%v); logs:\n%s", g.waitErr, g.logs.String())
		}
		g.URL = u
	case <-time.After(sc.ready):
		g.kill()
		t.Fatalf("harness: gateway did not start within %s; logs:\n%s", sc.ready, g.logs.String())
	}
	if sc.noReady {
		return
	}
	deadline := time.Now().Add(sc.ready)
	for {
		resp, err := http.Get(g.URL + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			if time.Now().After(deadline) {
				g.kill()
				t.Fatalf("harness: not ready within %s: %s\nlogs:\n%s", sc.ready, body, g.logs.String())
			}
		}
		select {
		case <-g.exited:
			t.Fatalf("harness: gateway exited while starting (%v); logs:\n%s", g.waitErr, g.logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Fatalf reports a start failure (used by start through t := g).
func (g *Gateway) Fatalf(format string, args ...any) { g.fatalf(format, args...) }

// Logs returns everything the gateway has written to its log so far.
func (g *Gateway) Logs() string { return g.logs.String() }

// WaitLog waits until the gateway's log matches re or timeout passes, and
// reports whether it matched. Logs arrive through a pipe, so a line written
// just before a response may be read a moment after it.
func (g *Gateway) WaitLog(re *regexp.Regexp, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for !re.MatchString(g.logs.String()) {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-g.logs.changed():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return true
}

// Stdout returns what the gateway printed on standard output (the banner).
func (g *Gateway) Stdout() string { return g.stdout.String() }

// Signal sends sig to the gateway process.
func (g *Gateway) Signal(sig os.Signal) {
	if err := g.cmd.Process.Signal(sig); err != nil {
		g.fatalf("harness: signal %v: %v", sig, err)
	}
}

// Stop sends SIGTERM and waits for the gateway to exit; it returns the exit
// code (0 for a clean stop). Calling it again returns the same result.
func (g *Gateway) Stop() int {
	if g.cmd == nil {
		return -1
	}
	if !g.stopped {
		g.stopped = true
		_ = g.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-g.exited:
		case <-time.After(60 * time.Second):
			g.kill()
			g.errorf("harness: gateway did not stop within 60s after SIGTERM; logs:\n%s", g.logs.String())
		}
	}
	<-g.exited
	return g.cmd.ProcessState.ExitCode()
}

// Close stops the gateway and removes the data directory Launch made for it
// (a directory given with WithDataDir stays). It returns Stop's exit code.
// The removal is best effort: a process of a gateway killed earlier (its
// plugin, say) may still be ending and writing there.
func (g *Gateway) Close() int {
	code := g.Stop()
	if g.ownsDir {
		for try := 0; try < 3 && os.RemoveAll(g.DataDir) != nil; try++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
	return code
}

// Wait waits for the process to exit by itself (after Signal) and returns its exit code.
func (g *Gateway) Wait(timeout time.Duration) int {
	select {
	case <-g.exited:
		g.stopped = true
		return g.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		g.fatalf("harness: gateway still running after %s", timeout)
		return -1
	}
}

func (g *Gateway) kill() {
	_ = g.cmd.Process.Kill()
	<-g.exited
	g.stopped = true
}

// PID is the gateway process's id (e.g. to read /proc/<pid>/status).
func (g *Gateway) PID() int { return g.cmd.Process.Pid }

// Kill9 kills the gateway with SIGKILL (no shutdown of any kind) and waits
// for it to be gone; Relaunch starts it again.
func (g *Gateway) Kill9() { g.kill() }

// Relaunch starts a stopped or killed gateway again on the same data
// directory and waits until it is ready.
func (g *Gateway) Relaunch() {
	<-g.exited
	g.start(startConfig{ready: readyWithin})
}

var storeURIRE = regexp.MustCompile(`embedded store started(?:","uri":"| uri=)([^"\s]+)`)

// StoreURI is the URI of the gateway's embedded store, read from its log
// (the latest start's).
func (g *Gateway) StoreURI() string {
	m := storeURIRE.FindAllStringSubmatch(g.logs.String(), -1)
	if len(m) == 0 {
		g.fatalf("harness: no embedded store in the logs:\n%s", g.logs.String())
		return ""
	}
	return m[len(m)-1][1]
}

// Restart stops the gateway and starts it again on the same data directory.
func (g *Gateway) Restart() {
	if code := g.Stop(); code != 0 {
		g.fatalf("harness: exit code %d on restart; logs:\n%s", code, g.logs.String())
	}
	g.start(startConfig{ready: readyWithin})
}

// Do sends a request and returns the status, headers and body.
func (g *Gateway) Do(ctx context.Context, method, path string, header http.Header, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, g.URL+path, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

type syncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	notify chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notify != nil {
		close(s.notify)
		s.notify = nil
	}
	return s.buf.Write(p)
}

// changed returns a channel closed at the next write.
func (s *syncBuffer) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notify == nil {
		s.notify = make(chan struct{})
	}
	return s.notify
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
